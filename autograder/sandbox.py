"""Trusted side of the sandbox: worker slots, one worker per submission, calls with limits.

A :class:`Slot` owns a zygote (a pre-warmed process that forks workers) and, as root, its own
unprivileged uid. A :class:`Session` is one submission on a slot: its files in a private temp
dir, a worker forked on demand and re-forked after a crash or timeout, and every call bounded
by the per-call and per-submission wall-clock limits. Results come back as plain data only.
"""

from __future__ import annotations

import contextvars
import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder import codec, isolation
from autograder.worker import Limits

__all__ = ["Limits", "Slot", "Session", "SubmissionFault", "StudentException", "CallTimeout",
           "WorkerDied", "BudgetExhausted", "ImportFailed", "BadResult"]


class SubmissionFault(Exception):
    """The submission misbehaved; ``str(exc)`` is a message a student can act on."""


#: True while a hidden test runs: messages then omit inputs and expected values.
HIDDEN: contextvars.ContextVar[bool] = contextvars.ContextVar("HIDDEN", default=False)


class StudentException(SubmissionFault):
    """Student code raised an exception (it arrives as MRO names and a message)."""

    def __init__(self, remote: codec.RemoteException, where: str) -> None:
        self.remote = remote
        self.where = where
        if remote.is_a("autograder.worker.MissingName"):
            module, _, name = where.partition(".")
            super().__init__(f"{name.split(' ')[0]} is not defined in your {module}.py")
        else:
            super().__init__(f"{where} raised {remote.name}: {remote.message}")

    def __str__(self) -> str:
        # The message is the student's own text, and it can print the arguments: during a
        # hidden test only the exception's class is shown, or the hidden inputs would leak.
        if HIDDEN.get() and not self.remote.is_a("autograder.worker.MissingName"):
            return f"{self.where} raised {self.remote.name} (message hidden in a hidden test)"
        return super().__str__()


class CallTimeout(SubmissionFault):
    pass


class WorkerDied(SubmissionFault):
    pass


class BudgetExhausted(SubmissionFault):
    pass


class ImportFailed(SubmissionFault):
    pass


