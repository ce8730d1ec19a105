"""Trusted side of the sandbox: worker slots, one worker per submission, calls with limits.

A :class:`Slot` owns a zygote (a pre-warmed process that forks workers) and, as root, its own
unprivileged uid. A :class:`Session` is one submission on a slot: its files in a private temp
dir, a worker forked on demand and re-forked after a crash or timeout, and every call bounded
by the per-call and per-submission wall-clock limits. Results come back as plain data only.
"""

from __future__ import annotations

import builtins
import contextvars
import json
import os
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.sandbox import allowlist
from autograder.sandbox import cgroups
from autograder.sandbox import codec
from autograder.sandbox import isolation
from autograder.limits import Limits

#: A slot's memory cap is one worker's address space plus this (the zygote's own pages, which
#: its workers share, and a margin for their children); its task cap the process limit plus
#: the zygote's, bubblewrap's and the clean-up helpers' own.
SLOT_MEMORY_HEADROOM = 2**30
SLOT_TASK_HEADROOM = 16

__all__ = ["Limits", "Slot", "Session", "Call", "Pipelined", "SubmissionFault",
           "StudentException", "CallTimeout", "WorkerDied", "BudgetExhausted", "ImportFailed",
           "BadResult"]


class SubmissionFault(Exception):
    """The submission misbehaved; ``str(exc)`` is a message a student can act on."""


#: True while a hidden test runs: messages then omit inputs and expected values.
HIDDEN: contextvars.ContextVar[bool] = contextvars.ContextVar("HIDDEN", default=False)


#: The builtin exception classes' names: the only exception names a hidden test may show.
BUILTIN_EXCEPTIONS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))

#: What a hidden test says of an exception of a class the submission made.
OWN_EXCEPTION = "an exception of the submission's own class"


def shown_exception(remote: codec.RemoteException) -> str:
    """The name of a remote exception as a hidden test may show it: a builtin's name, or
    :data:`OWN_EXCEPTION` with the first builtin class it derives from.

    The class names come from student code, and a class made by ``type(secret, …)`` would
    spell a hidden input: only names of the closed set :data:`BUILTIN_EXCEPTIONS` pass.
    """
    if remote.name in BUILTIN_EXCEPTIONS:
        return remote.name
    base = next((c for c in remote.classes if c in BUILTIN_EXCEPTIONS), None)
    return f"{OWN_EXCEPTION}, a subclass of {base}" if base else OWN_EXCEPTION


class StudentException(SubmissionFault):
    """Student code raised an exception (it arrives as MRO names and a message)."""

    def __init__(self, remote: codec.RemoteException, where: str) -> None:
        self.remote = remote
        self.where = where
        if remote.is_a("autograder.sandbox.worker.MissingName"):
            module, _, name = where.partition(".")
            super().__init__(f"{name.split(' ')[0]} is not defined in your {module}.py")
        else:
            super().__init__(f"{where} raised {remote.name}: {remote.message}")

    def __str__(self) -> str:
        # The message is the student's own text, and it can print the arguments: during a
        # hidden test only the exception's class is shown, or the hidden inputs would leak.
        # Its class's name too is the student's (shown_exception).
        if HIDDEN.get() and not self.remote.is_a("autograder.sandbox.worker.MissingName"):
            return (f"{self.where} raised {shown_exception(self.remote)} "
                    "(message hidden in a hidden test)")
        return super().__str__()


class CallTimeout(SubmissionFault):
    pass


class WorkerDied(SubmissionFault):
    pass


class BudgetExhausted(SubmissionFault):
    """The submission's time is up: the call (or test) was not run."""


#: What every test says once the submission's hard deadline has passed.
BUDGET_SPENT = "submission time budget spent"


def budget_spent(where: str, seconds: float) -> BudgetExhausted:
    """The refusal of ``where`` once the submission used up its ``seconds``."""
    return BudgetExhausted(f"{where}: not run, {BUDGET_SPENT} (the submission used up its "
                           f"{seconds:g} s)")


class ImportFailed(SubmissionFault):
    pass


class BadResult(SubmissionFault):
    """A result that could not cross (too large, malformed)."""


#: Seconds a pipeline waits between reads, for replies to gather.
PIPELINE_NAP = 0.002

#: The most reply bytes one pipeline keeps (a correct submission's largest topic: 0.7 MB).
PIPELINE_BYTES = 32 * 2**20

#: The share of the submission's budget its pipelines may take, all together (a correct
#: submission's take a few seconds of the default 120 s): see :meth:`Session._speculation`.
PIPELINE_SHARE = 0.25


