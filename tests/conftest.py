"""Shared fixtures: one sandbox slot per test process (pytest-xdist workers each get one)."""

from __future__ import annotations

import os
import tempfile

import pytest

from autograder.driver.slot import Slot

# Each test process (an xdist worker) gets a phase lock of its own (autograder.grading.
# phase_lock): the repository's own tests are not adversaries of each other, and one worker's
# hidden sweep would otherwise hold the other's public checks for its whole length. Set before
# any grader starts, so the `course` processes the tests start inherit it too. The tests of
# the host-wide lock itself (tests/test_sweeps.py) set a common one explicitly.
os.environ.setdefault("COURSE_PHASE_LOCK", os.path.join(
    tempfile.gettempdir(), f"course-phases-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
                           f"-{os.getpid()}.lock"))


@pytest.fixture(scope="session")
def slot():
    with Slot(0) as s:
        yield s


@pytest.fixture(scope="session")
def plans(slot):
    """The batch plan of every topic: the one `course grade` keeps (autograder.grading.
    plan_file.kept), recorded once for this grader version by whichever test process or
    `course` run needs it first, and read back here; recorded in this process only where none
    can be kept (a recorded grading of the reference, ~20 s)."""
    from autograder import catalogue
    from autograder.grading import plan, plan_file
    from autograder.grading import runner

    path, _ = plan_file.kept()
    loaded = plan_file.load(path, hidden=True) if path else None
    if loaded is not None:
        plan.preload(slot, loaded)  # as a batch replaying a kept plan does (and record does)
        return loaded
    specs = {t: runner.collect(t) for t in catalogue.topic_modules()}
    return plan.record(slot, specs, plan.reference_sources())


@pytest.fixture(scope="session")
def example_class(tmp_path_factory):
    """The example class graded once per run: (class folder, out folder, the ``course`` run).
    Read it, never write into it: other tests share it."""
    from tests.helpers import graded_example_class

    cls, out, proc = graded_example_class(tmp_path_factory)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return cls, out, proc
