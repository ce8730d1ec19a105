"""Hostile and broken submissions: the grader holds, credits nothing false, loses nothing.

One class holds every attack of ``tests/hostile/attacks.py`` plus a complete, correct submission
(``complete``, a copy of ``solutions/``) and one correct for topic 1 only (``reference_ex01``).
It is graded by the real ``course grade --jobs 2`` once per test run (shared by all pytest-xdist
workers, and by tests/test_hidden_text.py: :mod:`tests.hostile.graded`), while a second
``course grade`` grades the attacks whose outcome could hang on timing or on the other grader
(``graded.DETERMINISM``) into a second output folder, for the byte-identity check. Each attack
then has its own test on its ``results/<id>.json`` and ``feedback/<id>.md``. Limits are
shortened (``--call-timeout``) so that loops and sleeps cost little.
"""

from __future__ import annotations

import csv
import json
import os
import struct

import numpy as np
import pytest

from autograder.wire import codec
from tests.hostile import harness
from tests.hostile.attacks import ATTACKS, BY_ID, EX01, SECRET_MARKERS
from tests.hostile.graded import CORRECT, DETERMINISM, IS_ROOT, hostile_class
from tests.hostile.graded import active as _active

# One xdist worker runs all of this module and tests/test_hidden_text.py (make test: --dist
# loadgroup), so their graded class is built once and no other worker sits waiting on the
# shared copy's lock.
pytestmark = pytest.mark.xdist_group("hostile-class")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_class(tmp_path_factory)


@pytest.fixture(scope="module")
def docs(hostile):
    return harness.results(hostile["out"])


def _text(hostile, sid: str) -> str:
    out = hostile["out"]
    return ((out / "results" / f"{sid}.json").read_bytes().decode("utf-8")
            + (out / "feedback" / f"{sid}.md").read_bytes().decode("utf-8"))


# ------------------------------------------------------------------ the batch as a whole


@pytest.mark.slow
def test_the_batch_finishes_with_a_row_and_files_for_every_submission(hostile):
    out = hostile["out"]
    ids = sorted([*CORRECT, *(a.id for a in ATTACKS if _active(a))])
    rows = list(csv.reader((out / "grades.csv").read_text("utf-8").splitlines()))
    assert [r[0] for r in rows[1:]] == ids
    for sid in ids:
        assert (out / "results" / f"{sid}.json").is_file(), sid
        assert (out / "feedback" / f"{sid}.md").is_file(), sid
    assert not list(out.rglob("*.tmp")), "a temp file of an atomic write was left behind"


@pytest.mark.slow
def test_the_correct_submission_keeps_full_marks(docs):
    doc = docs["complete"]
    failed = [t["name"] for t in doc["tests"] if t["status"] != "passed" and t["max_score"] > 0]
    assert not failed, failed
    assert doc["score"] == doc["max_score"] == pytest.approx(
        round(sum(t["max_score"] for t in doc["tests"]), 2), abs=0.011)
    ref = harness.by_exercise(docs["reference_ex01"])
    for ex, tests in ref.items():
        if ex.startswith(EX01 + "."):
            assert all(t["status"] == "passed" for t in tests), ex


@pytest.mark.slow
def test_every_submission_has_every_test_and_the_same_max(docs):
    names = [t["name"] for t in docs["complete"]["tests"]]
    for sid, doc in docs.items():
        assert [t["name"] for t in doc["tests"]] == names, sid
        assert doc["max_score"] == docs["complete"]["max_score"], sid


@pytest.mark.slow
def test_nothing_written_outside_the_output_folder_and_temp_dirs(hostile):
    assert hostile["base_changes"] == [], "the class folder or its neighbours changed"
    assert hostile["repo_changes"] == [], "a worker wrote into the repository"
    assert hostile["canaries"] == [], "a canary file was left outside the worker's temp dir"
    assert hostile["victim"] == f"VICTIM_SECRET_{hostile['ctx']['MARK']}\n"


@pytest.mark.slow
def test_no_process_outlives_the_batch(hostile):
    assert hostile["leftover"] == []


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason=BY_ID["network"].root_only)
def test_no_worker_reached_the_network(hostile):
    assert hostile["net_hits"] == []


# ------------------------------------------------------------------ one test per attack


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_attack(hostile, docs, attack):
    if not _active(attack):
        pytest.skip(f"not root: {attack.root_only}")
    doc = docs[attack.id]
    extra = doc["extra_data"]
    assert extra["status"] == attack.status, doc["output"][:2000]
    assert doc["output"].strip()
    groups = harness.by_exercise(doc)
    for t in doc["tests"]:
        assert t["status"] in ("passed", "failed")
        if t["status"] == "failed":
            assert t["output"].strip(), f"{t['name']}: failed without a message"
    # Credit only where honestly earned.
    for ex, tests in groups.items():
        if ex in attack.full:
            bad = [t["name"] for t in tests if t["status"] != "passed"]
            assert not bad, f"{ex} should keep its points: {bad[:3]} … {tests[0]['output']}"
        elif ex not in attack.may_pass:
            won = [t["name"] for t in tests if t["status"] == "passed"]
            assert not won, f"{ex} earned points it did not: {won[:3]}"
    for ex in attack.full:
        assert ex in groups, ex
    # A message the student can act on.
    text = _text(hostile, attack.id)
    for needle in attack.says:
        assert needle in text, f"{needle!r} not in the results of {attack.id}"
    # Nothing of the instructor's reaches a student.
    for secret in (*SECRET_MARKERS, hostile["ctx"]["SECRET"],
                   f"VICTIM_SECRET_{hostile['ctx']['MARK']}"):
        assert secret not in text, f"{secret!r} leaked into the results of {attack.id}"
    if attack.twin:  # tampering may lose points, never win one its honest twin lacks
        honest = {t["name"] for t in docs[attack.twin]["tests"] if t["status"] == "passed"}
        won = sorted(t["name"] for t in doc["tests"]
                     if t["status"] == "passed" and t["name"] not in honest)
        assert not won, f"{attack.id} passes what its honest twin fails: {won}"


