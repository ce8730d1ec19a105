"""Shared fixtures: one sandbox slot per test process (pytest-xdist workers each get one)."""

from __future__ import annotations

import pytest

from autograder.sandbox.slot import Slot


@pytest.fixture(scope="session")
def slot():
    with Slot(0) as s:
        yield s


@pytest.fixture(scope="session")
def plans(slot):
    """The batch plan of every topic (a recorded grading of the reference, ~10 s)."""
    from autograder import catalogue
    from autograder.grading import plan
    from autograder.grading import run as runner

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
