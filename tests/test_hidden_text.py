"""In a hidden test, every text that reaches a person is fixed by the grader (issue 11, part 4).

A submission may choose text (an exception's class name, a returned object's class name, a
tensor's ``.device``, what it prints, an import error's message) and build it from a hidden
test's inputs. The attacks ``tests/hostile/attacks.py`` calls ``HIDDEN_TEXT_ATTACKS`` do so in
hidden tests only; with ``REPORT_INJECTION`` they are part of the hostile class, graded once per
test run by the real ``course grade`` (with a batch plan, as a class is) for this module and
tests/test_hostile.py (:mod:`tests.hostile.graded`), and no text of theirs may appear in
``results/*.json``, ``feedback/*.md`` or ``report.html``. Each of these tests was seen to fail
with its protection removed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from autograder.wire import codec
from autograder.results import model
from autograder.results import writers as outputs
from autograder.results import report
from autograder.driver import protocol
from autograder.sandbox import worker
from autograder.driver.errors import HIDDEN, StudentException, WorkerDied
from autograder.driver.protocol import Call
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.hostile.attacks import (
    EX01,
    FAKE_REASON,
    HIDDEN_PRINT,
    HIDDEN_TEXT,
    HIDDEN_TEXT_ATTACKS,
    REPORT_INJECTION,
)
from tests.hostile.graded import hostile_class

# The hostile class is graded on the worker that runs tests/test_hostile.py: this module
# shares its xdist group (make test: --dist loadgroup), so no other worker waits on its lock.
pytestmark = pytest.mark.xdist_group("hostile-class")

ATTACK_IDS = [a.id for a in HIDDEN_TEXT_ATTACKS]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """The hostile class's output folder; it holds every attack this module reads."""
    return hostile_class(tmp_path_factory)["out"]


def _student_texts(out: Path, sid: str) -> dict[str, str]:
    """Everything a person reads of ``sid``: its results (less the instructors' copy of what the
    hidden phase printed), its feedback, and the whole report."""
    doc = json.loads((out / "results" / f"{sid}.json").read_text("utf-8"))
    doc["extra_data"].pop("hidden_phase_output")
    return {"results": json.dumps(doc, ensure_ascii=False),
            "feedback": (out / "feedback" / f"{sid}.md").read_text("utf-8"),
            "report": (out / "report.html").read_text("utf-8")}


@pytest.mark.slow
@pytest.mark.parametrize("sid", ATTACK_IDS)
def test_no_text_a_submission_chose_in_a_hidden_test_reaches_anyone(graded, sid):
    for where, text in _student_texts(graded, sid).items():
        for marker in (HIDDEN_TEXT, HIDDEN_PRINT):
            assert marker not in text, f"{sid}: its hidden-test text reached {where}"
    doc = json.loads((graded / "results" / f"{sid}.json").read_text("utf-8"))
    hidden_one_hot = [t for t in doc["tests"] if t["name"].startswith(f"{EX01}.one_hot")
                      and t["visibility"] != "visible"]
    assert hidden_one_hot, "the hidden one_hot tests ran"
    # The attack did fire: each says what it did in the grader's own words.
    expected = {"hidden_text_exception_class": "an exception of the submission's own class",
                "hidden_text_returned_type": "<the submission's own class>",
                "hidden_text_tensor_device": "a device the grader does not know"}.get(sid)
    if expected:
        assert any(expected in t["output"] for t in hidden_one_hot), hidden_one_hot[0]
    if sid == "hidden_text_preloaded_requests":  # it imports: the hidden worker held nothing
        assert EX01 not in doc["extra_data"]["topic_notes"]


@pytest.mark.slow
def test_what_the_hidden_phase_printed_is_the_instructors_alone(graded):
    doc = json.loads((graded / "results" / "hidden_text_printed.json").read_text("utf-8"))
    assert HIDDEN_PRINT in doc["extra_data"]["hidden_phase_output"]  # it printed
    assert doc["extra_data"]["student_output"] == ""  # …in the hidden phase only
    assert "Output of your code" not in doc["output"]  # not even whether it printed


