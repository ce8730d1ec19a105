"""The batch plan (autograder.grading.replay) and the pipelined calls it rests on.

A plan must never change a verdict: tests/test_banks.py grades every wrong and correct variant
with the plan against verdicts stored from call-by-call gradings, and a sample both ways; here are the pipeline's own limits (each failure blamed on the call that
failed), the fast path, and a whole batch graded both ways.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.wire import codec
from autograder.grading import batch as grade
from autograder.grading import examples, plan, replay
from autograder.grading import runner
from autograder.driver import pipeline
from autograder.grading import submission
from autograder.limits import Limits
from autograder.driver.errors import BudgetExhausted, CallTimeout, StudentException, WorkerDied
from autograder.driver.protocol import Call
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.helpers import ROOT, course, course_env, grade_sources, solution_source

SOURCE = b"""
import os, time

def fast(x):
    return x + 1

def hang(x):
    while True:
        pass

def die(x):
    os._exit(3)

def nap(x):
    time.sleep(0.2)
    return x

def pad(x):
    return "x" * 1000

def boom(x):
    raise ValueError(f"bad {x}")
"""


def _call(name: str, *args: object) -> Call:
    frame = codec.encode({"op": "call", "module": "m", "name": name, "args": list(args),
                          "kwargs": {}, "keep": False})
    return Call(frame, b"", f"m.{name}", f"m.{name}", None)


@pytest.fixture
def session(slot):
    s = Session(slot, {"m": SOURCE})
    s.load("m")
    yield s
    s.close()


def _values(s: Session, replies: list[bytes | None]) -> list[object]:
    return [None if b is None else s._interpret(b, "test") for b in replies]


def test_pipelined_replies_answer_the_calls_in_order(session):
    out = session.pipeline.send([_call("fast", i) for i in range(300)])
    assert out.failed_at is None
    assert _values(session, out.replies) == [i + 1 for i in range(300)]


def test_each_exception_is_described_by_its_own_message(session):
    """The worker keeps the reply of an exception it already described (a stub raises the
    same one thousands of times): the same exception gives the same bytes, another its own."""
    out = session.pipeline.send([_call("boom", 1), _call("boom", 1), _call("boom", 2)])
    assert out.replies[0] == out.replies[1] != out.replies[2]
    for body, text in zip(out.replies, ("bad 1", "bad 1", "bad 2")):
        with pytest.raises(StudentException, match=text):
            session._interpret(body, "m.boom")


def test_a_hang_is_blamed_on_the_call_that_hung(session):
    session.limits = Limits(call_seconds=1.0)
    t0 = time.monotonic()
    out = session.pipeline.send([_call("fast", 1), _call("fast", 2), _call("hang", 0),
                            _call("fast", 3)])
    assert time.monotonic() - t0 < 5
    assert out.failed_at == 2 and isinstance(out.failure, CallTimeout)
    assert "m.hang" in str(out.failure) and "m.fast" not in str(out.failure)
    assert _values(session, out.replies) == [2, 3, None, None]
    # The test that makes the call gets the timeout, as if live; then, as call by call, the
    # function that hung is not run again, and the others still are.
    calls = [_call("fast", 1), _call("fast", 2), _call("hang", 0)]
    session.pipeline.feed(calls, out, 0, 3)
    assert session.call("m", "fast", (1,)) == 2 and session.call("m", "fast", (2,)) == 3
    with pytest.raises(CallTimeout, match="did not return within 1 s"):
        session.call("m", "hang", (0,))
    with pytest.raises(CallTimeout, match="not run again"):
        session.call("m", "hang", (0,))
    assert session.call("m", "fast", (5,)) == 6


def test_a_death_is_blamed_on_the_call_that_died(session):
    out = session.pipeline.send([_call("fast", 1), _call("die", 0), _call("fast", 2)])
    assert out.failed_at == 1 and isinstance(out.failure, WorkerDied)
    assert "m.die" in str(out.failure)
    assert _values(session, out.replies) == [2, None, None]
    assert session.call("m", "fast", (7,)) == 8  # a fresh worker takes over


def test_a_pipeline_lasts_no_longer_than_the_budget_and_charges_only_what_is_used(session):
    """Calls no test reaches cost nothing (a slow, wrong function would otherwise spend the
    budget on calls a failing test never makes: red team); replies used are charged."""
    # The budget is what the import left plus a second: on a loaded 2-core CI machine the
    # import (and the import again in the worker that replaces the killed one) took 0.5 s.
    before = session.spent  # the import
    session.limits = Limits(call_seconds=5.0, submission_seconds=before + 1.0)
    calls = [_call("nap", i) for i in range(20)]
    out = session.pipeline.send(calls)
    done = [b for b in out.replies if b is not None]
    assert 1 <= len(done) <= 4
    assert session.spent == before
    session.pipeline.feed(calls, out, 0, len(calls))
    for i in range(len(done)):
        assert session.call("m", "nap", (i,)) == i
    assert session.spent >= 0.2 * len(done)
    # Then, as call by call: cut short by what is left of the budget, or refused.
    with pytest.raises((BudgetExhausted, CallTimeout)):
        for i in range(len(done), len(calls)):
            session.call("m", "nap", (i,))


def _request(name: str, *args: object, keep: bool = False, op: str = "call",
             handle: int | None = None) -> Call:
    """The frame Session.call sends for this call."""
    req = {"op": op, "module": "m", "name": name, "args": list(args), "kwargs": {}, "keep": keep}
    if handle is not None:
        req["handle"] = {"id": handle}
    return Call(codec.encode(req), b"", f"m.{name}", f"m.{name}", None)


def test_objects_named_by_a_stopped_pipeline_are_made_again_live(slot, monkeypatch):
    """A pipeline stopped by the byte cap kills its worker: a test that goes on must not be
    handed an object of that dead worker (red team: a correct class was marked "lost")."""
    source = SOURCE + b"\nclass Box:\n    def __init__(self, v):\n        self.v = v\n\n" \
        b"    def get(self):\n        return self.v\n"
    calls = [_request("pad", 1), _request("pad", 2), _request("Box", 5, keep=True),
             _request("Box.get", op="method", handle=1)]
    s = Session(slot, {"m": source})
    try:
        s.load("m")
        s.forget()
        sizes = [len(b) for b in s.pipeline.send(calls).replies]
        monkeypatch.setattr(pipeline, "PIPELINE_BYTES", sum(sizes[:3]))  # the last one is over
        s.forget()
        out = s.pipeline.send(calls)
        assert out.replies[3] is None and out.replies[2] is not None and s.sock is None
        s.pipeline.feed(calls, out, 0, len(calls))
        assert s.call("m", "pad", (1,)) == "x" * 1000
        assert s.call("m", "pad", (2,)) == "x" * 1000
        box = s.call("m", "Box", (5,), keep=True)
        assert box.id == 1 and s.source_generation == s.generation  # made by the live worker
        assert s.call("m", "Box.get", op="method", handle={"id": box.id}) == 5
    finally:
        s.pipeline.feed()
        s.close()


def test_a_barred_or_unaffordable_test_is_not_passed_on_its_replies(session):
    """The fast path passes a test only if all its calls would have run live (red team: a
    function barred after a timeout still scored through matching replies)."""
    calls = [_call("fast", 1), _call("fast", 2)]
    topic_plan = plan.TopicPlan("m", calls, {"t": (0, 2)})
    out = session.pipeline.send(calls)
    assert replay._as_if_live(session, topic_plan, out, 0, 2)
    session.timed_out["m.fast"] = "not run again"
    assert not replay._as_if_live(session, topic_plan, out, 0, 2)
    session.timed_out.clear()
    session.limits = Limits(submission_seconds=out.seconds[0] / 2)
    assert not replay._as_if_live(session, topic_plan, out, 0, 2)


def test_a_pipeline_holds_a_bounded_amount_of_replies(session, monkeypatch):
    """Past PIPELINE_BYTES, the rest is left to be asked call by call (memory stays bounded)."""
    monkeypatch.setattr(pipeline, "PIPELINE_BYTES", 2500)
    out = session.pipeline.send([_call("pad", i) for i in range(10)])
    assert out.failed_at is None
    got = [b for b in out.replies if b is not None]
    assert 1 <= len(got) <= 3 and out.replies[len(got):] == [None] * (10 - len(got))
    assert session.call("m", "pad", (3,)) == "x" * 1000


def test_a_fed_reply_is_used_only_for_the_very_request_it_answers(session):
    calls = [_call("fast", 1), _call("fast", 2)]
    out = session.pipeline.send(calls)
    session.pipeline.feed(calls, out, 0, 2)
    assert session.call("m", "fast", (1,)) == 2
    # A different request than recorded: answered live, and feeding stops.
    assert session.call("m", "fast", (40,)) == 41
    assert session.pipeline._feed is None
    session.pipeline.feed()


def test_the_reference_passes_on_matching_replies_alone(slot, plans, monkeypatch):
    """The reference's own replies take the fast path: no test body runs again."""
    topic = "ex03_softmax"
    ran = []
    real = runner.run_test
    monkeypatch.setattr(runner, "run_test", lambda *a, **k: ran.append(a[1].name) or real(*a, **k))
    s = Session(slot, {topic: solution_source(topic).encode()})
    try:
        s.load(topic)
        results = replay.run_planned(s, plans[topic], runner.collect(topic), runner.reference(topic))
    finally:
        s.close()
    assert results and all(r.passed for r in results)
    assert ran == [], f"{len(ran)} tests ran again on the reference's own replies"


