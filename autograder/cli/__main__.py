"""``python -m autograder.cli``: the ``course`` command."""

import sys

from autograder.cli.app import main

sys.exit(main())
