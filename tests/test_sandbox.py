"""The grading contract (docs/design/grading-contract.md), one test per point, through the real
sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from autograder import host
from autograder.limits import Limits
from autograder.driver.errors import (BadResult, BudgetExhausted, CallTimeout, ImportFailed,
                                       StudentException, WorkerDied)
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.helpers import ROOT

PROBE = '''
import os, sys, time
import numpy as np

def pid():
    return os.getpid()

def cwd_listing():
    return sorted(os.listdir("."))

def sub_listing():
    return sorted(os.listdir(sys.path[0]))

def open_ptys(n):
    """How many pseudo-terminals this process can open (each one counts host-wide): pairs
    made with openpty(), which fails unless /dev/ptmx hands out a real pty (where the sandbox
    binds /dev/null onto it, opening the path succeeds but makes no pty)."""
    fds = []
    for _ in range(n):
        try:
            fds.extend(os.openpty())
        except OSError:
            break
    for fd in fds:
        os.close(fd)
    return len(fds) // 2

def write_here(name):
    try:
        with open(os.path.join(sys.path[0], name), "w") as f:
            f.write("x")
        return "written"
    except OSError as exc:
        return type(exc).__name__

def can_import(name):
    try:
        __import__(name)
        return True
    except Exception:
        return False

def read(path):
    try:
        with open(path, "rb") as f:
            return len(f.read())
    except Exception as exc:
        return type(exc).__name__

def patch_numpy():
    np.allclose = lambda *a, **k: True
    np.testing.assert_allclose = lambda *a, **k: None
    return np.allclose(1, 2)

def spin():
    while True:
        pass

def die(code):
    os._exit(code)

def leave():
    sys.exit(3)

def segfault():
    import ctypes
    ctypes.string_at(0)

def big(n):
    return np.zeros(n, dtype=np.uint8)

def hog(gib):
    return len(bytearray(int(gib * 2**30)))

def shout(n):
    sys.stdout.write("x" * n)
    sys.stdout.flush()
    return n

def forks(n):
    kids = []
    for _ in range(n):
        try:
            kids.append(os.fork())
        except OSError:
            break
        if kids[-1] == 0:
            time.sleep(30)
            os._exit(0)
    return len(kids)

def uid():
    return os.getuid()

def frozen():
    import gc
    return gc.get_freeze_count()

def connect(port):
    import socket
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1)
        return "connected"
    except OSError as exc:
        return type(exc).__name__

def connect_abstract(name):
    import socket
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(chr(0) + name)
        return "connected"
    except OSError as exc:
        return type(exc).__name__
'''


@pytest.fixture
def session(slot):
    s = Session(slot, {"ex01_vectors": PROBE.encode()})
    yield s
    s.close()


def call(s, name, *args):
    return s.call("ex01_vectors", name, args)


def test_student_code_runs_in_another_process(session):
    assert call(session, "pid") != os.getpid()


def test_monkeypatching_numpy_in_the_worker_leaves_the_grader_alone(session):
    assert call(session, "patch_numpy") is True  # the worker's numpy is patched…
    assert not np.allclose(1, 2)  # …ours is not
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(1, 2)


def test_worker_cwd_is_empty_scratch_and_the_submission_comes_first_on_its_path(session):
    assert call(session, "cwd_listing") == []
    assert call(session, "sub_listing") == ["ex01_vectors.py"]


def test_a_worker_starts_with_the_zygotes_objects_frozen(session):
    """The zygote freezes its heap before each fork (gc.freeze): the worker's collections then
    skip the hundreds of thousands of objects torch and the rest left there, instead of
    writing to each one's header and so copying every page of the shared heap."""
    assert call(session, "frozen") > 100_000


