"""Shared fixtures: one sandbox slot per test process (pytest-xdist workers each get one)."""

from __future__ import annotations

import pytest

from autograder.sandbox import Slot


@pytest.fixture(scope="session")
def slot():
    with Slot(0) as s:
        yield s
