"""``python -m autograder.cli``: the ``course`` command."""

import sys

from autograder.cli import main

sys.exit(main())
