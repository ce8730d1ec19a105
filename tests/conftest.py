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


#: Test files whose tests (or xdist groups) take the longest, longest first: `make test` starts
#: them first (`--no-loadscope-reorder` keeps this order; pytest-xdist's own orders work by
#: the number of tests in a group, which put the costliest single tests at the end, one of
#: the two workers running them alone while the other sat idle). The bank variants, hundreds
#: of short groups, go last: they fill whatever gap the others leave. Wall seconds on 2 busy
#: cores in docs/design/measured-facts.md, "The test suite's time".
LONGEST_FIRST = (
    "tests/test_hostile.py", "tests/test_hidden_text.py", "tests/docs/test_browser.py",
    "tests/test_bad_uploads.py", "tests/test_nbgrader.py", "tests/test_interrupt.py",
    "tests/test_sweeps.py", "tests/test_gradescope.py", "tests/test_kernels.py",
    "tests/test_bench.py", "tests/test_plan.py", "tests/test_golden.py", "tests/test_shards.py",
    "tests/test_release.py", "tests/test_notebook_submissions.py", "tests/test_report.py",
    "tests/test_resume.py", "tests/test_notebook_check.py", "tests/test_instructor_links.py",
    "tests/test_student_loop.py",
)
LAST = ("tests/test_banks.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the tests as :data:`LONGEST_FIRST` says (a stable sort: each file keeps its own
    order, so module-scoped fixtures are set up once as before)."""
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        if path in LONGEST_FIRST:
            return LONGEST_FIRST.index(path)
        return len(LONGEST_FIRST) + (path in LAST)

    items.sort(key=rank)


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
