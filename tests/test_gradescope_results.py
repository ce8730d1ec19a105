"""Gradescope's results.json a student can read: one entry per exercise and visibility, not one
per test (a student's page listed ~700 tests, and ``extra_data`` repeated them).

Built from one record (:func:`autograder.results.writers.gradescope_json`), without a worker;
the whole run inside a stand-in for Gradescope is tests/test_gradescope.py's.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from autograder import catalogue
from autograder.grading import loop, runner
from autograder.results import model, writers
from tests.test_gradescope import RESULTS_SCHEMA

EX01 = "ex01_vectors"


def _spec(exercise: str, n: int, visibility: str = "public", gpu: bool = False,
          topic: str = EX01) -> runner.TestSpec:
    return runner.TestSpec(name=f"{topic}.{exercise}: case {n}", topic=topic,
                           exercise=exercise, description=f"case {n}", visibility=visibility,
                           points=0.0 if gpu else 0.5, advisory=False, gpu=gpu,
                           fn=lambda *a: None)


def _record(error: str | None = None) -> model.Result:
    """dot: two public passes, a hidden failure; one_hot: three public failures (one mistake)
    and a CUDA test skipped; normalize_rows: a CUDA test alone."""
    results = [
        runner.TestResult(_spec("dot", 1), True),
        runner.TestResult(_spec("dot", 2), True),
        runner.TestResult(_spec("dot", 3, "hidden"), False, "hidden rule not met"),
        runner.TestResult(_spec("one_hot", 1), False, "wrong value at [0, 1]"),
        runner.TestResult(_spec("one_hot", 2), False, "wrong value at [2, 0]"),
        runner.TestResult(_spec("one_hot", 3), False, "wrong value at [1, 1]"),
        runner.TestResult(_spec("one_hot", 4, gpu=True), False, "skipped", skipped=True),
        runner.TestResult(_spec("normalize_rows", 1, gpu=True), False, "skipped", skipped=True),
    ]
    return model.Result.of("alice", "0" * 64, [loop.record(r) for r in results], error=error)


def _doc(r: model.Result, visibility: str = "after_published") -> dict:
    doc = json.loads(writers.gradescope_json(r, visibility))
    jsonschema.validate(doc, RESULTS_SCHEMA)
    return doc


@pytest.mark.parametrize("hidden", ["after_published", "hidden", "after_due_date", "visible"])
def test_one_entry_per_exercise_and_visibility_as_each_test_had(hidden):
    r = _record()
    doc = _doc(r, hidden)
    names = [t["name"] for t in doc["tests"]]
    assert names == [f"{EX01}.dot: public tests", f"{EX01}.dot: hidden tests",
                     f"{EX01}.one_hot: public tests"]  # normalize_rows: nothing but a skip
    # every test's visibility is its group's, exactly as the per-test file gives it
    per_test = json.loads(writers.results_json(r, hidden))["tests"]
    group_of = {t["name"]: t for t in doc["tests"]}
    record = {t.name: t for t in r.tests}
    for t in per_test:
        x = record[t["name"]]
        group = group_of[f"{x.topic}.{x.exercise}: {x.visibility} tests"]
        assert group["visibility"] == t["visibility"]
    assert {t["visibility"] for t in doc["tests"]} == {"visible", hidden}
    assert [(t["score"], t["max_score"], t["status"]) for t in doc["tests"]] == [
        (1.0, 1.0, "passed"), (0.0, 0.5, "failed"), (0.0, 1.5, "failed")]
    assert doc["score"] == 1.0 and doc["max_score"] == 3.0
    # the per-test record once, in extra_data
    assert len(doc["extra_data"]["tests"]) == len(r.tests) == 8
    assert doc["extra_data"] == json.loads(writers.results_json(r, hidden))["extra_data"]


def test_an_exercises_failures_fold_under_its_first():
    doc = _doc(_record())
    out = next(t["output"] for t in doc["tests"] if t["name"].endswith("one_hot: public tests"))
    lines = out.splitlines()
    assert lines[0] == "0 of 3 tests passed."
    assert lines[1] == f"Failed: {EX01}.one_hot: case 1"
    assert lines[2] == "wrong value at [0, 1]"
    assert lines[3] == "Hint: " + catalogue.get_exercise(f"{EX01}.one_hot").hints[0]
    assert lines[4].startswith("Lesson: docs/lessons/")
    assert lines[5] == (f"Also failed, probably from the same mistake (2): {EX01}.one_hot: "
                        f"case 2; {EX01}.one_hot: case 3")
    assert out.count("Failed:") == 1 and "[2, 0]" not in out  # one mistake, one block
    assert lines[6] == "1 CUDA test skipped (no CUDA device on the grading machine; no points)."


def test_cuda_tests_are_mentioned_only_where_they_exist_and_never_for_an_error():
    doc = _doc(_record())
    dot = next(t["output"] for t in doc["tests"] if t["name"].endswith("dot: public tests"))
    assert "CUDA" not in dot and dot == "2 of 2 tests passed."
    error = _doc(_record(error="not a zip"))
    assert not any("CUDA" in t["output"] for t in error["tests"])


def test_a_topic_that_did_not_run_is_one_line_per_entry():
    note = f"{EX01}.py not found in the submission"
    tests = [loop.record(runner.TestResult(_spec("dot", n), False, note, not_run="missing"))
             for n in (1, 2)]
    r = model.Result.of("bob", "0", tests, topic_notes={EX01: note},
                        topic_kinds={EX01: "missing"})
    (entry,) = _doc(r)["tests"]
    assert entry["output"] == f"0 of 2 tests passed.\nCould not run: {note}"


def test_an_exercise_not_written_yet_is_one_line_in_its_hidden_entry_too():
    """Its hidden tests say only that a NotImplementedError was raised (message hidden): the
    public tests' stub message marks the exercise as not written in both entries."""
    q = f"{EX01}.dot"
    stub = f"{q} raised NotImplementedError: {q}: not implemented yet"
    hidden = f"{q} raised NotImplementedError (message hidden in a hidden test)"
    tests = [loop.record(runner.TestResult(_spec("dot", 1), False, stub)),
             loop.record(runner.TestResult(_spec("dot", 2, "hidden"), False, hidden)),
             loop.record(runner.TestResult(_spec("dot", 3, "hidden"), False, hidden))]
    public, secret = _doc(model.Result.of("c", "0", tests))["tests"]
    line = f"Not written yet (start: course hint {q})."
    assert public["output"] == f"0 of 1 tests passed.\n{line}"
    assert secret["output"] == f"0 of 2 tests passed.\n{line}"