def test_a_preloaded_plan_gets_the_replies_its_frames_get(slot, plans):
    """The zygote decodes the plan once (Slot.preload); a worker answers it as the frames."""
    topic = "ex02_projections"
    public = plans[topic]["public"]
    calls = public.calls
    assert slot.preloaded.get(public.key) == len(calls)
    assert f"{topic}:hidden" not in slot.preloaded  # hidden inputs never sit in the zygote
    got = {}
    for preloaded in (True, False):
        s = Session(slot, {topic: solution_source(topic).encode()})
        try:
            s.load(topic)
            s.forget()
            got[preloaded] = s.pipeline.send(calls, public.key if preloaded else None).replies
            assert bool(s.pipeline._planned) == preloaded
        finally:
            s.close()
    assert got[True] == got[False] == [c.reply for c in calls]


def test_a_near_copy_is_judged_by_the_tests_not_by_the_bytes(slot, plans):
    """Replies that differ from the reference's in the last bit run the tests (and pass)."""
    topic = "ex03_softmax"
    code = solution_source(topic) + (
        "\n_softmax = softmax\n\ndef softmax(z, axis=-1, temperature=1.0):\n"
        "    out = _softmax(z, axis=axis, temperature=temperature)\n"
        "    return out * (1 + 2**-52) if getattr(out, 'dtype', None) == 'float64' else out\n")
    s = Session(slot, {topic: code.encode()})
    try:
        s.load(topic)
        results = replay.run_planned(s, plans[topic], runner.collect(topic), runner.reference(topic))
    finally:
        s.close()
    assert {r.spec.name: r.message for r in results if not r.passed} == {}


