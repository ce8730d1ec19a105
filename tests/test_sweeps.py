"""No hidden input reaches a student through kernel state that workers share, by construction.

Red team, round 3: two colluding submissions graded at once. A's hidden-phase worker signalled
its hidden inputs through futex words of a file every worker's view maps (the kernel keys a
shared futex by inode and offset, not by process or namespace), and B's public-phase worker, in
the other slot, listened and quoted what it heard in its public feedback. No filter closes every
such channel: the sender here calls no futex operation at all. A thread that sets its
``clear_child_tid`` (``set_tid_address``) to a word of the shared page and exits makes the
kernel wake whoever waits there, and waiting on a shared word is what glibc's ``pthread_join``
does. What closes the kind is time (docs/design/threat-model.md, phases): a batch grades every
public phase before any hidden phase (the sweeps, :mod:`autograder.grading.batch`), and two
graders on one machine order their phases through one lock
(:mod:`autograder.grading.phase_lock`). So whatever B hears, it hears while no worker holding a
hidden input exists.

Each test grades the pair with the real ``course grade`` and checks that every value B heard
is one A sent in its public phase (A prints what it sends; the hidden phase's output is the
instructors' only, in ``results/A.json``). On the batch loop before the sweeps and the lock,
both tests fail: B's public feedback listed all nine values A sent in its hidden phase.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from autograder import catalogue
from tests.helpers import course, course_env, finish, spawn

ATTACK_ARCH = pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"),
                                 reason="the attack knows x86_64's and aarch64's call numbers")

EX01 = catalogue.topics()[0].module
#: How many words the pair uses (one listening thread each in B; under the worker's
#: process limit, which counts threads).
WORDS = 24
LISTEN_SECONDS = 12

COMMON = f'''
import ctypes, os, threading, time
import numpy as np

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_NR = {{"x86_64": (202, 218), "aarch64": (98, 96)}}[os.uname().machine]  # futex, set_tid_address
_fd = os.open(os.__file__, os.O_RDONLY)  # a file every worker's view shares
_BASE = _libc.mmap(None, 4096, 1, 1, _fd, 0) + 2048  # PROT_READ, MAP_SHARED
WORDS = {WORDS}
'''

#: A: in every phase, each of its first calls of dot on a vector of 5 or more (the hidden
#: tests' lengths 17 and 1000; the public ones are shorter) wakes the word its first value
#: picks, by a thread that exits with its clear_child_tid there: no futex call at all.
SENDER = COMMON + '''
_sent = 0

def _send(value):
    def run():
        _libc.syscall(ctypes.c_long(_NR[1]), ctypes.c_void_p(_BASE + 4 * value))
    t = threading.Thread(target=run)
    t.start()
    t.join()
    time.sleep(0.05)

def dot(u, v):
    global _sent
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if u.size >= 5 and _sent < 16:
        value = int(abs(float(u.ravel()[0])) * 1e6) % WORDS
        for _ in range(3):
            _send(value)
        _sent += 1
        print(f"SENT {value}", flush=True)
    return float(np.dot(u, v))
'''

#: B: its first public call (one_hot of the public example [2, 0]) listens on every word for a
#: while, then raises what it heard into its public feedback; every other call fails at once.
LISTENER = COMMON + f'''
def one_hot(ids, vocab_size):
    if list(np.asarray(ids).ravel()) != [2, 0]:
        raise RuntimeError("not listening")
    heard = set()
    stop = time.monotonic() + {LISTEN_SECONDS}

    def wait(i):
        word = _BASE + 4 * i
        value = ctypes.c_uint32.from_address(word).value
        while time.monotonic() < stop:
            timeout = (ctypes.c_long * 2)(0, 200_000_000)
            if _libc.syscall(ctypes.c_long(_NR[0]), ctypes.c_void_p(word), 0,  # FUTEX_WAIT
                             ctypes.c_uint32(value), timeout, None, 0) == 0:
                heard.add(i)

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(WORDS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise RuntimeError(f"HEARD {{sorted(heard)}} END")
'''


def _submission(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / f"{EX01}.py").write_text(source, encoding="utf-8")
    return folder


def _sent(text: str) -> set[int]:
    return {int(v) for v in re.findall(r"SENT (\d+)", text)}


def _heard(out: Path, sid: str) -> set[int]:
    """What B's public feedback says it heard (the first failed test of its feedback)."""
    feedback = (out / "feedback" / f"{sid}.md").read_text(encoding="utf-8")
    found = re.findall(r"HEARD \[([\d, ]*)\] END", feedback)
    assert found, f"the listener's public feedback does not show what it heard:\n{feedback}"
    return {int(v) for part in found for v in part.split(",") if v.strip()}


def _check(out_a: Path, out_b: Path) -> None:
    extra = json.loads((out_a / "results" / "sender.json").read_text(encoding="utf-8"))
    extra = extra["extra_data"]
    public = _sent(extra["student_output"])
    hidden = _sent(extra["hidden_phase_output"]) - public
    assert hidden, f"the sender sent nothing in its hidden phase: the test proves nothing\n{extra}"
    heard = _heard(out_b, "listener")
    assert not heard & hidden, (f"hidden-phase values {sorted(heard & hidden)} reached the "
                                "listener's public feedback")
    assert heard <= public


def _args(class_dir: Path, out: Path, jobs: str) -> list[str]:
    return ["grade", "--class", str(class_dir), "--out", str(out), "--jobs", jobs,
            "--call-timeout", "20", "--submission-timeout", "120"]