@pytest.mark.slow
def test_a_note_cannot_pose_as_another_topics_reason_in_the_report(graded):
    sid = REPORT_INJECTION.id
    doc = json.loads((graded / "results" / f"{sid}.json").read_text("utf-8"))
    notes = doc["extra_data"]["topic_notes"]
    assert "\nex02_projections: " in notes[EX01]  # the message, structured, as it was raised
    (result,) = [r for r in report.load_results(graded) if r.id == sid]
    assert "ex02_projections" not in result.reasons and "" not in result.reasons
    (lines,) = [lines for r, lines in report.problem_rows([result])]
    assert not any(line.startswith(("ex02_projections", "nothing could be graded"))
                   for line in lines), lines
    page = (graded / "report.html").read_text("utf-8")
    assert f"\nex02_projections: {FAKE_REASON}" not in page
    assert f"\nnothing could be graded: {FAKE_REASON}" not in page
    # Nor in the student's own summary, or the feedback's quote of the note: one line each.
    summary = doc["output"].splitlines()
    assert not any(line.startswith(("ex02_projections: ", "Nothing could be graded: "))
                   for line in summary), summary
    quoted = [line for line in (graded / "feedback" / f"{sid}.md").read_text("utf-8")
              .splitlines() if line.startswith("> ") and FAKE_REASON in line]
    assert quoted and all(line.startswith(f"> `{EX01}.py could not be imported") for line in quoted)
    ex02 = [t for t in doc["tests"] if t["name"].startswith("ex02_projections.")]
    assert ex02 and all(t["status"] == "passed" for t in ex02)  # ex02 really ran


# ------------------------------------------------------------------ the pieces, directly


def test_hidden_requests_are_never_preloaded(tmp_path):
    """No worker may hold a hidden input before it is asked: neither the slot nor the zygote
    takes a hidden plan (the plan's hidden requests travel as frames when their topic runs)."""
    call = Call(codec.encode({"op": "ping"}), b"", "ping", "m.ping")
    with Slot(0) as slot:
        with pytest.raises(ValueError, match="never preloaded"):
            slot.preload({f"{EX01}:hidden": [call]})
        assert slot.preload({f"{EX01}:public": [call]}) == {f"{EX01}:public": 1}
    with pytest.raises(ValueError, match="only public"):
        worker.predecode(call.frame, {f"{EX01}:hidden": 1})


@pytest.mark.slow
def test_a_batch_plan_preloads_no_hidden_request():
    from autograder.grading import plan
    from autograder.grading import runner

    specs = {t: runner.collect(t) for t in (EX01,)}
    with Slot(5) as hidden, Slot(6) as public:
        plans = plan.record(hidden, specs, plan.reference_sources(), public)
        assert plans[EX01]["hidden"].calls  # there were hidden requests…
        assert list(public.preloaded) == [f"{EX01}:public"]
        assert hidden.preloaded == {}  # …and the hidden tests' zygote holds none of them


@pytest.mark.parametrize("device", ["cpu", "meta", "cuda", "cuda:0", "mps"])
def test_a_tensor_on_a_known_device_decodes(device):
    data = None if device == "meta" else 0
    blobs = [] if device == "meta" else [codec._npy_bytes(np.zeros(2, np.float32))]
    got = codec.decode(_body(_tensor(device, "float32", data), blobs))
    assert got.device == device


@pytest.mark.parametrize("device, dtype", [
    ("HIDDENTEXT_7", "float32"), ("cuda:12", "float32"), ("cpu ", "float32"),
    ("meta", "HIDDENTEXT_dtype"),
])
def test_a_tensor_tag_outside_the_closed_sets_is_a_fixed_decode_error(device, dtype):
    data = None if device == "meta" else 0
    blobs = [] if data is None else [codec._npy_bytes(np.zeros(2, np.float32))]
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(_body(_tensor(device, dtype, data), blobs))
    assert "HIDDENTEXT" not in str(info.value) and device not in str(info.value)


