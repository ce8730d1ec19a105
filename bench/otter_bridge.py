"""The course's suites as Otter-Grader 7 tests, for the throughput benchmark's `otter run` row.

Otter grades one script (or notebook) per assignment: it runs the student's file in a Jupyter
kernel, then each test file's ``test_case`` functions in that same kernel, with ``env`` = the
script's globals. A topic is one Otter assignment here; :func:`write_tests` writes its Otter test
files (exception-based, one file per exercise, one ``test_case`` per graded test of the public
and hidden suites, with the test's points), and each test case calls :func:`check`, which runs
the suite's own function with ``sub`` = the script's globals standing in for the submission's
module and ``ref`` = the reference solution (``solutions/<topic>.py``).

The stand-in is :class:`autograder.exports.nbgrader.adapter.NotebookSession`, the one the
nbgrader export already uses for the same job (student code in the grading process): plain
attribute calls, ``.new``, ``.lib``, ``.probe`` (the sandbox's probes, called in-process) and
methods of held objects, with requests and replies through the codec as across the sandbox's
socket, so a test sees the same plain data (``TensorData``, lists for tuples, exceptions as MRO
names) as under `course grade`. The verdict is :func:`autograder.grading.runner.run_test`'s, the
function `course grade` calls: Hypothesis ``@given`` tests, hidden-test messages and per-call
time limits behave alike.

This module is imported in Otter's kernel (bench/.otter-venv, which has the repository root on
its path) and by bench/grade_throughput.py (to write the tests); the suites load only when a
test runs or is written.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

#: One exercise's test file. ``OK_FORMAT = False`` selects Otter's exception-based format: a
#: test case passes unless its function raises.
TEST_FILE_HEADER = '''"""Otter test file of {topic}.{exercise} (written by bench/otter_bridge.py)."""
from otter.test_files import test_case
from bench.otter_bridge import check

OK_FORMAT = False
name = {name!r}
'''

TEST_CASE = '''

@test_case(name={test!r}, points={points!r}, hidden={hidden!r})
def test_{i}(env):
    check(env, {topic!r}, {test!r})
'''

#: (id of the script's globals, topic) -> its session: one per `otter run` (one kernel, one
#: topic), so objects and barred functions carry from test to test as in one worker.
_SESSIONS: dict[tuple[int, str], Any] = {}


@functools.cache
def _specs(topic: str) -> dict[str, Any]:
    """name -> TestSpec of ``topic``'s graded tests, public and hidden, in `course grade`'s order."""
    from autograder.grading import runner

    return {s.name: s for s in runner.collect(topic, hidden=runner.hidden_available())}


def write_tests(topic: str, dest: Path) -> dict[str, float]:
    """Write Otter's test files for ``topic`` into ``dest`` (created): ``<exercise>.py`` each.

    Args:
        topic: a catalogue topic module, e.g. ``"ex01_vectors"``.
        dest: the tests folder to hand to ``otter generate -t``.

    Returns:
        exercise -> the points its test cases carry (the catalogue's, GPU-only tests aside).

    Raises:
        ValueError: ``topic`` is not in the catalogue, or a suite names an unknown exercise.
    """
    specs = _specs(topic).values()
    dest.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    totals: dict[str, float] = {}
    for i, spec in enumerate(specs):
        text = files.setdefault(spec.exercise, TEST_FILE_HEADER.format(
            topic=topic, exercise=spec.exercise, name=f"{topic}.{spec.exercise}"))
        # Python floats: Otter accepts int or float points only, and sums them as given.
        files[spec.exercise] = text + TEST_CASE.format(
            i=i, topic=topic, test=spec.name, points=float(spec.points),
            hidden=spec.visibility == "hidden")
        totals[spec.exercise] = totals.get(spec.exercise, 0.0) + spec.points
    for exercise, text in files.items():
        (dest / f"{exercise}.py").write_text(text)
    return totals


def check(env: dict[str, Any], topic: str, test: str) -> None:
    """Run the graded test named ``test`` of ``topic`` against the script's globals ``env``.

    Passes silently when `course grade` would count the test passed or skipped (a GPU test
    without CUDA: no points either way).

    Raises:
        AssertionError: the test failed; its message is the one `course grade` would give.
        LookupError: no test of that name in this checkout's suites.
    """
    from autograder.exports.nbgrader.adapter import NotebookSession
    from autograder.grading import runner

    specs = _specs(topic)
    if test not in specs:
        raise LookupError(f"no graded test {test!r} in this checkout's suites")
    key = (id(env), topic)
    session = _SESSIONS.get(key)
    if session is None:
        session = _SESSIONS[key] = NotebookSession(topic, env)
    result = runner.run_test(session, specs[test], runner.reference(topic))
    if not result.passed and not result.skipped:
        raise AssertionError(result.message)
