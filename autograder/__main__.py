"""``python -m autograder``: the ``course`` command."""

import sys

from autograder.cli.app import main

sys.exit(main())