def test_decode_errors_do_not_quote_the_frame():
    for doc in ({"v": {"HIDDENTEXT_tag": 1}, "blobs": []}, {"v": {"__dict__": 5}, "blobs": []},
                {"v": {"__handle__": {"HIDDENTEXT_key": 1}}, "blobs": []}):
        raw = json.dumps(doc).encode()
        with pytest.raises(codec.DecodeError) as info:
            codec.decode(len(raw).to_bytes(4, "little") + raw)
        assert "HIDDENTEXT" not in str(info.value) and "5" not in str(info.value)


def test_only_real_classes_of_known_packages_keep_their_names():
    assert protocol.closed_type("numpy.ndarray") == "numpy.ndarray"
    assert protocol.closed_type("builtins.set") == "builtins.set"
    for forged in ("numpy.HIDDENTEXT_7", "builtins.HIDDENTEXT_7", "ex01_vectors.Box",
                   "numpy.ndarray.HIDDENTEXT", "os.system", "numpy.linalg.HIDDENTEXT"):
        assert protocol.closed_type(forged) is None, forged


def test_a_hidden_tests_exception_shows_only_builtin_class_names():
    own = codec.RemoteException(["HIDDENTEXT_7", "ValueError", "Exception"], "secret 7")
    builtin = codec.RemoteException(["ZeroDivisionError", "ArithmeticError"], "secret 7")
    token = HIDDEN.set(True)
    try:
        shown = str(StudentException(own, "ex01_vectors.one_hot"))
        assert "HIDDENTEXT" not in shown and "secret" not in shown
        assert "own class" in shown and "ValueError" in shown
        assert "ZeroDivisionError" in str(StudentException(builtin, "f"))
    finally:
        HIDDEN.reset(token)
    assert "HIDDENTEXT_7: secret 7" in str(StudentException(own, "f"))  # public: all


def test_a_hidden_phase_death_does_not_say_the_exit_status(slot):
    source = b"import os\n\ndef bye(n):\n    os._exit(n)\n"
    s = Session(slot, {"m": source})
    try:
        s.phase = "hidden"
        with pytest.raises(WorkerDied) as info:
            s.call("m", "bye", (213,))
        assert "213" not in str(info.value) and "died" in str(info.value)
    finally:
        s.close()


def test_a_note_is_written_on_one_line_and_kept_structured():
    g = model.Result.of("x", "0", [],
                        topic_notes={EX01: "no\nex02_projections: fake\u2028line"},
                        topic_kinds={EX01: "import_error"})
    doc = json.loads(outputs.results_json(g))
    assert doc["extra_data"]["topic_notes"] == g.topic_notes
    assert f"{EX01}: no\\nex02_projections: fake\\u2028line" in doc["output"].splitlines()
    assert report._reasons(doc) == g.topic_notes
    feedback = outputs.feedback_md(g)
    assert not any(line.startswith("ex02_projections") for line in feedback.splitlines())


def test_hidden_output_leaves_no_trace_in_what_the_student_sees():
    g = model.Result.of("x", "0", [], hidden_output="HIDDENTEXT_7\n")
    doc = json.loads(outputs.results_json(g))
    assert "Output of your code" not in doc["output"]
    assert doc["extra_data"]["hidden_phase_output"] == "HIDDENTEXT_7\n"
    assert "HIDDENTEXT" not in outputs.feedback_md(g)


def _tensor(device: str, dtype: str, data: int | None) -> dict:
    return {"__tensor__": {"dtype": dtype, "device": device, "shape": [2],
                           "requires_grad": False, "data": data}}


def _body(value: object, blobs: list[bytes]) -> bytes:
    doc = json.dumps({"v": value, "blobs": [len(b) for b in blobs]}).encode()
    return len(doc).to_bytes(4, "little") + doc + b"".join(blobs)
