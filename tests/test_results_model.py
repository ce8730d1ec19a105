"""One result type: what grading produced is written once as structure and read back whole.

``extra_data`` carries each test's topic, exercise, visibility and kind of failure, so that
grades.csv, feedback and report.html read structure and never the prose of ``output``.
"""

from __future__ import annotations

import json

import pytest

from autograder import catalogue
from autograder.grading import loop, runner
from autograder.results import model, writers
from autograder.results.model import Result, ResultError

EX01, EX02 = "ex01_vectors", "ex02_projections"
NOT_FOUND = f"{EX02}.py not found in the submission"


def _spec(topic: str, exercise: str, n: int, visibility: str = "public",
          gpu: bool = False) -> runner.TestSpec:
    return runner.TestSpec(name=f"{topic}.{exercise}: case {n}", topic=topic, exercise=exercise,
                           description=f"case {n}", visibility=visibility,
                           points=0.0 if gpu else 1 / 3, advisory=False, gpu=gpu,
                           fn=lambda *a: None)


def _graded() -> Result:
    """Topic 1 ran (a pass, a failure, a GPU skip); topic 2's file is missing."""
    results = [
        runner.TestResult(_spec(EX01, "one_hot", 1), True),
        runner.TestResult(_spec(EX01, "one_hot", 2, "hidden"), False, "wrong\nvalue"),
        runner.TestResult(_spec(EX01, "one_hot", 3, gpu=True), False, "skipped", skipped=True),
        runner.TestResult(_spec(EX02, "project_qkv", 1), False, NOT_FOUND, not_run="missing"),
    ]
    return Result.of("alice", "ab" * 32, [loop.record(r) for r in results],
                     topic_notes={EX02: NOT_FOUND}, topic_kinds={EX02: "missing"},
                     output="hi\n")


def test_the_record_carries_the_kinds_hints_and_points_decided_where_the_tests_ran():
    r = _graded()
    assert [t.kind for t in r.tests] == ["passed", "failed", "skipped", "missing"]
    assert r.topic_kinds == {EX02: "missing"} and r.status == "partial"
    assert [t.visibility for t in r.tests] == ["public", "hidden", "public", "public"]
    assert r.topics[EX01] == pytest.approx(1 / 3) and r.max_score == pytest.approx(1.0)
    # the hint of a failed test is recorded with it; a passed or skipped one has none
    hint = catalogue.get_exercise(f"{EX01}.one_hot").hints[0]
    assert [t.hint for t in r.tests] == [None, hint, None,
                                         catalogue.get_exercise(f"{EX02}.project_qkv").hints[0]]


def test_a_note_without_its_kind_is_refused():
    with pytest.raises(ValueError, match="topic kinds"):
        Result.of("x", "0", [], topic_notes={EX02: NOT_FOUND})
    with pytest.raises(ValueError, match="topic kinds"):
        Result.of("x", "0", [], topic_notes={EX02: NOT_FOUND}, topic_kinds={EX02: "forged"})


def _spec_of(topic: str) -> dict[str, list[runner.TestSpec]]:
    exercise = catalogue.get_topic(topic).exercises[0].name
    return {topic: [_spec(topic, exercise, 1), _spec(topic, exercise, 2, "hidden")]}


@pytest.mark.parametrize(("facts", "note", "kind"), [
    ({"problems": {EX02: NOT_FOUND}, "missing": {EX02}}, NOT_FOUND, "missing"),
    ({"problems": {EX02: "ex02_projections: two candidate files"}},
     "ex02_projections: two candidate files", "unreadable"),
    ({"error": "not a zip"}, "nothing could be graded: not a zip", "not_graded"),
])
def test_the_loop_records_why_a_topic_did_not_run_from_the_loaders_facts(facts, note, kind):
    """No file to run (no worker starts): the kind is the loader's fact, on the topic and on
    each of its tests, never read back from the note's text."""
    specs = _spec_of(EX02)
    g = loop.begin({}, specs, **facts)
    for phase in runner.PHASES:
        loop.run_phase(g, None, specs, phase)
    o = loop.finish(g, specs)
    assert o.notes == {EX02: note} and o.kinds == {EX02: kind}
    assert [t.kind for t in o.tests()] == [kind, kind]


def test_a_topic_that_did_not_import_is_import_error_in_the_later_phase_too():
    specs = _spec_of(EX02)
    g = loop.begin({}, specs)
    g.unloadable[EX02] = "ex02_projections.py could not be imported: SyntaxError"
    loop.run_phase(g, None, specs, "hidden")
    assert g.kinds == {EX02: "import_error"}
    assert loop.record(g.done[EX02][1]).kind == "import_error"


def test_a_timed_out_topic_keeps_its_tests_verdicts():
    """A topic that ran but timed out: its failed tests ran (kind ``failed``) even where a
    message equals the note; the topic's kind is ``timeout`` as the loop recorded it."""
    tests = [loop.record(runner.TestResult(_spec(EX01, "one_hot", 1), False, model.TIMED_OUT)),
             loop.record(runner.TestResult(_spec(EX01, "one_hot", 2), True))]
    r = Result.of("x", "0", tests, topic_notes={EX01: model.TIMED_OUT},
                  topic_kinds={EX01: "timeout"})
    assert r.topic_kinds == {EX01: "timeout"}
    assert [t.kind for t in r.tests] == ["failed", "passed"]


def test_the_results_file_reads_back_as_the_same_result(tmp_path):
    made = writers.write_submission(tmp_path, _graded(), "hidden")
    back = model.load(tmp_path, "alice")
    assert back is not None
    assert back.tests == [model.TestOutcome(**t.to_json()) for t in made.tests]
    # the file does not carry hints: read back, the grader records the same ones again
    from autograder.results import failures
    hinted = loop.with_hints(back)
    assert [failures.hint(t) for t in hinted.tests if t.kind == "failed"] == \
        [t.hint for t in made.tests if t.kind == "failed"]
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
    assert model.load(tmp_path, "alice") is None  # a re-run grades it again
    # ... and the class files made from the folder fail naming it, never leave its row out
    with pytest.raises(ResultError, match=r"alice\.json: no extra_data\.'tests'"):
        model.load_all(tmp_path)
    path.write_text("{not json", "utf-8")
    with pytest.raises(ResultError, match=r"alice\.json: not a results file"):
        model.load_all(tmp_path, ["alice"])
    with pytest.raises(ResultError, match=r"bob\.json: cannot be read"):
        model.load_all(tmp_path, ["bob"])


def test_a_read_back_test_gets_its_own_hint_again(tmp_path):
    """A failed test with a hint of its own (``graded(..., hint=...)``): its results file does
    not carry the hint, and the grader that reads it back records it again from its suites
    (the feedback of a resumed submission shows it), never the exercise's first hint."""
    spec = next(s for s in runner.collect("ex03_softmax") if s.hint)
    made = Result.of("bob", "cd" * 32, [loop.record(runner.TestResult(spec, False, "wrong"))])
    writers.write_submission(tmp_path, made, "hidden")
    back = model.load(tmp_path, "bob")
    assert back is not None and back.tests[0].hint is None
    assert loop.with_hints(back).tests[0].hint == spec.hint == made.tests[0].hint