# ------------------------------------------------------------------ determinism


@pytest.mark.slow
def test_a_second_run_writes_byte_identical_grades_and_results(hostile):
    """The second grading (``graded.DETERMINISM``, at the same time as the first) writes the
    same bytes for each of its submissions: results, feedback and grades.csv rows."""
    assert hostile["rc2"] == 0, hostile["stderr2"][-3000:]
    out, out2 = hostile["out"], hostile["base"] / "out2"
    again = set(hostile["again"])
    lines = (out / "grades.csv").read_text("utf-8").splitlines(keepends=True)
    mine = [lines[0], *(line for line in lines[1:] if next(csv.reader([line]))[0] in again)]
    assert (out2 / "grades.csv").read_text("utf-8") == "".join(mine)
    first, second = harness.results(out), harness.results(out2)
    assert sorted(second) == sorted(again)
    differ = [sid for sid in second
              if harness.comparable(first[sid]) != harness.comparable(second[sid])]
    assert not differ, f"results differ between two runs for {differ}"
    for sid in second:
        assert ((out / "feedback" / f"{sid}.md").read_bytes()
                == (out2 / "feedback" / f"{sid}.md").read_bytes()), sid


def test_the_second_run_grades_real_attacks():
    """Every id ``graded.DETERMINISM`` names is a submission of the class (a renamed attack
    would silently drop out of the byte-identity check)."""
    assert set(DETERMINISM) <= {*CORRECT, *BY_ID}
    assert len(set(DETERMINISM)) == len(DETERMINISM)


def test_a_typed_submission_id_that_is_not_utf8_is_a_usage_error(tmp_path):
    """Typed on the command line; as a child of ``--class`` it is an error result under a
    derived id instead (tests/test_bad_uploads.py)."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    weird = os.fsencode(str(class_dir)) + b"/caf\xe9"
    os.mkdir(weird)
    with open(weird + b"/ex01_vectors.py", "wb") as f:
        f.write(b"import numpy as np\n")
    proc = harness.course("grade", os.fsdecode(weird), "--out", str(tmp_path / "out"),
                          timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "UTF-8" in proc.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()


# ------------------------------------------------------------------ forged frames, decoded directly


def _frame_body(value: object, blobs: list[np.ndarray] = ()) -> bytes:
    raw = [codec._npy_bytes(b) for b in blobs]
    doc = json.dumps({"v": value, "blobs": [len(b) for b in raw]}).encode()
    return struct.pack("<I", len(doc)) + doc + b"".join(raw)


def _tensor_tag(dtype: str, device: str, shape: list, data: int | None) -> dict:
    return {"__tensor__": {"dtype": dtype, "device": device, "shape": shape,
                           "requires_grad": False, "data": data}}


@pytest.mark.parametrize("value, blobs, why", [
    (_tensor_tag("float64", "cpu", [2, 2], None), [], "without values"),
    (_tensor_tag("float64", "cpu", [2, 2], 0), [np.zeros(4)], "shape"),
    (_tensor_tag("float64", "cpu", [1], 0), [np.zeros(1, np.float32)], "float32 values"),
    (_tensor_tag("bfloat16", "cpu", [1], 0), [np.array([1 / 3], np.float32)], "cannot hold"),
    (_tensor_tag("float32", "meta", [1], 0), [np.zeros(1, np.float32)], "with values"),
    ({"__spec__": {"dtype": "float64", "device": "cpu", "shape": [1], "requires_grad": False,
                   "data": 0}}, [np.zeros(1)], "spec"),
], ids=["cpu-without-values", "shape-lie", "dtype-lie", "bf16-lie", "meta-with-values",
        "spec-from-worker"])
def test_a_forged_tensor_tag_from_the_worker_is_refused(value, blobs, why):
    """The worker's encoder is student-controlled (forged_tensor_no_values patches it): the
    trusted decoder takes a tensor only when its tag matches the values that came with it."""
    with pytest.raises(codec.DecodeError, match=why):
        codec.decode(_frame_body(value, blobs))


def test_an_honest_tensor_tag_still_decodes():
    bf16 = np.array([1.0, -2.5, 0.15625], np.float32)  # all exactly representable in bfloat16
    got = codec.decode(_frame_body(_tensor_tag("bfloat16", "cpu", [3], 0), [bf16]))
    assert got.dtype == "bfloat16" and got.values.tolist() == bf16.tolist()
    meta = codec.decode(_frame_body(_tensor_tag("float32", "meta", [2, 5], None)))
    assert meta.values is None and meta.shape == (2, 5)


def test_the_battery_is_big_enough():
    assert len(ATTACKS) >= 30
    assert json.dumps([a.id for a in ATTACKS])  # ids are plain names
