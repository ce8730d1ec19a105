"""The input-kind matrix (issue 36): every kind of input an exercise's API row or stub promises
has a graded test, and every test the matrix names exists.

One table per topic, ``autograder/suites/hidden/kinds/<topic>.toml`` (hidden: it names hidden
tests, so a student release does not ship it). Per exercise: ``promised``, the kinds its row in
docs/design/exercise-api.md and its docstring promise; one key per kind listing the tests that
exercise it (``"public:test_…"`` or ``"hidden:test_…"``); and ``gaps``, a promised kind with
no test and the reason (a docstring-only rule, which no test may grade). This test fails when a
promised kind has neither, when a listed test does not exist or grades another exercise, and
when a graded test is in no row (a new test must be placed in the matrix).
"""

from __future__ import annotations

import tomllib

import pytest

from autograder import catalogue, paths
from autograder.grading import runner

KINDS_DIR = paths.PACKAGE_DIR / "suites" / "hidden" / "kinds"
#: The kinds a row may list (docs/design/suite-strength.md, "The input-kind matrix").
KINDS = {"example", "error", "magnitude", "special-values", "dtype", "empty", "0-d", "batched",
         "broadcast-wrong", "tail-relative", "aliasing", "device", "property", "values"}
#: The kinds issue 36 found untested; each must have a test somewhere in the matrix.
ISSUE_KINDS = ("magnitude", "dtype", "broadcast-wrong", "tail-relative", "aliasing")
TOPICS = catalogue.topic_modules()


def table(topic: str) -> dict:
    with (KINDS_DIR / f"{topic}.toml").open("rb") as f:
        return tomllib.load(f)


def _tests(topic: str) -> dict[str, runner.TestSpec]:
    return {f"{s.visibility}:{s.fn.__name__}": s for s in runner.collect(topic)}


@pytest.mark.parametrize("topic", TOPICS)
def test_every_exercise_has_a_row(topic):
    names = [e.name for e in catalogue.get_topic(topic).exercises]
    assert sorted(table(topic)) == sorted(names)


def promise_problems(rows: dict) -> list[str]:
    """Unknown kinds, empty test lists, promised kinds with neither test nor reason."""
    problems = []
    for exercise, row in rows.items():
        promised, gaps = row.get("promised", []), row.get("gaps", {})
        kinds = {k for k in row if k not in ("promised", "gaps")}
        problems += [f"{exercise}: unknown kind {k!r}" for k in (kinds | set(promised)) - KINDS]
        problems += [f"{exercise}: kind {k!r} lists no test" for k in kinds if not row[k]]
        for kind in promised:
            if kind not in kinds and not str(gaps.get(kind, "")).strip():
                problems.append(f"{exercise}: promised kind {kind!r} has no test and no reason")
        for kind, why in gaps.items():
            if kind in kinds or kind not in promised or "TODO" in why:
                problems.append(f"{exercise}: gap {kind!r} is tested, not promised, or a TODO")
    return problems


def listing_problems(topic: str, rows: dict) -> list[str]:
    """Listed tests that do not exist or grade another exercise; graded tests in no row."""
    tests = _tests(topic)
    problems, listed = [], set()
    for exercise, row in rows.items():
        for kind, names in row.items():
            if kind in ("promised", "gaps"):
                continue
            for name in names:
                listed.add(name)
                spec = tests.get(name)
                if spec is None:
                    problems.append(f"{exercise}.{kind}: no graded test {name}")
                elif spec.exercise != exercise:
                    problems.append(f"{exercise}.{kind}: {name} grades {spec.exercise}")
    problems += [f"{name} is in no row of the matrix" for name in sorted(set(tests) - listed)]
    return problems


@pytest.mark.parametrize("topic", TOPICS)
def test_every_promised_kind_has_a_test_or_a_reason(topic):
    assert not promise_problems(table(topic))


@pytest.mark.parametrize("topic", TOPICS)
def test_every_listed_test_exists_and_every_test_is_listed(topic):
    assert not listing_problems(topic, table(topic))


def test_the_issue_kinds_are_tested():
    found = {k for t in TOPICS for row in table(t).values() for k, v in row.items()
             if k in ISSUE_KINDS and v}
    assert found == set(ISSUE_KINDS)


def test_the_matrix_can_fail():
    """A promised kind without test or reason, a test that does not exist, and a graded test
    in no row are each reported."""
    rows = table("ex03_softmax")
    del rows["softmax"]["tail-relative"]
    rows["softmax"]["promised"].append("tail-relative")
    rows["softmax"]["magnitude"] = ["hidden:test_nowhere"]
    assert "softmax: promised kind 'tail-relative' has no test and no reason" in (
        promise_problems(rows))
    problems = listing_problems("ex03_softmax", rows)
    assert "softmax.magnitude: no graded test hidden:test_nowhere" in problems
    assert "hidden:test_softmax_huge is in no row of the matrix" in problems