@pytest.mark.slow
@ATTACK_ARCH
def test_a_batch_grades_every_public_phase_before_any_hidden_one(tmp_path):
    """The pair in one batch of two slots: B's public phase never overlaps A's hidden one."""
    cls = tmp_path / "class"
    _submission(cls / "sender", SENDER)
    _submission(cls / "listener", LISTENER)
    out = tmp_path / "out"
    proc = course(*_args(cls, out, "2"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check(out, out)


@pytest.mark.slow
@ATTACK_ARCH
def test_two_graders_on_one_machine_order_their_phases(tmp_path):
    """Two independent `course grade --jobs 1` at once, A in one, B in the other: the
    host-wide phase lock keeps B's public phase and A's hidden one apart."""
    lock = tmp_path / "phases.lock"  # the two graders' common lock (as every real grader's)
    env = course_env(COURSE_PHASE_LOCK=str(lock))
    runs = []
    for name, source in (("sender", SENDER), ("listener", LISTENER)):
        cls = tmp_path / f"class-{name}"
        _submission(cls / name, source)
        runs.append(spawn(*_args(cls, tmp_path / f"out-{name}", "1"), env=env))
    for proc in [finish(p) for p in runs]:
        assert proc.returncode == 0, proc.stderr[-3000:]
    _check(tmp_path / "out-sender", tmp_path / "out-listener")


def test_a_suspended_session_travels_and_resumes_where_it_stopped(slot):
    """Between the sweeps a submission's session is suspended (its workers reaped), pickled to
    whichever slot process runs its hidden phase, and resumed there: the same budget, the
    deadline not counting the time between, its failed imports kept."""
    import pickle
    import time

    from autograder.driver.errors import ImportFailed
    from autograder.driver.session import Session

    source = "import numpy as np\ndef dot(u, v):\n    return float(np.dot(u, v))\n"
    s = Session(slot, {EX01: source.encode(), "broken": b"raise ValueError('at import')\n"})
    assert s.call(EX01, "dot", ([1.0, 2.0], [3.0, 4.0])) == 11.0
    with pytest.raises(ImportFailed):
        s.load("broken")
    pid = s.pid
    s.suspend()
    assert s.pid is None and s.slot is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not merely signalled
    left = s.time_left()
    back = pickle.loads(pickle.dumps(s))
    time.sleep(1.0)
    back.resume(slot, "hidden")
    assert back.phase == "hidden"
    assert abs(back.time_left() - left) < 0.5  # the second between the sweeps is not counted
    assert "broken" in back.failed_imports
    assert back.call(EX01, "dot", ([1.0], [2.0])) == 2.0
    with pytest.raises(RuntimeError, match="suspended"):
        pickle.dumps(back)  # a live session never travels
    back.close()


#: Red team, round 4: the sweeps order workers alive at once, but a host-wide counter outlives
#: its workers. The hidden phase of one grading drives the pipe and socket inode counter
#: (get_next_ino, handed out in batches of 1024) to a batch number that spells a value of its
#: hidden input; a later grading's public phase makes a pipe, reads its inode number and raises
#: the batch. The worker's filter refuses making pipes, sockets, memfds and pidfds
#: (autograder/sandbox/seccomp_filter.py): on the filter before it, the second grading's public
#: feedback read "RECV symbol=4", the symbol of the first one's last hidden call.
COUNTER_PAIR = '''
import os
import numpy as np

def _fresh_batch():
    for _ in range(4096):
        r, w = os.pipe()
        ino = os.fstat(r).st_ino
        os.close(r)
        os.close(w)
        if (ino - 1) % 1024 == 0:
            return (ino - 1) // 1024
    return None

try:
    _HEARD = _fresh_batch()
except OSError as exc:
    _HEARD = exc

def dot(u, v):
    u = np.asarray(u, dtype=float)
    if u.size >= 5:  # a hidden input
        symbol = int(abs(float(u.sum())) * 100) % 8
        try:
            b = _fresh_batch()
            while b is not None and b % 64 != symbol * 8:
                b = _fresh_batch()
            print(f"SENT {symbol}", flush=True)
        except OSError as exc:
            print(f"SEND refused: {exc}", flush=True)
    return float(np.dot(u, np.asarray(v, dtype=float)))

def one_hot(ids, vocab_size):  # the first public test's call: its message is shown
    if isinstance(_HEARD, int):
        raise ValueError(f"RECV symbol={(_HEARD % 64) // 8} END")
    raise ValueError(f"RECV nothing: {_HEARD!r}")
'''


@pytest.mark.slow
def test_a_later_grading_cannot_read_a_counter_a_hidden_phase_moved(tmp_path):
    sub = _submission(tmp_path / "first" / "sub", COUNTER_PAIR)
    proc = course("grade", str(sub), "--out", str(tmp_path / "out1"), "--call-timeout", "5",
                  "--submission-timeout", "60")
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = _submission(tmp_path / "second" / "sub", COUNTER_PAIR + "# resubmitted\n")
    proc = course("grade", str(again), "--out", str(tmp_path / "out2"), "--call-timeout", "5",
                  "--submission-timeout", "60")
    assert proc.returncode == 0, proc.stderr[-3000:]
    feedback = (tmp_path / "out2" / "feedback" / "sub.md").read_text(encoding="utf-8")
    assert "RECV" in feedback, feedback  # the receiver ran and its message is public
    assert not re.search(r"RECV symbol=\d", feedback), feedback