@dataclass(frozen=True)
class Call:
    """One request as a test made it: the exact frame, and the reply the reference got."""

    frame: bytes
    reply: bytes
    where: str
    key: str  # "module.name": a timeout stops further calls of it
    timeout: float | None = None


@dataclass
class Pipelined:
    """The replies to a pipelined list of calls (``None``: not run) and where it stopped.

    ``seconds[i]`` is how long call ``i`` took: it is charged to the submission's budget only
    when a test uses the reply (:meth:`Session.charge`), as if the call had been made then; a
    call no test reaches (a failing test stops early) costs the submission nothing.
    """

    replies: list[bytes | None]
    seconds: list[float] = field(default_factory=list)
    failed_at: int | None = None
    failure: SubmissionFault | None = None
    generation: int = 0

    def fail(self, i: int, exc: SubmissionFault) -> None:
        self.failed_at, self.failure = i, exc


#: What a hidden test says of a returned type that is not a known library's class.
OWN_TYPE = "<the submission's own class>"

#: Unsupported values the worker's encoder describes in words of its own (codec._Encoder).
_FIXED_UNSUPPORTED = frozenset({"dict with non-str keys", "a structure nested more than 64 deep"})


def _closed_type_name(name: str, unsupported: bool) -> str:
    if unsupported and name in _FIXED_UNSUPPORTED:
        return name
    if unsupported and name.startswith(("ndarray of dtype ", "unencodable")):
        # A structured dtype's field names, an encoder's exception text: the student's words.
        return "ndarray of a dtype that may not cross" if name.startswith("nd") else (
            "a value that could not be encoded")
    return codec.closed_type(name) or OWN_TYPE


def _closed_types(value: Any) -> Any:
    """A reply with every type name the worker chose replaced by :data:`OWN_TYPE`, unless it
    names a real class of a known library (:func:`codec.closed_type`). For hidden tests: their
    feedback quotes returned types (``describe``), and a class made by ``type(secret, …)``
    would spell a hidden input."""
    if isinstance(value, codec.Handle):
        return codec.Handle(id=value.id, type=_closed_type_name(value.type, False))
    if isinstance(value, codec.Unsupported):
        return codec.Unsupported(type=_closed_type_name(value.type, True))
    if type(value) is list:
        return [_closed_types(v) for v in value]
    if type(value) is dict:
        return {k: _closed_types(v) for k, v in value.items()}
    return value


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline passed")
        sock.settimeout(left)
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("worker closed the connection")
        buf += chunk
    return bytes(buf)


def _read_frame_by(sock: socket.socket, limit: int, deadline: float) -> bytes:
    """One frame body, all of it by ``deadline``.

    A socket timeout bounds each ``recv``, not the whole read: a worker trickling a byte every
    0.3 s would never time out (hostile battery: slowloris_reply). So every read gets what is
    left of the call's deadline.
    """
    n = codec.frame_length(_recv_exact(sock, codec.FRAME_HEADER.size, deadline), 0, limit)
    return _recv_exact(sock, n, deadline)


def _read_output(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of the worker's output file, never following what replaced it.

    The file sits in the worker's dir: a submission may swap it for a symlink (the grader, as
    root, would read the target into the student's results), a hard link, or a FIFO (an open
    would block forever). Hostile battery: output_symlink, output_fifo.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return b"[the output file was replaced by something else; not read]"
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit)
    finally:
        os.close(fd)


def _clean_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            # CUDA must still find its libraries and devices for the gpu tests.
            "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PYTHONPATH=isolation.repo_root(), PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    return env


