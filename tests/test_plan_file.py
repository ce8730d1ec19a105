"""A plan kept in a file (autograder.grading.plan_file): round trip, and no use of a stale one.

The end-to-end check (a Gradescope image records its plan in setup.sh; planned and unplanned
runs give the same results.json) is in tests/test_gradescope.py.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from autograder.grading import plan, plan_file
from autograder.grading import runner
from autograder.driver.protocol import Call


def _plans() -> plan_file.Plans:
    ref = plan.MemoReference(runner.reference("ex01_vectors"))
    assert ref.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 11.0  # now kept in the memo
    ref.frozen = True
    p = plan.TopicPlan("ex01_vectors", ref=ref, phase="hidden")
    p.calls.append(Call(frame=b"\x00" * 8, reply=b"reply", where="ex01_vectors.dot",
                        key="ex01_vectors.dot", timeout=None))
    p.spans["t"] = (0, 1)
    p.expected["t"] = [b"reply"]
    p.passed.add("t")
    p.verdicts[("t", b"d")] = (True, "", (0,))
    return {"ex01_vectors": {"hidden": p}}


def test_a_saved_plan_loads_back_with_its_reference_memo(tmp_path):
    path = plan_file.save(_plans(), tmp_path / "p" / "plan.pickle", hidden=True)
    assert path.stat().st_mode & 0o777 == 0o600
    assert not list(path.parent.glob(".*.tmp"))
    got = plan_file.load(path, hidden=True)
    p = got["ex01_vectors"]["hidden"]
    assert p.calls[0].reply == b"reply" and p.spans == {"t": (0, 1)} and p.passed == {"t"}
    assert p.verdicts == {}  # a batch's memory, never saved
    assert p.ref.frozen and len(p.ref._cache) == 1
    # The memo serves its kept result, and the module behind it is the reference, reloaded.
    assert p.ref.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 11.0
    assert p.ref.dot(np.array([1.0]), np.array([2.0])) == 2.0


def _write(path, header, body: bytes) -> None:
    with open(path, "wb") as f:
        pickle.dump(header, f)
        f.write(body)


@pytest.mark.parametrize("header, why", [
    ({"format": plan_file.FORMAT, "version": "0.0.0+000000000000", "hidden": True},
     "made by grader 0.0.0+000000000000"),
    ({"format": plan_file.FORMAT + 1}, "another format"),
    ("not a header", "another format"),
])
def test_a_stale_plan_is_never_unpickled(tmp_path, capsys, header, why):
    """Only the header is read: the body here would raise if it were unpickled."""
    path = tmp_path / "plan.pickle"
    _write(path, header, b"not a pickle at all")
    assert plan_file.load(path, hidden=True) is None
    assert why in capsys.readouterr().err


def test_a_plan_without_hidden_tests_does_not_serve_a_run_that_grades_them(tmp_path, capsys):
    path = plan_file.save(_plans(), tmp_path / "plan.pickle", hidden=False)
    assert plan_file.load(path, hidden=False) is not None
    assert plan_file.load(path, hidden=True) is None
    assert "without the hidden tests" in capsys.readouterr().err


def test_no_file_or_a_damaged_one_means_grading_call_by_call(tmp_path, capsys):
    assert plan_file.load(tmp_path / "absent.pickle", hidden=True) is None
    (tmp_path / "damaged.pickle").write_bytes(b"\x80\x05garbage")
    assert plan_file.load(tmp_path / "damaged.pickle", hidden=True) is None
    assert "unreadable" in capsys.readouterr().err