def _comparable_results(out: Path) -> dict[str, dict]:
    docs = {}
    for f in sorted((out / "results").glob("*.json")):
        doc = json.loads(f.read_text())
        doc.pop("execution_time")
        # A plan runs all of a topic's calls, also those a failing test stops short of:
        # what the submission prints differs (only instructors see it).
        doc["extra_data"].pop("student_output", None)
        doc["extra_data"].pop("hidden_phase_output", None)
        doc["output"] = re.sub(r"Output of your code: kept.*", "", doc["output"])
        docs[f.name] = doc
    return docs


@pytest.mark.slow
@pytest.mark.xdist_group("example-class")  # the shared class is graded on this worker
def test_a_planned_batch_writes_what_an_unplanned_one_does(example_class, tmp_path):
    """The example class (a hang, an exit on import, a monkeypatched numpy, partly right ones),
    graded by `course grade` with its plan (the shared run) and here without: the same results,
    test by test."""
    cls, planned, _ = example_class
    paths = sorted(p for p in cls.iterdir() if p.is_dir())
    assert len(paths) >= grade.PLAN_MIN
    unplanned = tmp_path / "out"
    grade.grade_batch(paths, unplanned, jobs=2, plan_batches=False)  # the hang overlaps
    assert (unplanned / "grades.csv").read_text() == (planned / "grades.csv").read_text()
    assert _comparable_results(unplanned) == _comparable_results(planned)


