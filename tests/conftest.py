"""Shared fixtures: one sandbox slot per test process (pytest-xdist workers each get one)."""

from __future__ import annotations

import pytest

from autograder.sandbox.session import Slot


@pytest.fixture(scope="session")
def slot():
    with Slot(0) as s:
        yield s


@pytest.fixture(scope="session")
def plans(slot):
    """The batch plan of every topic (a recorded grading of the reference, ~10 s)."""
    from autograder import catalogue
    from autograder.grading import replay as plan
    from autograder.grading import run as runner

    specs = {t: runner.collect(t) for t in catalogue.topic_modules()}
    return plan.record(slot, specs, plan.reference_sources())
