"""The rules a graded suite follows, checked where a suite author would break them.

A graded test takes exactly ``(sub, ref)``: `course grade` calls it with those two and nothing
else, so a pytest fixture or ``parametrize`` would work under plain pytest and silently not under
the grader. ``@graded`` refuses such a test when the suite is imported.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder import catalogue
from autograder.authoring.suite import GRADED_PARAMETERS, graded
from autograder.grading import runner
from tests.helpers import ROOT


@pytest.mark.parametrize("topic", catalogue.topic_modules())
def test_every_graded_test_takes_sub_and_ref_only(topic):
    import inspect

    for spec in runner.collect(topic):
        assert tuple(inspect.signature(spec.fn).parameters) == GRADED_PARAMETERS, spec.name
        assert not getattr(spec.fn, "pytestmark", None), spec.name


def test_a_fixture_parameter_is_refused():
    with pytest.raises(TypeError, match=r"takes \('sub', 'ref', 'tmp_path'\)"):
        @graded("dot", "asks for a fixture")
        def test_x(sub, ref, tmp_path):
            pass


def test_parametrize_is_refused():
    with pytest.raises(TypeError, match="pytest marks"):
        @graded("dot", "parametrized")
        @pytest.mark.parametrize("n", [1, 2])
        def test_x(sub, ref):
            pass


def test_graded_below_given_is_refused_and_above_is_fine():
    with pytest.raises(TypeError, match="put @graded above @given"):
        @given(st.integers())
        @graded("dot", "wrong order")
        def test_x(sub, ref, n):
            pass

    @graded("dot", "right order")
    @given(n=st.integers())
    def test_y(sub, ref, n):
        pass

    assert test_y.__graded__.description == "right order"


def test_per_topic_markers_select_one_topic():
    # `pytest autograder/suites/*/ex0*.py -m "ex03_softmax and public"`: topic 3's public tests.
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "autograder" / "suites").glob("*/ex0*.py"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p",
                           "no:cacheprovider", "-m", "ex03_softmax and public", *files],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("autograder/suites/public/ex03_softmax.py::")
                       for line in ids), ids[:5]
    assert len(ids) == sum(s.visibility == "public" for s in runner.collect("ex03_softmax"))