class BadResult(SubmissionFault):
    """A result that could not cross (too large, malformed)."""


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
    (n,) = struct.unpack("<Q", _recv_exact(sock, 8, deadline))
    if n > limit:
        raise codec.DecodeError(f"result of {n} bytes is over the {limit} byte limit")
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
        if isolation.is_root():
            # The uid comes from a claimed slot number, not ``index``: concurrent graders
            # must never share one (see isolation.acquire_slot).
            number, self._lock_fd = isolation.acquire_slot()
            self.uid, self.gid = isolation.slot_user(number)
        self.hide = isolation.secret_paths(hide)
        self.tmp_root = tempfile.mkdtemp(prefix=f"course-slot{index}-")
        os.chmod(self.tmp_root, 0o711)
        self._proc: subprocess.Popen | None = None
        self._ctl: socket.socket | None = None
        self._ctl_file: Any = None

    # -- zygote lifecycle
    def _start(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.zygote", str(child.fileno())],
            pass_fds=[child.fileno()], cwd=self.tmp_root, env=_clean_env(),
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

    def _command(self, cmd: dict, fds: list[int] | None = None) -> dict:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        data = json.dumps(cmd).encode()
        if fds:
            socket.send_fds(self._ctl, [data], fds)
        else:
            self._ctl.sendall(data)
        line = self._ctl_file.readline()
        if not line:
            self._proc = None
            raise RuntimeError("worker zygote died")
        return json.loads(line)

    def fork(self, workdir: str, sub_dir: str) -> tuple[int, socket.socket]:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply = self._command({"op": "fork", "workdir": workdir, "sub_dir": sub_dir,
                                   "limits": self.limits.to_json(), "uid": self.uid,
                                   "gid": self.gid, "hide": self.hide}, [theirs.fileno()])
        finally:
            theirs.close()
        return int(reply["pid"]), mine

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
        self.workdir, self.sub_dir = slot.new_workdir()
        for module, source in sources.items():
            Path(self.sub_dir, f"{module}.py").write_bytes(source)
        slot.hand_over(self.workdir)
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.loaded: set[str] = set()
        self.failed_imports: dict[str, str] = {}
        self.timed_out: dict[str, str] = {}
        self.spent = 0.0
        self.student_seconds = 0.0
        self.restarts = 0
        self.generation = 0  # bumped at each fork: objects held by an older worker are gone

    # -- worker lifecycle
    def _ensure_worker(self) -> None:
        if self.sock is None:
            self.pid, self.sock = self.slot.fork(self.workdir, self.sub_dir)
            self.loaded = set()
            self.generation += 1

    def _kill(self) -> str:
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
            status = self.slot.reap(self.pid)
            self.slot.killall()
        if self.sock is not None:
            self.sock.close()
        self.pid, self.sock = None, None
        self.restarts += 1
        return status

    def close(self) -> str:
        """Kill the worker and any stray process; return what it printed (capped)."""
        if self.sock is not None:
            self._kill()
        self.slot.killall()
        raw = _read_output(os.path.join(self.workdir, "output.txt"), self.limits.output_bytes + 1)
        text = self._scrub(raw[: self.limits.output_bytes].decode("utf-8", "replace"))
        if len(raw) > self.limits.output_bytes:
            text += f"\n[output over {self.limits.output_bytes} bytes dropped]"
        shutil.rmtree(self.workdir, ignore_errors=True)
        return text

    # -- requests
    def _request(self, req: dict, where: str, timeout: float | None = None) -> Any:
        if self.spent >= self.limits.submission_seconds:
            raise BudgetExhausted(
                f"{where}: not run, the submission used up its {self.limits.submission_seconds:g} s")
        self._ensure_worker()
        timeout = min(timeout or self.limits.call_seconds,
                      self.limits.submission_seconds - self.spent)
        t0 = time.monotonic()
        deadline = t0 + max(timeout, 0.01)
        try:
            # The timeout is set before sending: a worker that stops reading must not block
            # the grader in sendall (a fresh socket has no timeout at all).
            self.sock.settimeout(max(timeout, 0.01))
            self.sock.sendall(codec.encode(req))
            body = _read_frame_by(self.sock, codec.MAX_FRAME + 1024, deadline)
        except (TimeoutError, socket.timeout):
            self._account(t0)
            self._kill()
            raise CallTimeout(f"{where} did not return within {timeout:g} s "
                              "(an infinite loop, or far too slow)") from None
        except (EOFError, ConnectionError, BrokenPipeError, OSError) as exc:
            self._account(t0)
            status = self._kill()
            hint = " — sys.exit/os._exit or a crash in student code?" if "status" in status else ""
            raise WorkerDied(f"the worker process died during {where} ({status}{hint})") from exc
        except codec.DecodeError as exc:
            self._account(t0)
            self._kill()
            raise BadResult(f"{where} returned something that cannot be graded: {exc}") from None
        self._account(t0)
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
        return value

    def _scrub(self, text: str) -> str:
        """The worker's folders have random names (mkdtemp), and warnings and tracebacks print
        them: two runs of one submission then differed (INTERFACE.md: byte-identical results).
        """
        return text.replace(self.sub_dir, "<submission>").replace(self.workdir, "<workdir>")

    def _account(self, t0: float) -> None:
        dt = time.monotonic() - t0
        self.spent += dt
        self.student_seconds += dt

    def load(self, module: str) -> None:
        """Import a topic module in the worker; ``ImportFailed`` (cached) if it cannot."""
        if module in self.failed_imports:
            raise ImportFailed(self.failed_imports[module])
        self._ensure_worker()
        if module in self.loaded:
            return
        try:
            self._request({"op": "load", "module": module}, f"importing {module}.py")
        except StudentException as exc:
            r = exc.remote
            msg = f"{module}.py could not be imported: {r.name}: {r.message}"
            self.failed_imports[module] = msg
            raise ImportFailed(msg) from None
        except BudgetExhausted:
            raise
        except SubmissionFault as exc:
            self.failed_imports[module] = f"{module}.py could not be imported: {exc}"
            raise ImportFailed(self.failed_imports[module]) from None
        self.loaded.add(module)

    def call(self, module: str, name: str, args: tuple = (), kwargs: dict | None = None,
             *, keep: bool = False, op: str = "call", handle: Any = None,
             timeout: float | None = None) -> Any:
        """Call ``module.name(*args, **kwargs)`` in the worker (or a method/probe, by ``op``)."""
        where = f"{module}.{name}" if op != "method" else f"{module}.{name} (method)"
        key = f"{module}.{name}"
        if key in self.timed_out:
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
