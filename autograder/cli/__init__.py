"""The ``course`` command: argument parsing and printing; the work is done elsewhere."""

import sys


def main(argv: list[str] | None = None) -> int:
    """The ``course`` console script. A Ctrl-C that no command handles itself (in the second
    its imports take, say) exits 130 with one line, no traceback."""
    try:
        from autograder.cli.app import main as run

        return run(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


__all__ = ["main"]
