"""One hard wall-clock deadline per submission (issue 11, part 3: time).

``--submission-timeout`` bounds ALL of a submission's work, pipelined (a batch plan runs a
topic's recorded calls before any test reads them) or live, public and hidden phases: once it
has passed, every remaining test fails with "submission time budget spent". Without it, calls
a pipeline ran that no test read were never charged, and a slow submission ran to about twice
its budget. Graded here by the real ``course grade``, with a plan (three submissions or more).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from autograder.limits import Limits
from autograder.driver.errors import BUDGET_SPENT, BudgetExhausted, WorkerDied
from autograder.driver.protocol import Call
from autograder.driver.session import Session
from tests.hostile import harness

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("deadline-class")

BUDGET = 3.0
#: Past the deadline: the call it cut short is killed and reaped, the rest is refused at once.
MARGIN = 1.5
TOPICS = ("ex01_vectors", "ex02_projections")

#: Appended to topic 1's reference solution: in hidden tests (the public ones call one_hot with
#: vocab_size 3 only) one_hot sleeps, then answers wrong. Each failing test stops at its first
#: call, so the calls a plan pipelined for the rest of it are read by no test: they used to
#: cost the budget nothing, and the submission ran to about twice its budget.
SLOW_ONE_HOT = '''

import time as _time

_one_hot = one_hot


def one_hot(ids, vocab_size):
    if vocab_size == 3:
        return _one_hot(ids, vocab_size)
    _time.sleep(0.5)
    return None
'''


def _grade(base: Path) -> dict:
    class_dir, out = base / "class", base / "out"
    harness.copy_solutions(class_dir / "fast_a", ["ex01_vectors"])
    harness.copy_solutions(class_dir / "fast_b", ["ex01_vectors"])
    sleepy = class_dir / "sleepy"
    sleepy.mkdir()
    for topic in TOPICS:
        text = (harness.ROOT / "solutions" / f"{topic}.py").read_text("utf-8")
        (sleepy / f"{topic}.py").write_text(text + SLOW_ONE_HOT * (topic == "ex01_vectors"),
                                            "utf-8")
    t0 = time.monotonic()
    proc = harness.course("grade", "--class", str(class_dir), "--out", str(out), "--jobs", "1",
                          "--call-timeout", "2", "--submission-timeout", f"{BUDGET:g}",
                          timeout=900)
    return {"rc": proc.returncode, "stderr": proc.stderr[-5000:],
            "seconds": round(time.monotonic() - t0, 1)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    return harness.graded_once(tmp_path_factory, "deadline", _grade)


def _doc(out: Path, sid: str) -> dict:
    return json.loads((out / "results" / f"{sid}.json").read_text("utf-8"))


@pytest.mark.slow
def test_a_slow_submission_stops_at_its_budget_with_a_plan(graded):
    doc = _doc(graded, "sleepy")
    assert doc["execution_time"] < BUDGET + MARGIN, doc["execution_time"]
    # In the order they ran: every topic's public tests, then every topic's hidden ones.
    tests = sorted(doc["tests"], key=lambda t: t["visibility"] != "visible")
    spent = [i for i, t in enumerate(tests) if BUDGET_SPENT in t["output"]]
    assert spent, "no test says the budget was spent"
    # Every test after the deadline says so: the last ones of each phase (hidden after public).
    for topic in TOPICS:
        ours = [t for t in tests if t["name"].startswith(f"{topic}.")]
        hidden = [t for t in ours if t["visibility"] != "visible"]
        assert hidden and all(BUDGET_SPENT in t["output"] for t in hidden[-3:]), topic
    assert all(t["status"] == "failed" for t in tests[spent[0]:])
    assert any(t["status"] == "passed" for t in tests[:spent[0]])  # it ran until then


@pytest.mark.slow
def test_the_other_submissions_are_unaffected(graded):
    for sid in ("fast_a", "fast_b"):
        doc = _doc(graded, sid)
        ex01 = [t for t in doc["tests"] if t["name"].startswith("ex01_vectors.")]
        assert ex01 and all(t["status"] == "passed" for t in ex01), sid


def test_the_deadline_counts_pipelined_work_no_test_read(slot):
    """A pipeline's calls count though no test reads their replies (the budget's ``spent``
    does not charge them): past the deadline, a fed reply is refused too."""
    source = b"import time\n\ndef nap(x):\n    time.sleep(0.2)\n    return x\n"
    s = Session(slot, {"m": source})
    try:
        s.load("m")
        s.limits = Limits(call_seconds=5.0, submission_seconds=1.0)
        calls = [Call(_frame("nap", i), b"", "m.nap", "m.nap") for i in range(20)]
        t0 = time.monotonic()
        out = s.pipeline.send(calls)
        assert time.monotonic() - t0 < 1.0 + 0.5
        assert s.spent < 0.5  # nothing charged: no test read a reply
        time.sleep(max(0.0, s.time_left()) + 0.05)
        s.pipeline.feed(calls, out, 0, len(calls))
        with pytest.raises(BudgetExhausted, match=BUDGET_SPENT):
            s.call("m", "nap", (0,))
        with pytest.raises(BudgetExhausted, match=BUDGET_SPENT):
            s.call("m", "nap", (1,))  # live now, refused as well
    finally:
        s.pipeline.feed()
        s.close()


def _frame(name: str, *args: object) -> bytes:
    from autograder.wire import codec

    return codec.encode({"op": "call", "module": "m", "name": name, "args": list(args),
                         "kwargs": {}, "keep": False})


class _LateSender:
    """A socket whose sender pauses after each send, as a grader descheduled under load: by
    the time it looks again, the worker has answered what it had and died, and the grader
    finds its replies and the closed socket at once."""

    def __init__(self, sock):
        self._sock = sock

    def send(self, data):
        n = self._sock.send(data)
        time.sleep(0.2)
        return n

    def __getattr__(self, name):
        return getattr(self._sock, name)


def test_a_worker_that_dies_while_requests_still_go_out_is_charged_at_its_own_call(slot):
    """The worker answers three calls, then dies at the fourth while megabytes of later
    requests are still to be sent. The grader's next send fails (EPIPE) before it has read
    those three replies from its buffer: they must still count, and the death must be charged
    to call 3. Charged at whichever call the send had reached, the same submission got
    different grades from run to run under load (the hostile class graded twice)."""
    source = b"import os\n\ndef echo(x):\n    return 0\n\ndef die(x):\n    os._exit(0)\n"
    big = np.zeros(2**17)  # 1 MiB per request: more than a socket buffer holds
    s = Session(slot, {"m": source})
    try:
        s.load("m")
        s.sock = _LateSender(s.sock)
        calls = [Call(_frame("echo", i), b"", "m.echo", "m.echo") for i in range(3)]
        calls.append(Call(_frame("die", 0), b"", "m.die", "m.die"))
        calls += [Call(_frame("echo", big), b"", "m.echo", "m.echo") for _ in range(8)]
        out = s.pipeline.send(calls)
        assert out.failed_at == 3, out.failed_at
        assert all(r is not None for r in out.replies[:3])
        assert isinstance(out.failure, WorkerDied)
    finally:
        s.close()
