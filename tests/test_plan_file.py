"""A plan kept in a file (autograder.grading.plan_file): round trip, and no use of a stale one.

The end-to-end check (a Gradescope image records its plan in setup.sh; planned and unplanned
runs give the same results.json) is in tests/test_gradescope.py.
"""

from __future__ import annotations

import os
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


# ------------------------------------------------------------------ the plan course grade keeps


@pytest.fixture
def recordings(monkeypatch):
    """plan_file.record replaced by a quick one that saves :func:`_plans` and notes, each time,
    whether the host-wide hidden phase lock was held (a shared lock must then be refused)."""
    import fcntl
    import threading

    from autograder.grading import phase_lock

    made: list[bool] = []

    def record(path, *, hidden=True, limits=None):
        fd = os.open(phase_lock.lock_path(), os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            held = False
        except BlockingIOError:
            held = True
        finally:
            os.close(fd)
        threading.Event().wait(0.3)  # long enough for a concurrent caller to reach the lock
        made.append(held)
        return plan_file.save(_plans(), path, hidden=hidden)

    monkeypatch.setattr(plan_file, "record", record)
    monkeypatch.delenv(plan_file.KEEP_ENV, raising=False)
    return made


def test_a_kept_plan_is_recorded_once_under_the_hidden_lock_then_replayed(tmp_path, recordings):
    path = tmp_path / "suites" / ".grading-plan.pickle"
    path.parent.mkdir()
    got, said = plan_file.kept(path)
    assert got == path and "recorded" in said and "none was kept" in said
    assert recordings == [True]  # recorded holding the hidden phase lock
    got, said = plan_file.kept(path)
    assert got == path and said.startswith("replaying")
    assert recordings == [True]  # replayed, not recorded again
    assert plan_file.load(path, hidden=True) is not None


def test_a_kept_plan_of_another_grader_version_is_recorded_again(tmp_path, recordings):
    path = tmp_path / "plan.pickle"
    _write(path, {"format": plan_file.FORMAT, "version": "0.0.0+000000000000", "hidden": True},
           b"not a pickle at all")
    got, said = plan_file.kept(path)
    assert got == path and "made by grader 0.0.0+000000000000" in said
    assert len(recordings) == 1 and plan_file.load(path, hidden=True) is not None


def test_concurrent_graders_record_the_kept_plan_once(tmp_path, recordings):
    import threading

    path = tmp_path / "plan.pickle"
    results = []
    threads = [threading.Thread(target=lambda: results.append(plan_file.kept(path)[0]))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [path] * 3
    assert len(recordings) == 1


def test_no_plan_is_kept_where_it_cannot_be_written_or_is_not_wanted(tmp_path, recordings,
                                                                     monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    got, said = plan_file.kept(blocker / "plan.pickle")  # its folder is a file
    assert got is None and "cannot keep a plan" in said
    monkeypatch.setenv(plan_file.KEEP_ENV, "0")
    got, said = plan_file.kept(tmp_path / "plan.pickle")
    assert got is None and plan_file.KEEP_ENV in said
    assert recordings == [] and not (tmp_path / "plan.pickle").exists()


def test_the_kept_plan_lives_where_no_worker_can_see_it():
    from autograder import host, paths

    assert plan_file.KEPT == paths.PLAN_FILE
    assert any(str(plan_file.KEPT).startswith(p.rstrip("/") + "/") for p in host.secret_paths())
