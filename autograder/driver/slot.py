"""A worker slot: a zygote (a pre-warmed process that forks workers), its temp root and, as
root, its own unprivileged uid and control group; a batch plan preloaded into the zygote.

The trusted side of the sandbox. A :class:`Slot` starts ``python -m autograder.sandbox.zygote``
(a command line, never an import: the zygote is the untrusted side's) and speaks one-line JSON
commands with it on a control socket: ``fork``, ``reap``, ``killall``, ``plan``, ``exit``.
:class:`autograder.driver.session.Session` runs one submission on a slot.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from autograder.limits import Limits
from autograder.driver import allowlist
from autograder.driver import cgroups
from autograder.host import is_root, repo_root, secret_paths
from autograder.driver.protocol import Call

#: A slot's memory cap is one worker's address space plus this (the zygote's own pages, which
#: its workers share, and a margin for their children); its task cap the process limit plus
#: the zygote's, bubblewrap's and the clean-up helpers' own.
SLOT_MEMORY_HEADROOM = 2**30
SLOT_TASK_HEADROOM = 16

#: Where the slot numbers' lock files live (root only).
LOCK_DIR = "/run/course-slots"
#: How long the grader waits for one answer of its zygote (start-up has its own 120 s).
ZYGOTE_REPLY_SECONDS = 300


def acquire_slot() -> tuple[int, int]:
    """Claim a free slot number for this process's lifetime: (number, lock fd).

    Concurrent graders (two `course grade` runs, parallel test workers) then never share a
    slot uid, so one's clean-up (kill every process of the uid) cannot hit another's worker.
    """
    import fcntl

    os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
    for n in range(256):
        fd = os.open(os.path.join(LOCK_DIR, f"{n}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return n, fd
        except OSError:
            os.close(fd)
    raise RuntimeError("no free worker slot (256 in use)")


def slot_user(slot: int) -> tuple[int, int]:
    """The uid/gid of worker slot ``slot``, creating the user ``course-slotN`` when missing.

    One uid per slot: a per-uid process limit then cannot let one submission starve another.
    """
    name = f"course-slot{slot}"
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "--user-group", name], check=True, capture_output=True)
        pw = pwd.getpwnam(name)
    return pw.pw_uid, pw.pw_gid


def _clean_env(triton_interpret: bool = True) -> dict[str, str]:
    """The zygote's environment: a few of the grader's variables, one thread per library, and
    Triton's interpreter on unless ``triton_interpret`` is False.

    None of the grader's ``TRITON_*`` variables is kept (a shared cache folder or a remote
    cache would reach every submission); each worker points Triton's folders into its own
    private folder (:func:`autograder.sandbox.interpreter.prepare`).
    """
    # The kernel choices of numpy's OpenBLAS, torch's MKL and ATen are kept, so that a test can
    # grade under a forced kernel (tests/kernels.py; docs/design/measured-facts.md, "The same
    # grades on every BLAS kernel").
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY",
            # CUDA must still find its libraries and devices for the gpu tests.
            "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PYTHONPATH=repo_root(), PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    if triton_interpret:
        # Topic 8's kernels run on CPU tensors through Triton's interpreter, on every machine,
        # so a grade does not depend on whether the grader has a GPU. Triton reads this flag
        # when ``@triton.jit`` decorates a kernel (the submission's import, in the worker), so
        # it must be in the environment before then: here, from the zygote's start
        # (docs/design/measured-facts.md, Triton in the sandbox).
        env["TRITON_INTERPRET"] = "1"
    return env


def leave_cores_to_workers() -> None:
    """Run this process's torch on one thread: a process that drives workers shares the cores
    with them.

    The trusted side's own tensor work (inputs, comparisons) is small, but torch's OpenMP pool
    keeps its threads spinning for a while after every parallel region (libgomp's busy wait):
    on a 2-core grader those spins took about a tenth of the CPU that workers needed
    (docs/design/measured-facts.md, "The grader's own threads"). Called when a slot is built
    and at each fork, by when every caller has imported torch (the suites import it): the
    process's environment is left alone, so its other children (a benchmark's baselines, say)
    run as they would have. It also keeps the trusted side's numbers from depending on the
    machine's count of cores.
    """
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


class Slot:
    """One worker slot: a zygote process, a private temp root and (as root) its own uid."""

    def __init__(self, index: int = 0, limits: Limits | None = None,
                 hide: list[str] | None = None, *, triton_interpret: bool = True) -> None:
        self.index = index
        self.limits = limits or Limits()
        #: Whether this slot's workers run Triton kernels through the interpreter (CPU
        #: tensors) or compile them (CUDA tensors, a GPU-only slot): docs/design/threat-model.md,
        #: Triton kernels.
        self.triton_interpret = triton_interpret
        leave_cores_to_workers()
        self.uid: int | None = None
        self.gid: int | None = None
        self._lock_fd: int | None = None
        self.cgroup: cgroups.Group | None = None
        if is_root():
            # The uid comes from a claimed slot number, not ``index``: concurrent graders
            # must never share one (see acquire_slot).
            number, self._lock_fd = acquire_slot()
            self.uid, self.gid = slot_user(number)
            # The whole slot's memory and tasks (autograder.driver.cgroups): the zygote's own share,
            # then one worker's address space and its children's.
            self.cgroup = cgroups.create(f"course-slot{number}",
                                         self.limits.address_space + SLOT_MEMORY_HEADROOM,
                                         self.limits.processes + SLOT_TASK_HEADROOM)
        self.hide = secret_paths(hide)
        # realpath: bubblewrap binds it at the same path, where the workers look for it.
        self.tmp_root = os.path.realpath(tempfile.mkdtemp(prefix=f"course-slot{index}-"))
        os.chmod(self.tmp_root, 0o711)
        self._proc: subprocess.Popen | None = None
        self._unread = 0  # replies the zygote owes for commands sent without waiting
        self._ctl: socket.socket | None = None
        self._ctl_file: Any = None
        self._hung_up = False  # closed by close_now: never starts a zygote again
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
        # As root, in bubblewrap's allow-list view (autograder.driver.allowlist) where it runs, and in
        # the slot's control group (autograder.driver.cgroups) where there is one.
        if self.uid is not None:
            command = cgroups.joining(self.cgroup, allowlist.wrap(command, self.tmp_root,
                                                                  self.hide))
        # Its own session (as bubblewrap's --new-session gives the zygote itself): a terminal's
        # Ctrl-C reaches the grader, which closes the slot, never the zygote in mid-start-up.
        self._proc = subprocess.Popen(
            command, pass_fds=[child.fileno()], cwd=self.tmp_root,
            env=_clean_env(self.triton_interpret), stdin=subprocess.DEVNULL,
            start_new_session=True)
        child.close()
        self._ctl = parent
        self._ctl_file = parent.makefile("rb")
        parent.settimeout(120)
        ready = self._ctl_file.readline()
        if b"ready" not in ready:
            raise RuntimeError(f"worker zygote of slot {self.index} failed to start")
        # The zygote is the grader's own code (it never runs a submission): a slow answer means
        # a loaded machine, not an attack, so wait long (its warm-up imports ~1100 modules and a
        # plan's decoding scales with the class; 30 s was seen to run out on 2 busy cores).
        parent.settimeout(ZYGOTE_REPLY_SECONDS)
        if self.uid is not None:
            # Strays of an earlier grader killed with SIGKILL may still run as this slot's uid.
            self.killall()

    def start(self) -> None:
        """Start the zygote now unless it runs (else the first request starts it).

        ``RuntimeError`` after :meth:`close_now`: the grader is stopping, no zygote restarts.
        """
        if self._hung_up:
            raise RuntimeError(f"slot {self.index} is closed: the grader is stopping")
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
        try:
            line = self._ctl_file.readline()
        except TimeoutError:
            # A timed-out socket file cannot be read again: drop this zygote, start afresh later.
            self._abandon()
            raise RuntimeError(f"the worker zygote of slot {self.index} did not answer within "
                               f"{ZYGOTE_REPLY_SECONDS} s (an overloaded machine?)") from None
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
        """Have the zygote fork a worker for ``workdir``/``sub_dir`` (:meth:`new_workdir`):
        its pid and the grader's end of its socket. ``RuntimeError`` if the zygote died."""
        leave_cores_to_workers()
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
        """How worker ``pid`` ended, waiting up to ``wait`` seconds ("killed by signal 9 …")."""
        return self._command({"op": "reap", "pid": pid, "wait": wait})["status"]

    def warm_up(self) -> None:
        """Have the zygote pay torch's lazy imports and first-op costs now, without waiting for
        it (its reply is read before the next command's): it would otherwise do so just before
        its second fork, inside a submission's grading. For a zygote whose first work is later
        (the hidden tests', while the public tests run in another)."""
        self._command({"op": "warm"}, wait=False)

    def killall(self) -> None:
        """Kill every stray process of the slot (its uid's, and the zygote's adopted ones)."""
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

    def _abandon(self) -> None:
        """Kill a zygote that stopped answering; the next command starts a new one."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
        self._unread = 0

    def close(self) -> None:
        """Stop the zygote (its strays with it), remove the temp root, free the slot number."""
        if self._proc is not None and self._proc.poll() is None:
            try:
                while self._unread:  # a reply owed first (warm_up, clean_up_later): else the
                    self._unread -= 1  # exit could reach the zygote with that command as one
                    self._reply()
                self._ctl.sendall(b'{"op": "exit"}')
                self._proc.wait(5)
            except Exception:
                self._proc.kill()
        self._proc = None
        shutil.rmtree(self.tmp_root, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def close_now(self, wait: float = 10.0) -> None:
        """Close the slot from a signal handler (Ctrl-C, SIGTERM: autograder.grading.batch).

        Sends no command (one sent just before the signal may be unread, and the zygote must
        not read two as one): it hangs up the control socket, so that the zygote, once done
        with its current command, kills its workers and strays and exits, as when the grader
        dies. Waits up to ``wait`` seconds for it (then kills the process started), removes
        the temp root and frees the slot number; the slot never starts a zygote again.
        """
        self._hung_up = True
        if self._ctl is not None:  # the read side stays open: the zygote may still reply
            with contextlib.suppress(OSError):
                self._ctl.shutdown(socket.SHUT_WR)
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            # waitpid, not Popen.wait: the interrupted code may hold the Popen's lock.
            deadline = time.monotonic() + wait
            try:
                while not os.waitpid(proc.pid, os.WNOHANG)[0]:
                    if time.monotonic() > deadline:
                        proc.kill()
                        os.waitpid(proc.pid, 0)
                        break
                    time.sleep(0.01)
            except ChildProcessError:  # reaped meanwhile
                pass
        # The socket is left to be collected: the code this signal interrupted may be inside
        # a read of it (closing its file here would raise "reentrant call").
        shutil.rmtree(self.tmp_root, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        # Left by an exception (Ctrl-C in `course check` or `watch`), a command may be sent and
        # its reply unread: hang up instead of sending one more (close_now).
        if exc_type is None:
            self.close()
        else:
            self.close_now()
