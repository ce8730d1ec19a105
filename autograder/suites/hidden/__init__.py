"""Hidden tests: graded, never shipped to students, never print their inputs."""
