"""Where the course's files are: the one place that computes it.

``PACKAGE_DIR`` is this package (the grader's code, with its catalogue and suites). ``ROOT`` is
the course checkout beside it (``solutions/``, ``exercises/``, ``docs/``, ``examples/``), or the
folder named by the ``COURSE_ROOT`` environment variable: a package installed from a wheel, or a
course kept apart from the tool, then still finds its files.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: The grading plan recorded once per grader version (autograder/grading/plan_file.py): in the
#: suites folder, which no worker can see, because it holds the hidden tests' inputs.
PLAN_FILE = PACKAGE_DIR / "suites" / ".grading-plan.pickle"


def course_root() -> Path:
    """``$COURSE_ROOT`` when set (resolved), else the folder that holds this package."""
    override = os.environ.get("COURSE_ROOT")
    return Path(override).resolve() if override else PACKAGE_DIR.parent


ROOT = course_root()
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