THREADS = """
import os
{before}
from autograder.driver.session import Session
from autograder.driver.slot import Slot
with Slot(0) as slot:
    import torch
    session = Session(slot, {{"ex01_vectors": b"def f():\\n    return 1\\n"}})
    try:
        assert session.call("ex01_vectors", "f", ()) == 1  # a worker forked
        print(torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS"))
    finally:
        session.close()
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: one thread is the default")
@pytest.mark.parametrize("before", ["", "import torch"], ids=["torch-later", "torch-first"])
def test_a_process_that_drives_workers_leaves_them_the_cores(before):
    """The grader's own torch runs on one thread, whether it was imported before the slot or
    after (a pool's slot process imports it with the suites): an OpenMP pool's idle threads
    spin on the cores the workers need (docs/design/measured-facts.md, "The grader's own
    threads"). The process's environment stays as it was: its other children are not ours."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", THREADS.format(before=before)], env=env,
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1", "None"]


@pytest.mark.skipif(not host.is_root(), reason="mount namespaces need root")
def test_as_root_a_worker_cannot_open_pseudo_terminals(session):
    """Red team: ptys are a host-wide pool (kernel.pty.max); a worker could drain it."""
    assert call(session, "open_ptys", 5) == 0
    master, follower = os.openpty()  # the host still can
    os.close(master)
    os.close(follower)


@pytest.mark.skipif(not host.is_root(), reason="mount namespaces need root")
def test_as_root_the_submission_is_read_only(session):
    assert call(session, "write_here", "planted.py") == "OSError"  # EROFS


def test_solutions_and_suites_are_not_importable(session):
    for name in ("solutions", "solutions.ex01_vectors", "autograder.suites.hidden.ex01_vectors",
                 "tests"):
        assert call(session, "can_import", name) is False, name


@pytest.mark.skipif(not host.is_root(), reason="file-system isolation needs root")
def test_as_root_instructor_files_are_unreadable(session):
    for path in (ROOT / "solutions" / "ex01_vectors.py",
                 ROOT / "autograder" / "suites" / "hidden" / "ex01_vectors.py"):
        assert isinstance(call(session, "read", str(path)), str), path  # an error name
    assert call(session, "uid") != 0


@pytest.mark.skipif(not host.is_root(), reason="network namespaces need root")
def test_as_root_the_worker_has_no_network(session):
    """The grader listens on loopback (TCP) and on an abstract Unix socket, both of which a
    process of the host's network namespace reaches; the worker reaches neither (its own network
    namespace, and since round 4 the filter: it may not make a socket at all)."""
    import socket
    import secrets

    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"course-test-{secrets.token_hex(6)}"
    unix.bind("\0" + name)
    unix.listen()
    try:
        port = tcp.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=1).close()  # it does listen
        assert call(session, "connect", port) != "connected"
        assert call(session, "connect_abstract", name) != "connected"
    finally:
        tcp.close()
        unix.close()


def test_exceptions_arrive_as_names_and_messages(session):
    with pytest.raises(StudentException) as info:
        call(session, "read_missing")
    assert "not defined" in str(info.value)
    with pytest.raises(StudentException) as info:
        call(session, "leave")  # sys.exit is an exception like any other
    assert info.value.remote.is_a("SystemExit")


def test_os_exit_and_segfault_become_results_and_the_worker_restarts(session):
    with pytest.raises(WorkerDied, match="status 0"):
        call(session, "die", 0)
    with pytest.raises(WorkerDied, match="SIGSEGV"):
        call(session, "segfault")
    assert isinstance(call(session, "pid"), int)  # a fresh worker serves the next call


def test_a_call_past_its_deadline_is_killed():
    fast = Slot(0, Limits(call_seconds=1.0, submission_seconds=10.0))
    try:
        sess = Session(fast, {"ex01_vectors": PROBE.encode()})
        call(sess, "pid")  # start the zygote and the worker outside the timed window
        t0 = time.monotonic()
        with pytest.raises(CallTimeout):
            call(sess, "spin")
        assert time.monotonic() - t0 < 5
        with pytest.raises(CallTimeout, match="earlier call timed out"):
            call(sess, "spin")  # not run again: one loop costs one timeout
        assert isinstance(call(sess, "pid"), int)  # other functions still run
        sess.close()
    finally:
        fast.close()


def test_the_submission_budget_is_enforced():
    slot = Slot(0, Limits(call_seconds=1.0, submission_seconds=1.5))
    try:
        sess = Session(slot, {"ex01_vectors": PROBE.encode()})
        with pytest.raises(CallTimeout):
            call(sess, "spin")
        sess.timed_out.clear()  # a different function would run…
        with pytest.raises((CallTimeout, BudgetExhausted)):
            call(sess, "spin")
        with pytest.raises(BudgetExhausted):
            call(sess, "pid")  # …until the budget is gone
        sess.close()
    finally:
        slot.close()


def test_memory_is_capped(session):
    """4.5 GiB in one go is over the 4 GiB address-space limit: refused at once (MemoryError),
    before a page is touched — not left to the slot's control group or the OOM killer."""
    with pytest.raises(StudentException) as info:
        call(session, "hog", 4.5)
    assert info.value.remote.is_a("MemoryError")
    assert isinstance(call(session, "pid"), int)  # the same worker goes on


def test_results_over_64_mib_fail_cleanly(session):
    assert call(session, "big", 1000).shape == (1000,)
    with pytest.raises(BadResult, match="MiB"):
        call(session, "big", 80 * 2**20)


def test_output_is_capped_at_one_mib():
    slot = Slot(0, Limits(output_bytes=2**20))
    try:
        sess = Session(slot, {"ex01_vectors": PROBE.encode()})
        with pytest.raises((StudentException, WorkerDied)):
            call(sess, "shout", 3 * 2**20)
        text = sess.close()
        assert len(text) <= 2**20 + 200
    finally:
        slot.close()


@pytest.mark.skipif(not host.is_root(), reason="RLIMIT_NPROC binds only a non-root uid")
def test_process_count_is_capped(session):
    assert call(session, "forks", 200) < 100


def test_import_failure_is_reported_once(slot):
    s = Session(slot, {"ex01_vectors": b"import numpy as np\nraise RuntimeError('boom')\n"})
    try:
        with pytest.raises(ImportFailed, match="RuntimeError: boom"):
            s.load("ex01_vectors")
        with pytest.raises(ImportFailed):
            s.call("ex01_vectors", "dot", ([1.0], [2.0]))
    finally:
        s.close()


def test_a_student_message_is_not_shown_in_a_hidden_test(session):
    """The message is the student's text and may print the (hidden) arguments back."""
    from autograder.driver.errors import HIDDEN

    with pytest.raises(StudentException) as info:
        session.call("ex01_vectors", "can_import", (), {"secret": 1})  # TypeError naming it
    token = HIDDEN.set(True)
    try:
        hidden_text = str(info.value)
    finally:
        HIDDEN.reset(token)
    assert "secret" in str(info.value)  # public: the whole message helps the student
    assert "secret" not in hidden_text and "TypeError" in hidden_text


# ------------------------------------------------------------------ the one reply interpreter
# (protocol.interpret_reply: the session's and the nbgrader adapter's, on reply bodies as a
# worker would send them)


def _body(value) -> bytes:
    from autograder.wire import codec, frames

    return frames.unframe(codec.encode(value), codec.MAX_FRAME)


def test_the_reply_interpreter_returns_the_value_and_reports_faults():
    from autograder.wire import codec
    from autograder.driver import protocol

    assert protocol.interpret_reply(_body({"ok": [1, 2.5]}), "m.f") == [1, 2.5]
    distrusted = []
    for bad in (b"not a frame body", _body({"ok": 1, "extra": 2}), _body([1])):
        with pytest.raises(BadResult, match="^m.f"):
            protocol.interpret_reply(bad, "m.f", distrust=lambda: distrusted.append(1))
    assert distrusted == [1, 1, 1]  # every malformed reply: the worker is not trusted further
    with pytest.raises(BadResult, match="over 64 MiB"):  # the worker refused to send it: honest
        protocol.interpret_reply(_body({"ok": {"__too_large__": 1}}), "m.f",
                                 distrust=lambda: distrusted.append(1))
    assert distrusted == [1, 1, 1]
    remote = codec.RemoteException(["ValueError", "Exception"], "bad /tmp/sub-x/sub", "")
    with pytest.raises(StudentException) as info:
        protocol.interpret_reply(_body({"exc": remote}), "m.f",
                                 scrub=lambda t: t.replace("/tmp/sub-x/sub", "<submission>"))
    assert str(info.value) == "m.f raised ValueError: bad <submission>"


def test_in_a_hidden_test_the_interpreter_closes_type_names():
    from autograder.driver import protocol
    from autograder.driver.errors import HIDDEN

    import json
    import struct

    # As a worker's encoder writes them: type names of the worker's choosing.
    doc = json.dumps({"v": {"__dict__": {"ok": [{"__unsupported__": "HIDDENTEXT_1.Cls"},
                                                {"__unsupported__": "numpy.ndarray"}]}},
                      "blobs": []}).encode()
    reply = struct.pack("<I", len(doc)) + doc
    assert protocol.interpret_reply(reply, "m.f")[0].type == "HIDDENTEXT_1.Cls"  # public
    token = HIDDEN.set(True)
    try:
        shown = protocol.interpret_reply(reply, "m.f")
    finally:
        HIDDEN.reset(token)
    assert [u.type for u in shown] == [protocol.OWN_TYPE, "numpy.ndarray"]
    assert protocol.interpret_reply(reply, "m.f", hidden=True)[0].type == protocol.OWN_TYPE