@pytest.mark.slow
def test_a_batch_that_records_its_own_plan_writes_what_a_kept_plan_does(tmp_path):
    """`course grade` replays the plan it keeps (plan_file.kept); where none can be kept
    (here COURSE_KEEP_PLAN=0), the batch records its own, its two slots sharing the work
    (plan.record_shared, the hidden part after the public sweep). A class of three topic-1
    submissions (right, wrong in one function, failing to import), so that little is
    recorded: both ways write the same results."""
    cls = tmp_path / "class"
    source = solution_source("ex01_vectors")
    wrong = source + "\n\ndef dot(a, b):\n    return float(np.sum(np.abs(a) * np.abs(b)))\n"
    for name, text in (("right", source), ("wrong", wrong), ("broken", "import nowhere\n")):
        (cls / name).mkdir(parents=True)
        (cls / name / "ex01_vectors.py").write_text(text, encoding="utf-8")
    outs = {}
    for kept in (True, False):
        out = tmp_path / ("kept" if kept else "own")
        env = course_env() if kept else course_env(COURSE_KEEP_PLAN="0")
        proc = course("grade", "--class", str(cls), "--out", str(out), "--jobs", "2", env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert ("replaying" in proc.stderr or "recorded" in proc.stderr) == kept, proc.stderr
        outs[kept] = out
    assert (outs[True] / "grades.csv").read_text() == (outs[False] / "grades.csv").read_text()
    assert _comparable_results(outs[True]) == _comparable_results(outs[False])
    wrong_doc = json.loads((outs[True] / "results" / "wrong.json").read_text())
    assert 0 < wrong_doc["score"] < wrong_doc["max_score"]  # the comparison compares something


def _same_plan(a: plan.TopicPlan, b: plan.TopicPlan) -> bool:
    return ([c.frame for c in a.calls] == [c.frame for c in b.calls] and a.spans == b.spans
            and a.expected == b.expected and a.passed == b.passed
            and a.examples.keys() == b.examples.keys())


@pytest.mark.parametrize("peer_answers", [True, False], ids=["shared", "peer-silent"])
def test_slots_that_share_the_recording_hold_the_plan_one_slot_records(slot, plans, monkeypatch,
                                                                       peer_answers):
    """plan.record_shared (a batch's slots each record a part): slot 0 of 2 records its part,
    sends it to slot 1 and takes slot 1's; if slot 1 sends nothing, slot 0 records that part
    itself. Either way it holds what plan.record on one slot holds, and preloads all of it."""
    import pickle
    import queue

    topics = ["ex02_projections", "ex03_softmax", "ex06_rotation_norm"]
    sources = {t: s for t, s in plan.reference_sources().items() if t in topics}
    specs = {t: runner.collect(t) for t in topics}
    queues = [queue.Queue(), queue.Queue()]
    peer = {t: plans[t] for t in topics[1::2]}  # slot 1's part, recorded by the fixture
    if peer_answers:
        queues[0].put(pickle.dumps((1, peer)))
    else:
        monkeypatch.setattr(plan, "SHARE_WAIT_SECONDS", 0.1)
    recorded = []
    monkeypatch.setattr(plan, "record", lambda *a, _r=plan.record, **kw: recorded.append(
        sorted(a[2])) or _r(*a, **kw))
    try:
        got = plan.record_shared(slot, specs, sources, None, 0, queues)
        assert list(got) == topics  # in sorted order, every topic
        for t in topics:
            assert got[t].keys() == plans[t].keys()
            assert all(_same_plan(got[t][ph], plans[t][ph]) for ph in got[t]), t
        index, sent = pickle.loads(queues[1].get_nowait())
        assert index == 0 and list(sent) == topics[0::2]  # its own part, and only that
        assert recorded == ([topics[0::2]] if peer_answers else [topics[0::2], topics[1::2]])
        assert slot.preloaded == {p.key: len(p.calls) for t in topics for p in got[t].values()
                                  if p.phase == "public"}
    finally:  # the session's plans are preloaded again for the other tests
        slot.preload({p.key: p.calls for phases in plans.values() for p in phases.values()
                      if p.phase == "public"})


def test_reference_sources_are_the_solutions():
    found = plan.reference_sources()
    assert set(found) == {p.stem for p in (ROOT / "solutions").glob("ex0*.py")}
    assert all(isinstance(v, bytes) and v for v in found.values())


def test_no_plan_in_a_release(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "SOLUTIONS_DIR", Path(tmp_path))
    assert plan.reference_sources() == {}


def test_recording_a_hypothesis_test_keeps_its_seed():
    """Derandomised Hypothesis seeds a test from a digest of its function: the recording
    stand-in must digest the same, or it would record other examples than a plain run makes."""
    from hypothesis.internal.reflection import function_digest

    from autograder import catalogue

    seen = 0
    for topic in catalogue.topic_modules():
        for spec in runner.collect(topic):
            if getattr(spec.fn, "hypothesis", None) is None:
                continue
            with examples.recording_examples(spec.fn):
                stand_in = spec.fn.hypothesis.inner_test
            assert stand_in is not spec.fn.hypothesis.inner_test  # put back afterwards
            assert function_digest(stand_in) == function_digest(spec.fn.hypothesis.inner_test)
            seen += 1
    assert seen >= 40


@pytest.fixture(scope="module")
def quick_slot():
    with Slot(7, Limits(call_seconds=2.0)) as s:
        yield s


@pytest.mark.slow
def test_a_hypothesis_failure_is_reported_as_hypothesis_reports_it(quick_slot, plans):
    """Hypothesis runs a failing example again and reports that run: a function that hangs
    is then "not run again". The replay does the same (red team: the messages differed)."""
    topic = "ex01_vectors"
    code = solution_source(topic) + (
        "\n_normalize_rows = normalize_rows\n\ndef normalize_rows(X, eps=1e-12):\n"
        "    if np.shape(X) == (5, 6):\n        while True:\n            pass\n"
        "    return _normalize_rows(X, eps)\n")
    live = grade_sources(quick_slot, {topic: code}, [topic])
    planned = grade_sources(quick_slot, {topic: code}, [topic], plans=plans)
    assert {n: (r.passed, r.message) for n, r in planned.items()} == {
        n: (r.passed, r.message) for n, r in live.items()}
    assert any("not run again" in r.message for r in live.values())


@pytest.mark.slow
def test_a_slow_wrong_function_spends_no_more_budget_with_a_plan(slot, plans):
    """A wrong function that takes 0.2 s a call: its failing tests stop at their first call,
    live; a plan runs all its recorded calls, but charges only those tests use (red team:
    the budget ran out, and the batch crashed on the next topic's import)."""
    topic = "ex01_vectors"
    code = solution_source(topic) + (
        "\nimport time as _time\n\ndef angle_between(u, v):\n    _time.sleep(0.2)\n"
        "    return 1.0\n")
    sources = {topic: code, "ex02_projections": solution_source("ex02_projections")}
    limits = slot.limits
    slot.limits = Limits(submission_seconds=12.0)
    try:
        live = grade_sources(slot, sources)
        planned = grade_sources(slot, sources, plans=plans)
    finally:
        slot.limits = limits
    verdicts = {n: (r.passed, r.message) for n, r in live.items()}
    assert {n: (r.passed, r.message) for n, r in planned.items()} == verdicts
    assert all(r.passed for n, r in live.items() if "angle_between" not in n)


def test_a_topic_whose_import_finds_the_budget_spent_fails_and_grading_goes_on(slot):
    """Red team: BudgetExhausted on a topic's import escaped run_topic and ended the batch."""
    topic = "ex02_projections"
    s = Session(slot, {topic: solution_source(topic).encode()})
    try:
        s.budget.spent = s.limits.submission_seconds
        results, why = runner.run_topic(s, topic, runner.collect(topic))
    finally:
        s.close()
    assert results and not any(r.passed for r in results)
    assert "used up" in why and all("used up" in r.message for r in results)


def test_a_verdict_met_with_a_refusal_is_not_given_to_another_submission(slot, plans):
    """Red team (round 2): a submission out of budget failed a test on replies another
    submission shared, and the cached failure was then given to that other submission."""
    topic = "ex01_vectors"
    code = solution_source(topic) + (
        "\n_dot = dot\n\ndef dot(u, v):\n    return _dot(u, v) * (1 + 2**-50)\n")
    results = {}
    for who in ("spent", "fresh"):
        s = Session(slot, {topic: code.encode()})
        try:
            s.load(topic)
            if who == "spent":
                # The budget runs out just after the pipeline has run in full: the first
                # recorded reply a test uses is charged past it, and every failing test after
                # that meets a refusal on complete replies. (Leaving 1 ms before the pipeline
                # was flaky: on a quiet machine the replies' seconds did not always add up to
                # 1 ms before the last failing test, and no refusal happened at all.)
                def send(*args, _send=s.pipeline.send, _s=s, **kwargs):
                    replies = _send(*args, **kwargs)
                    _s.budget.spent = _s.limits.submission_seconds - 1e-9
                    return replies

                s.pipeline.send = send
            results[who] = replay.run_planned(s, plans[topic], runner.collect(topic),
                                            runner.reference(topic))
        finally:
            s.close()
    assert any("used up" in r.message for r in results["spent"]), sorted(
        {r.message for r in results["spent"]})
    assert [r.message for r in results["fresh"] if not r.passed] == []


#: Every function raises what it has been given so far, the way a submission would smuggle a
#: hidden test's inputs out through a public test's feedback (which quotes the exception).
LEAKER = '''
import sys

SEEN = sys.__dict__.setdefault("_seen_by_every_topic", [])

def _leak(*args, **kwargs):
    SEEN.append(repr((args, kwargs))[:60])
    worker = sys.modules.get("autograder.sandbox.worker")
    planned = sorted(getattr(worker, "PLANNED", {}))
    raise ValueError(f"{len(SEEN)} calls so far, last {SEEN[-1]!r}; preloaded {planned}")
'''


def _leaker(topic: str) -> bytes:
    names = [e.name for e in catalogue.get_topic(topic).exercises]
    return (LEAKER + "".join(f"\ndef {n}(*a, **k):\n    return _leak(*a, **k)\n"
                             for n in names)).encode()


@pytest.mark.slow
def test_public_feedback_does_not_depend_on_the_hidden_tests(slot, plans):
    """Red team: the zygote held every topic's hidden requests (so a worker's memory did), and
    a topic's hidden tests ran before the next exercise's public ones; a submission raised
    hidden inputs in a public test's message. Public tests now run first, every topic, and
    only their requests are preloaded: a public test's result is the same whether or not the
    hidden tests exist, planned or call by call."""
    topics = ["ex01_vectors", "ex03_softmax"]
    loaded = submission.Loaded(id="leaker", path=Path("leaker"), sha256="0",
                               sources={t: _leaker(t) for t in topics})
    loaded.problems = {t: f"{t}.py not found" for t in catalogue.topic_modules()
                       if t not in topics}

    def public_messages(hidden: bool, planned: bool) -> dict[str, str]:
        specs = {t: runner.collect(t, hidden=hidden) for t in catalogue.topic_modules()}
        these = plan.record(slot, specs, plan.reference_sources()) if planned else None
        g = grade.grade_loaded(slot, loaded, specs, these)
        return {t.name: t.message for t in g.tests if t.visibility == "public"}

    try:
        for planned in (False, True):
            alone = public_messages(hidden=False, planned=planned)
            assert sum("preloaded" in m for m in alone.values()) >= 10, alone
            assert public_messages(hidden=True, planned=planned) == alone
    finally:  # the session's plans are preloaded again for the other tests
        slot.preload({p.key: p.calls for phases in plans.values() for p in phases.values()
                      if p.phase == "public"})