class Slot:
    """One worker slot: a zygote process, a private temp root and (as root) its own uid."""

    def __init__(self, index: int = 0, limits: Limits | None = None,
                 hide: list[str] | None = None) -> None:
        self.index = index
        self.limits = limits or Limits()
        self.uid: int | None = None
        self.gid: int | None = None
        self._lock_fd: int | None = None
        self.cgroup: cgroups.Group | None = None
        if isolation.is_root():
            # The uid comes from a claimed slot number, not ``index``: concurrent graders
            # must never share one (see isolation.acquire_slot).
            number, self._lock_fd = isolation.acquire_slot()
            self.uid, self.gid = isolation.slot_user(number)
            # The whole slot's memory and tasks (autograder.sandbox.cgroups): the zygote's own share,
            # then one worker's address space and its children's.
            self.cgroup = cgroups.create(f"course-slot{number}",
                                         self.limits.address_space + SLOT_MEMORY_HEADROOM,
                                         self.limits.processes + SLOT_TASK_HEADROOM)
        self.hide = isolation.secret_paths(hide)
        # realpath: bubblewrap binds it at the same path, where the workers look for it.
        self.tmp_root = os.path.realpath(tempfile.mkdtemp(prefix=f"course-slot{index}-"))
        os.chmod(self.tmp_root, 0o711)
        self._proc: subprocess.Popen | None = None
        self._unread = 0  # replies the zygote owes for commands sent without waiting
        self._ctl: socket.socket | None = None
        self._ctl_file: Any = None
        #: topic -> number of plan requests the zygote holds decoded (see :meth:`preload`), and
        #: a number that changes with them: only workers forked since hold them too.
        self.preloaded: dict[str, int] = {}
        self.plan_epoch = 0

    # -- zygote lifecycle
    def _start(self) -> None:
        self._unread = 0
        self.preloaded = {}  # a new zygote holds no plan
        self.plan_epoch += 1
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [sys.executable, "-m", "autograder.sandbox.zygote", str(child.fileno())]
        # As root, in bubblewrap's allow-list view (autograder.sandbox.allowlist) where it runs, and in
        # the slot's control group (autograder.sandbox.cgroups) where there is one.
        if self.uid is not None:
            command = cgroups.joining(self.cgroup, allowlist.wrap(command, self.tmp_root,
                                                                  self.hide))
        self._proc = subprocess.Popen(
            command, pass_fds=[child.fileno()], cwd=self.tmp_root, env=_clean_env(),
            stdin=subprocess.DEVNULL)
        child.close()
        self._ctl = parent
        self._ctl_file = parent.makefile("rb")
        parent.settimeout(120)
        ready = self._ctl_file.readline()
        if b"ready" not in ready:
            raise RuntimeError(f"worker zygote of slot {self.index} failed to start")
        parent.settimeout(30)
        if self.uid is not None:
            # Strays of an earlier grader killed with SIGKILL may still run as this slot's uid.
            self.killall()

    def start(self) -> None:
        """Start the zygote now unless it runs (else the first request starts it)."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()

    def _command(self, cmd: dict, fds: list[int] | None = None, wait: bool = True) -> dict:
        self.start()
        while self._unread:  # replies of commands sent without waiting: in order, first
            self._unread -= 1
            self._reply()
        data = json.dumps(cmd).encode()
        if fds:
            socket.send_fds(self._ctl, [data], fds)
        else:
            self._ctl.sendall(data)
        if not wait:
            self._unread += 1
            return {}
        return self._reply()

    def _reply(self) -> dict:
        line = self._ctl_file.readline()
        if not line:
            self._proc = None
            raise RuntimeError("worker zygote died")
        return json.loads(line)

    def clean_up_later(self, pid: int | None) -> None:
        """Reap ``pid`` (sent SIGKILL already) and kill every stray of the slot uid, while the
        grader goes on with another slot: the zygote answers before this slot's next command.
        """
        if pid is not None:
            self._command({"op": "reap", "pid": pid, "wait": 2.0}, wait=False)
        self._command({"op": "killall", "uid": self.uid}, wait=False)

    def fork(self, workdir: str, sub_dir: str) -> tuple[int, socket.socket]:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply = self._command({"op": "fork", "workdir": workdir, "sub_dir": sub_dir,
                                   "limits": self.limits.to_json(), "uid": self.uid,
                                   "gid": self.gid, "hide": self.hide,
                                   "allowlist": self.uid is not None and allowlist.usable()},
                                  [theirs.fileno()])
        finally:
            theirs.close()
        return int(reply["pid"]), mine

    def preload(self, topics: dict[str, list[Call]]) -> dict[str, int]:
        """Have the zygote decode a batch plan's requests, once, for every later worker.

        Without it a worker decodes each of a submission's thousands of requests itself. The
        file holds requests only (inputs a worker is sent anyway), never the replies; it is the
        grader's (0600) and removed at once. On any failure pipelines send frames as before.

        Public plans only (keys ``topic:public``): every worker forked later holds them, and a
        worker that runs student code may hold no hidden input before it is asked (an import
        could quote them all into a topic's note).

        Raises:
            ValueError: a plan of hidden requests (its key does not end in ``:public``).
        """
        hidden = [t for t in topics if not t.endswith(":public")]
        if hidden:
            raise ValueError(f"hidden requests are never preloaded (asked for {hidden[:3]})")
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        fd, path = tempfile.mkstemp(prefix="plan-", dir=self.tmp_root)
        try:
            with os.fdopen(fd, "wb") as f:
                for calls in topics.values():
                    f.writelines(c.frame for c in calls)
            reply = self._command({"op": "plan", "path": path,
                                   "counts": {t: len(c) for t, c in topics.items()}})
        finally:
            os.unlink(path)
        counts = reply.get("counts")
        self.preloaded = dict(counts) if isinstance(counts, dict) else {}
        self.plan_epoch += 1
        return self.preloaded

    def reap(self, pid: int, wait: float = 2.0) -> str:
        return self._command({"op": "reap", "pid": pid, "wait": wait})["status"]

    def killall(self) -> None:
        # Also without a slot uid: the zygote then kills every stray child it has adopted
        # (it is their subreaper), or a daemon a submission left would outlive its session.
        self._command({"op": "killall", "uid": self.uid})

    def new_workdir(self) -> tuple[str, str]:
        """A fresh private dir for one submission: ``workdir`` with ``sub`` (the submission,
        the worker's cwd), ``tmp`` (its TMPDIR and HOME) and the grader's ``output.txt``."""
        workdir = tempfile.mkdtemp(prefix="sub-", dir=self.tmp_root)
        sub_dir = os.path.join(workdir, "sub")
        os.mkdir(sub_dir)
        os.mkdir(os.path.join(workdir, "tmp"))
        return workdir, sub_dir

    def hand_over(self, workdir: str) -> None:
        """Give ``sub`` and ``tmp`` to the slot's uid, readable by it alone.

        ``workdir`` itself stays the grader's (0711): the worker may not replace the
        ``output.txt`` the grader reads back, nor the folders the grader creates there.
        """
        if self.uid is None:
            return
        for top in ("sub", "tmp"):
            for root, dirs, files in os.walk(os.path.join(workdir, top)):
                for name in [*dirs, *files]:
                    os.lchown(os.path.join(root, name), self.uid, self.gid)
            os.chown(os.path.join(workdir, top), self.uid, self.gid)
            os.chmod(os.path.join(workdir, top), 0o700)
        os.chmod(workdir, 0o711)

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._ctl.sendall(b'{"op": "exit"}')
                self._proc.wait(5)
            except Exception:
                self._proc.kill()
        self._proc = None
        shutil.rmtree(self.tmp_root, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Session:
    """One submission graded on a slot: files in, calls out, worker restarted on demand."""

    def __init__(self, slot: Slot, sources: dict[str, bytes]) -> None:
        self.slot = slot
        self.limits = slot.limits
        self.sources = sources
        self.workdir, self.sub_dir = self._new_workdir()
        self._busy_before = 0.0  # their busy_seconds
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.loaded: set[str] = set()
        self.failed_imports: dict[str, str] = {}
        self.timed_out: dict[str, str] = {}
        self.spent = 0.0  # the budget's use: live calls, and pipelined calls a test used
        self.piped = 0.0  # time pipelines took (bounded by the budget too)
        self.student_seconds = 0.0
        self.busy_seconds = 0.0  # of which the worker says it spent in the calls themselves
        self.restarts = 0
        self.generation = 0  # bumped at each fork: objects held by an older worker are gone
        self.source_generation = 0  # the worker generation that produced the latest reply
        self.recorder: list[Call] | None = None  # autograder.grading.replay records a reference run here
        self._planned: set[tuple[int, str]] = set()  # (worker generation, topic) plans sent
        self.live_calls = 0  # requests sent one at a time (not answered from a pipeline)
        #: calls refused for the session's own state (budget spent, function barred, import
        #: failed): a verdict met with one is not the replies' alone (autograder.grading.replay)
        self.refusals = 0
        self.fed_log: list[int] = []  # the pipelined replies used, in order
        self._worker_epoch = -1
        self._feed: list | None = None
        #: The hard deadline's start, when the first worker is asked for (a zygote's own start
        #: is not the submission's work): ``limits.submission_seconds`` later, every call and
        #: test of the submission is refused, whatever its work was (pipelined or live, any
        #: phase). None: not started.
        self.started: float | None = None
        self._forking = 0.0  # seconds the zygotes took to fork this session's workers
        #: "public" or "hidden": the phase whose tests this session runs now (see
        #: :meth:`switch`). In the hidden phase, every text that can reach a student is fixed
        #: by the grader, as while a hidden test runs (:data:`HIDDEN`).
        self.phase = "public"
        self._outputs = {"public": "", "hidden": ""}  # what each phase's workers printed

    # -- the hard deadline
    def time_left(self) -> float:
        """Seconds before the submission's hard deadline (negative once it passed)."""
        if self.started is None:
            return self.limits.submission_seconds
        return self.started + self._forking + self.limits.submission_seconds - time.monotonic()

    def out_of_time(self) -> bool:
        """Whether the hard deadline has passed: every remaining test then fails."""
        return self.time_left() <= 0

    @property
    def hidden(self) -> bool:
        """Whether what is said now may carry a hidden input (a hidden test, or its phase)."""
        return self.phase == "hidden" or HIDDEN.get()

    # -- worker lifecycle
    def _ensure_worker(self) -> None:
        if self.sock is None:
            if self.started is None:
                self.slot.start()
                self.started = time.monotonic()
            t0 = time.monotonic()
            self.pid, self.sock = self.slot.fork(self.workdir, self.sub_dir)
            # The zygote's fork is the grader's work, not the submission's (a zygote warms up
            # torch, seconds, just before its second fork): the deadline moves by its time.
            self._forking += time.monotonic() - t0
            self._worker_epoch = self.slot.plan_epoch
            self.loaded = set()
            self.generation += 1

    def _kill(self, wait: bool = True) -> str:
        """SIGKILL the worker and its strays; their status (without ``wait``, the slot's zygote
        reaps them while the grader goes on, and the status is not known)."""
        status = "gone"
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if wait:
                status = self.slot.reap(self.pid)
                self.slot.killall()
            else:
                self.slot.clean_up_later(self.pid)
        if self.sock is not None:
            self.sock.close()
        self.pid, self.sock = None, None
        self.restarts += 1
        return status

    def _new_workdir(self) -> tuple[str, str]:
        workdir, sub_dir = self.slot.new_workdir()
        for module, source in self.sources.items():
            Path(sub_dir, f"{module}.py").write_bytes(source)
        self.slot.hand_over(workdir)
        return workdir, sub_dir

    def _finish(self, wait: bool = True) -> str:
        """Kill the worker and any stray process, remove the workdir; what it printed.

        Without ``wait`` the slot's zygote does the killing while the grader goes on with
        another slot; a stray may then still be printing for a few milliseconds.
        """
        if self.sock is not None:
            self._read_busy()
            self._kill(wait)  # strays included (Slot.killall)
        elif wait:
            self.slot.killall()
        else:
            self.slot.clean_up_later(None)
        earlier = sum(len(text.encode()) for text in self._outputs.values())
        cap = max(self.limits.output_bytes - earlier, 0)
        raw = _read_output(os.path.join(self.workdir, "output.txt"), cap + 1)
        text = self._scrub(raw[:cap].decode("utf-8", "replace"))
        if len(raw) > cap:
            text += f"\n[output over {self.limits.output_bytes} bytes dropped]"
        shutil.rmtree(self.workdir, ignore_errors=True)
        return text

    def switch(self, slot: Slot, phase: str | None = None) -> None:
        """Go on in fresh workers of ``slot``, in a fresh workdir: the budget and its deadline,
        the barred functions and the failed imports carry over, and so does what was printed.

        ``course grade`` answers the public tests on one slot and the hidden ones in fresh
        workers (of another slot when it has two): the worker whose replies public feedback
        quotes never holds a hidden input, and what the hidden phase's workers print is kept
        apart (:meth:`output`). ``phase`` (``"hidden"``) is the phase that starts.
        """
        self._outputs[self.phase] += self._finish(wait=False)  # the next worker is another's
        self._busy_before = self.busy_seconds
        self.slot = slot
        self.workdir, self.sub_dir = self._new_workdir()
        self.loaded = set()
        if phase is not None:
            self.phase = phase

    def output(self, phase: str) -> str:
        """What the workers of ``phase`` ("public", "hidden") printed, once :meth:`close`d."""
        return self._outputs[phase]

    def close(self, wait: bool = True) -> str:
        """Kill the worker and any stray process; return what it printed (capped).

        Without ``wait`` the zygote finishes the killing while the grader goes on (see
        :meth:`_finish`): for a batch, whose next worker is another slot's.
        """
        self._outputs[self.phase] += self._finish(wait)
        return self._outputs["public"] + self._outputs["hidden"]

    # -- requests
    def _request(self, req: dict, where: str, timeout: float | None = None) -> Any:
        frame = codec.encode(req)
        # Imports (after a restart) and topic starts are the session's own: never fed, and
        # they leave a test's feeding where it was.
        body = None if req["op"] in ("load", "forget") else self._fed(req, frame, where)
        if body is None:
            body = self._exchange(frame, where, timeout)
            self.source_generation = self.generation
        if self.recorder is not None:
            self.recorder.append(Call(frame, body, where, f"{req.get('module')}.{req.get('name')}",
                                      timeout))
        return self._interpret(body, where)

    def _exchange(self, frame: bytes, where: str, timeout: float | None) -> bytes:
        """Send one request frame and return the reply's body, within the call's limits."""
        self.live_calls += 1
        if self.spent >= self.limits.submission_seconds or self.out_of_time():
            raise budget_spent(where, self.limits.submission_seconds)
        self._ensure_worker()
        timeout = self._timeout(timeout)
        t0 = time.monotonic()
        deadline = t0 + max(timeout, 0.01)
        try:
            # The timeout is set before sending: a worker that stops reading must not block
            # the grader in sendall (a fresh socket has no timeout at all).
            self.sock.settimeout(max(timeout, 0.01))
            self.sock.sendall(frame)
            body = _read_frame_by(self.sock, codec.MAX_FRAME + 1024, deadline)
        except (TimeoutError, socket.timeout):
            self._account(t0)
            if self.out_of_time():  # cut short by the deadline: not the function's own fault
                self._kill()
                raise budget_spent(where, self.limits.submission_seconds) from None
            raise self._timed_out(where, timeout) from None
        except (EOFError, ConnectionError, BrokenPipeError, OSError) as exc:
            self._account(t0)
            raise self._died(where) from exc
        except codec.DecodeError as exc:
            self._account(t0)
            self._kill()
            raise BadResult(f"{where} returned something that cannot be graded: {exc}") from None
        self._account(t0)
        return body

    def _timeout(self, timeout: float | None) -> float:
        return min(timeout or self.limits.call_seconds, self.limits.submission_seconds - self.spent,
                   self.time_left())

    def _timed_out(self, where: str, timeout: float) -> CallTimeout:
        self._kill()
        return CallTimeout(f"{where} did not return within {timeout:g} s "
                           "(an infinite loop, or far too slow)")

    def _died(self, where: str) -> WorkerDied:
        status = self._kill()
        if self.hidden:
            # The exit status is the submission's choice (os._exit(n)): a number it picks
            # from a hidden input. Only whether it died is said.
            return WorkerDied(f"the worker process died during {where} (sys.exit/os._exit or "
                              "a crash in student code?)")
        hint = " — sys.exit/os._exit or a crash in student code?" if "status" in status else ""
        return WorkerDied(f"the worker process died during {where} ({status}{hint})")

    def _interpret(self, body: bytes, where: str) -> Any:
        """The value (or the student's exception) a reply body carries."""
        try:
            reply = codec.decode(body)
        except codec.DecodeError as exc:
            self._kill()
            raise BadResult(f"{where} returned something that cannot be graded: {exc}") from None
        if not isinstance(reply, dict) or len(reply) != 1:
            self._kill()
            raise BadResult(f"{where}: malformed reply from the worker")
        if "exc" in reply and isinstance(reply["exc"], codec.RemoteException):
            remote = reply["exc"]
            remote.message, remote.traceback = self._scrub(remote.message), self._scrub(
                remote.traceback)
            raise StudentException(remote, where)
        value = reply.get("ok")
        if isinstance(value, dict) and set(value) == {"__too_large__"}:
            raise BadResult(f"{where} returned a result over {codec.MAX_FRAME >> 20} MiB")
        return _closed_types(value) if self.hidden else value

    # -- pipelining (a batch's recorded plan; see autograder.grading.replay)
    def _speculation(self) -> float:
        """How long this session's pipelines may take, all together.

        Pipelined calls run before any test reads them; a slow, wrong function runs all its
        recorded calls though its failing test would stop at the first. Past this share of
        the budget, the rest is asked call by call (the hard deadline counts all of it).
        """
        return self.limits.submission_seconds * PIPELINE_SHARE

    def pipeline(self, calls: list[Call], topic: str | None = None) -> Pipelined:
        """Send every call at once and collect the replies in order, each within its limits.

        The worker serves requests one after another exactly as if they came one at a time;
        only the round trips go (a few hundred microseconds each, thousands per submission).
        Each reply must arrive within its own call's time limit, counted from the previous
        reply, and the submission's budget still bounds the whole. At the first failure
        (timeout, death, an oversized reply, the budget spent) the worker is killed and the
        rest is left unrun: the tests then make those calls themselves, one at a time, as
        they always could.

        With ``topic``, and the zygote holding that topic's plan decoded (:meth:`Slot.preload`),
        one short request stands for all of them; the worker answers exactly the same way.
        """
        out = Pipelined([None] * len(calls), [0.0] * len(calls))
        budget = self.limits.submission_seconds
        if (not calls or self.spent >= budget or self.piped >= self._speculation()
                or self.out_of_time()):
            return out
        self._ensure_worker()
        out.generation = self.generation
        sock, limit = self.sock, codec.MAX_FRAME + 1024
        if (topic is not None and self.slot.preloaded.get(topic) == len(calls)
                and self._worker_epoch == self.slot.plan_epoch
                and (self.generation, topic) not in self._planned):
            self._planned.add((self.generation, topic))  # a worker answers a plan once
            data = memoryview(codec.encode({"op": "plan", "topic": topic}))
        else:
            data = memoryview(b"".join(c.frame for c in calls))
        sent, inbuf, pos, i, kept = 0, bytearray(), 0, 0, 0
        sock.setblocking(False)
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        t_prev = time.monotonic()
        timeout = self._timeout(calls[0].timeout)
        deadline = t_prev + max(timeout, 0.01)
        try:
            while i < len(calls):
                left = deadline - time.monotonic()
                if left <= 0:
                    out.seconds[i] = self._piped(t_prev)
                    if self.out_of_time():  # the hard deadline, not this call's own limit
                        self._kill()
                        out.fail(i, budget_spent(calls[i].where, budget))
                        break
                    # Raised, and the function barred from further calls, when a test makes
                    # this call (Session.call), as if it had made it live.
                    out.fail(i, self._timed_out(calls[i].where, timeout))
                    break
                for _key, mask in sel.select(left):
                    if mask & selectors.EVENT_WRITE and sent < len(data):
                        try:
                            sent += sock.send(data[sent:sent + (1 << 20)])
                        except BlockingIOError:
                            pass
                        if sent == len(data):
                            sel.modify(sock, selectors.EVENT_READ)
                    if mask & selectors.EVENT_READ:
                        try:
                            chunk = sock.recv(1 << 20)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            raise EOFError("worker closed the connection")
                        inbuf += chunk
                while len(inbuf) - pos >= codec.FRAME_HEADER.size:
                    n = codec.frame_length(inbuf, pos, limit)
                    if len(inbuf) - pos < codec.FRAME_HEADER.size + n:
                        break
                    now = time.monotonic()
                    out.seconds[i] = self._piped(t_prev, now)
                    kept += n
                    if kept > PIPELINE_BYTES:
                        # Held until the tests have read them: past this, a worker returning
                        # huge results one after another would exhaust the grader's memory.
                        # The rest is asked again call by call (and dropped after each test).
                        self._kill()
                        return out
                    out.replies[i] = bytes(inbuf[pos + 8:pos + 8 + n])
                    pos += 8 + n
                    t_prev, i = now, i + 1
                    if i == len(calls):
                        break
                    if self.piped >= self._speculation():
                        # Pipelines may take their share of the budget, no longer: the rest
                        # is asked call by call, within what is left before the deadline.
                        self._kill()
                        return out
                    timeout = self._timeout(calls[i].timeout)
                    deadline = now + max(timeout, 0.01)
                if pos > 1 << 22:
                    del inbuf[:pos]
                    pos = 0
                if i < len(calls) and sent == len(data):
                    # Replies come every few dozen microseconds: waking for each one cost the
                    # grader as much CPU as the worker spent. A short nap lets them gather
                    # (the socket buffers them; a call's deadline is unchanged).
                    time.sleep(PIPELINE_NAP)
            else:
                if len(inbuf) > pos:  # bytes nobody asked for: this worker is not to be trusted
                    self._kill()
        except (EOFError, ConnectionError, OSError) as exc:
            out.seconds[i] = self._piped(t_prev)
            out.fail(i, self._died(calls[i].where))
            out.failure.__cause__ = exc
        except codec.DecodeError as exc:
            out.seconds[i] = self._piped(t_prev)
            self._kill()
            out.fail(i, BadResult(f"{calls[i].where} returned something that cannot be graded: "
                                  f"{exc}"))
        finally:
            sel.close()
            if self.sock is sock:
                sock.setblocking(True)
        return out

    def _piped(self, t0: float, now: float | None = None) -> float:
        dt = (now or time.monotonic()) - t0
        self.piped += dt
        self.student_seconds += dt
        return dt

    def affordable(self, seconds: list[float]) -> bool:
        """Whether calls taking ``seconds`` would all have run within the budget, call by call
        (each is refused once the budget is spent before it starts)."""
        spent = self.spent
        for dt in seconds:
            if spent >= self.limits.submission_seconds:
                return False
            spent += dt
        return True

    def charge(self, seconds: float) -> None:
        """Charge pipelined calls a test used to the submission's budget."""
        self.spent += seconds

    def pipeline_alive(self, replies: Pipelined) -> bool:
        """Whether the worker that gave ``replies`` still runs (its objects still exist)."""
        return self.sock is not None and self.generation == replies.generation

    def feed(self, calls: list[Call] | None = None, replies: Pipelined | None = None,
             start: int = 0, stop: int = 0) -> None:
        """Serve requests from pipelined replies while they match ``calls[start:stop]``.

        A test replays its recorded calls: each request it makes is compared, byte for byte,
        with the next recorded one; on a match the reply the worker already gave is used (or
        the failure that call met is raised again); from the first mismatch on, the test goes
        on with live calls. ``feed()`` stops feeding.
        """
        self._feed = None if calls is None or replies is None else [calls, replies, start, stop]

    def feed_position(self) -> int | None:
        return None if self._feed is None else self._feed[2]

    def rewind(self, position: int | None) -> None:
        """Feed again from ``position`` (a re-run of a failing example asks the same)."""
        if self._feed is not None and position is not None:
            self._feed[2] = position

    def _fed(self, req: dict, frame: bytes, where: str) -> bytes | None:
        if self._feed is None:
            return None
        calls, replies, i, stop = self._feed
        if i >= stop or calls[i].frame != frame:
            self._feed = None  # diverged (or done): live from here on
            return None
        self._feed[2] = i + 1
        if replies.failed_at != i:
            if replies.replies[i] is None:  # never run (the pipeline stopped before): live
                self._feed = None
                return None
            if not self.pipeline_alive(replies) and (
                    req.get("keep") or req.get("op") in ("method", "probe", "lib")
                    or b'"__handle__"' in frame):
                # The worker that answered is gone, and with it the objects it made: from the
                # first call that makes or uses one, the test goes on live (red team: it was
                # handed objects of a dead worker). Plain values stay as good as recorded.
                self._feed = None
                return None
        if self.spent >= self.limits.submission_seconds or self.out_of_time():
            self._feed = None
            self.refusals += 1
            raise budget_spent(where, self.limits.submission_seconds)
        self.charge(replies.seconds[i])
        self.fed_log.append(i)
        if replies.failed_at == i:
            self._feed = None
            raise replies.failure
        self.source_generation = replies.generation
        return replies.replies[i]

    def _read_busy(self) -> None:
        """Ask the worker how long it spent in the calls themselves (a statistic only).

        The worker's own clock, so a submission could lie: the figure is clamped to the time
        the grader saw pass, and only the throughput benchmark reads it.
        """
        seen = self.student_seconds
        try:
            busy = self._interpret(self._exchange(codec.encode({"op": "busy"}), "busy", 1.0),
                                   "busy")
        except SubmissionFault:
            return
        if isinstance(busy, float) and busy == busy:
            self.busy_seconds = min(self._busy_before + max(busy, 0.0), seen)

    def _scrub(self, text: str) -> str:
        """The worker's folders have random names (mkdtemp), and warnings and tracebacks print
        them: two runs of one submission then differed (docs/design/interface.md: byte-identical
        results).
        """
        return text.replace(self.sub_dir, "<submission>").replace(self.workdir, "<workdir>")

    def _account(self, t0: float) -> None:
        dt = time.monotonic() - t0
        self.spent += dt
        self.student_seconds += dt

    def load(self, module: str) -> None:
        """Import a topic module in the worker; ``ImportFailed`` (cached) if it cannot."""
        if module in self.failed_imports:
            self.refusals += 1
            raise ImportFailed(self.failed_imports[module])
        self._ensure_worker()
        if module in self.loaded:
            return
        try:
            self._request({"op": "load", "module": module}, f"importing {module}.py")
        except StudentException as exc:
            r = exc.remote
            msg = f"{module}.py could not be imported: {r.name}: {r.message}"
            if self.hidden:  # a topic's note reaches the student at once: fixed text only
                msg = (f"{module}.py could not be imported in the hidden tests' worker: "
                       f"{shown_exception(r)} (message hidden)")
            self.failed_imports[module] = msg
            raise ImportFailed(msg) from None
        except BudgetExhausted:
            raise
        except SubmissionFault as exc:
            self.failed_imports[module] = f"{module}.py could not be imported: {exc}"
            raise ImportFailed(self.failed_imports[module]) from None
        self.loaded.add(module)

    def forget(self) -> None:
        """Drop the objects the worker holds (a plan starts each topic with none)."""
        self._request({"op": "forget"}, "starting the topic's tests")

    def call(self, module: str, name: str, args: tuple = (), kwargs: dict | None = None,
             *, keep: bool = False, op: str = "call", handle: Any = None,
             timeout: float | None = None) -> Any:
        """Call ``module.name(*args, **kwargs)`` in the worker (or a method/probe, by ``op``)."""
        where = f"{module}.{name}" if op != "method" else f"{module}.{name} (method)"
        key = f"{module}.{name}"
        if key in self.timed_out:
            self.refusals += 1
            raise CallTimeout(self.timed_out[key])
        self.load(module)
        req = {"op": op, "module": module, "name": name, "args": list(args),
               "kwargs": dict(kwargs or {}), "keep": keep}
        if handle is not None:
            req["handle"] = handle
        try:
            return self._request(req, where, timeout)
        except CallTimeout as exc:
            self.timed_out[key] = f"{where}: not run again after an earlier call timed out ({exc})"
            raise
