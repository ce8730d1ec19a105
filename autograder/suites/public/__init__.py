"""Public tests: shown to students in full and run by `course check`."""
