"""The graded suites: ``public/`` (shipped to students, run by `course check`) and ``hidden/``
(never shipped). Each topic module is an ordinary pytest module; see :mod:`autograder.authoring.suite`."""
