"""The ``course`` command: argument parsing and printing; the work is done elsewhere."""

from autograder.cli.app import main

__all__ = ["main"]
