"""One result type: what grading produced is written once as structure and read back whole.

``extra_data`` carries each test's topic, exercise, visibility and kind of failure, so that
grades.csv, feedback and report.html read structure and never the prose of ``output``.
"""

from __future__ import annotations

import json

import pytest

from autograder.grading import runner
from autograder.results import model, writers
from autograder.results.model import Graded, Result, ResultError

EX01, EX02 = "ex01_vectors", "ex02_projections"
NOT_FOUND = f"{EX02}.py not found in the submission"


def _spec(topic: str, exercise: str, n: int, visibility: str = "public",
          gpu: bool = False) -> runner.TestSpec:
    return runner.TestSpec(name=f"{topic}.{exercise}: case {n}", topic=topic, exercise=exercise,
                           description=f"case {n}", visibility=visibility,
                           points=0.0 if gpu else 1 / 3, advisory=False, gpu=gpu,
                           fn=lambda *a: None)


def _graded() -> Graded:
    """Topic 1 ran (a pass, a failure, a GPU skip); topic 2's file is missing."""
    results = [
        runner.TestResult(_spec(EX01, "one_hot", 1), True),
        runner.TestResult(_spec(EX01, "one_hot", 2, "hidden"), False, "wrong\nvalue"),
        runner.TestResult(_spec(EX01, "one_hot", 3, gpu=True), False, "skipped", skipped=True),
        runner.TestResult(_spec(EX02, "project_qkv", 1), False, NOT_FOUND),
    ]
    return Graded(id="alice", sha256="ab" * 32, status="partial", results=results,
                  topic_notes={EX02: NOT_FOUND}, missing={EX02}, output="hi\n")


def test_kinds_are_decided_from_the_loaders_facts():
    r = Result.from_graded(_graded())
    assert [t.kind for t in r.tests] == ["passed", "failed", "skipped", "missing"]
    assert r.topic_kinds == {EX02: "missing"}
    assert [t.visibility for t in r.tests] == ["public", "hidden", "public", "public"]
    assert r.topics[EX01] == pytest.approx(1 / 3) and r.max_score == pytest.approx(1.0)


@pytest.mark.parametrize(("facts", "note", "kind"), [
    ({"unreadable": {EX02}}, "ex02_projections: two candidate files", "unreadable"),
    ({}, "ex02_projections.py could not be imported: SyntaxError", "import_error"),
    ({"error": "not a zip"}, "nothing could be graded: not a zip", "not_graded"),
])
def test_a_topic_that_did_not_run_says_why(facts, note, kind):
    g = Graded(id="x", sha256="0", status="partial", topic_notes={EX02: note},
               results=[runner.TestResult(_spec(EX02, "project_qkv", 1), False, note)], **facts)
    r = Result.from_graded(g)
    assert r.topic_kinds == {EX02: kind} and r.tests[0].kind == kind


def test_a_timed_out_topic_keeps_its_tests_verdicts():
    """A topic that ran but timed out: its failed tests ran (kind ``failed``), the topic says
    ``timeout``; a failure whose message merely equals the note is still a failure."""
    g = Graded(id="x", sha256="0", status="partial", topic_notes={EX01: model.TIMED_OUT},
               results=[runner.TestResult(_spec(EX01, "one_hot", 1), False, model.TIMED_OUT),
                        runner.TestResult(_spec(EX01, "one_hot", 2), True)])
    r = Result.from_graded(g)
    assert r.topic_kinds == {EX01: "timeout"}
    assert [t.kind for t in r.tests] == ["failed", "passed"]


def test_the_results_file_reads_back_as_the_same_result(tmp_path):
    made = writers.write_submission(tmp_path, _graded(), "hidden")
    back = model.load(tmp_path, "alice")
    assert back is not None
    assert back.tests == [model.TestOutcome(**t.to_json()) for t in made.tests]
    for field in ("id", "sha256", "status", "topic_notes", "topic_kinds", "error", "output",
                  "grader_version", "versions"):
        assert getattr(back, field) == getattr(made, field), field
    assert back.topics == {m: round(v, 2) for m, v in made.topics.items()}
    doc = json.loads((tmp_path / "results" / "alice.json").read_text("utf-8"))
    # Gradescope's view is unchanged: skipped tests left out, hidden ones as chosen.
    assert [t["visibility"] for t in doc["tests"]] == ["visible", "hidden", "visible"]
    assert len(doc["extra_data"]["tests"]) == 4


def test_a_file_this_grader_did_not_write_is_refused_by_name(tmp_path):
    writers.write_submission(tmp_path, _graded())
    path = tmp_path / "results" / "alice.json"
    doc = json.loads(path.read_text("utf-8"))
    bad = json.loads(json.dumps(doc))
    bad["extra_data"]["tests"][1]["kind"] = "forged"
    with pytest.raises(ResultError, match=r"tests\[1\]\.'kind' is 'forged'"):
        model.from_json(bad, "alice.json")
    old = json.loads(json.dumps(doc))
    del old["extra_data"]["tests"]  # an older grader's file
    with pytest.raises(ResultError, match="alice.json: no extra_data.'tests'"):
        model.from_json(old, "alice.json")
    path.write_text(json.dumps(old), "utf-8")
    assert model.load(tmp_path, "alice") is None  # graded again, left out of grades.csv
    writers.write_grades_csv(tmp_path, ["alice"])
    assert (tmp_path / "grades.csv").read_text("utf-8").count("\n") == 1  # the header alone
