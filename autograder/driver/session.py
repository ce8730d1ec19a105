"""One submission on a worker slot: its files in a private temp dir, a worker forked on demand
and re-forked after a crash or timeout, every call bounded by the per-call and per-submission
wall-clock limits (docs/design/grading-contract.md). Results come back as plain data only.

The trusted side of the sandbox: it starts no student code itself (the slot's zygote forks the
workers, :mod:`autograder.driver.slot`); requests and replies follow
:mod:`autograder.driver.protocol`; a batch's pipelined calls are the session's
:class:`~autograder.driver.pipeline.Pipeline`, its budget and deadline its
:class:`~autograder.driver.budget.Budget`, shared by the two.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import time
from pathlib import Path
from typing import Any

from autograder.wire import codec
from autograder.wire import frames
from autograder.driver.errors import (HIDDEN, BudgetExhausted, CallTimeout,
                                       ImportFailed, StudentException, SubmissionFault,
                                       WorkerDied, budget_spent, shown_exception)
from autograder.driver.budget import Budget
from autograder.driver.pipeline import REFUSED, Pipeline
from autograder.driver.protocol import (Call, barred, call_timeout, interpret_reply, request,
                                         unreadable, where_of)
from autograder.driver.slot import Slot
from autograder.limits import Limits


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


class Session:
    """One submission graded on a slot: files in, calls out, worker restarted on demand.

    Its :attr:`budget` (the budget and the hard deadline) and its :attr:`pipeline` (a batch's
    calls sent at once) are objects of their own; the session is the :class:`Worker
    <autograder.driver.pipeline.Worker>` its pipeline talks to.

    Args:
        slot: the slot whose zygote forks this submission's workers.
        sources: module name -> the submission's source bytes (written as ``<name>.py``).
    """

    def __init__(self, slot: Slot, sources: dict[str, bytes]) -> None:
        self.slot = slot
        self.budget = Budget(slot.limits)
        self.pipeline = Pipeline(self, self.budget)
        self.sources = sources
        self.workdir, self.sub_dir = self._new_workdir()
        self._busy_before = 0.0  # their busy_seconds
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.loaded: set[str] = set()
        self.failed_imports: dict[str, str] = {}
        self.timed_out: dict[str, str] = {}
        self.busy_seconds = 0.0  # of which the worker says it spent in the calls themselves
        self.restarts = 0
        self.generation = 0  # bumped at each fork: objects held by an older worker are gone
        self.source_generation = 0  # the worker generation that produced the latest reply
        self.recorder: list[Call] | None = None  # autograder.grading.replay records a reference run here
        self.live_calls = 0  # requests sent one at a time (not answered from a pipeline)
        #: replies to calls of the submission's own functions and classes that carried a value,
        #: and replies to those and to method calls that carried an exception its code raised:
        #: a test that passed on exceptions alone passed an error rule only
        #: (autograder.grading.runner.gate_error_rules)
        self.returned = 0
        self.raised = 0
        #: frame bytes of those live calls, each way (a statistic: bench/suite_profile.py)
        self.bytes_sent = 0
        self.bytes_received = 0
        #: calls refused for the session's own state (budget spent, function barred, import
        #: failed): a verdict met with one is not the replies' alone (autograder.grading.replay)
        self.refusals = 0
        self._worker_epoch = -1  # the slot's plan_epoch when this worker was forked
        #: "public" or "hidden": the phase whose tests this session runs now (see
        #: :meth:`switch`). In the hidden phase, every text that can reach a student is fixed
        #: by the grader, as while a hidden test runs (:data:`HIDDEN`).
        self.phase = "public"
        self._outputs = {"public": "", "hidden": ""}  # what each phase's workers printed

    # -- the budget and the hard deadline (docs/design/grading-contract.md), kept by self.budget
    @property
    def limits(self) -> Limits:
        """The limits this session is graded under (the slot's, unless set: a reference run
        has no budget, autograder.grading.plan)."""
        return self.budget.limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self.budget.limits = limits

    @property
    def spent(self) -> float:
        """Seconds of the budget used: live calls, and pipelined calls a test used."""
        return self.budget.spent

    @property
    def student_seconds(self) -> float:
        """Seconds the workers computed for the submission (a statistic)."""
        return self.budget.student_seconds

    def time_left(self) -> float:
        """Seconds before the submission's hard deadline (negative once it passed)."""
        return self.budget.time_left()

    def out_of_time(self) -> bool:
        """Whether the hard deadline has passed: every remaining test then fails."""
        return self.budget.out_of_time()

    @property
    def hidden(self) -> bool:
        """Whether what is said now may carry a hidden input (a hidden test, or its phase)."""
        return self.phase == "hidden" or HIDDEN.get()

    # -- worker lifecycle (the pipeline's Worker too)
    def connect(self) -> socket.socket:
        """The worker's socket, a worker forked first if there is none (the hard deadline
        starts with the first)."""
        if self.sock is None:
            if self.budget.started is None:
                self.slot.start()
                self.budget.start()
            t0 = time.monotonic()
            self.pid, self.sock = self.slot.fork(self.workdir, self.sub_dir)
            # The zygote's fork is the grader's work, not the submission's (a zygote warms up
            # torch, seconds, just before its second fork): the deadline moves by its time.
            self.budget.forked(time.monotonic() - t0)
            self._worker_epoch = self.slot.plan_epoch
            self.loaded = set()
            self.generation += 1
        return self.sock

    def holds_plan(self, topic: str, count: int) -> bool:
        """Whether the slot's zygote holds ``topic``'s plan of ``count`` calls, decoded before
        this worker was forked (:meth:`Slot.preload`)."""
        return (self.slot.preloaded.get(topic) == count
                and self._worker_epoch == self.slot.plan_epoch)

    def kill_worker(self, wait: bool = True) -> str:
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
            self.kill_worker(wait)  # strays included (Slot.killall)
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

    def suspend(self, wait: bool = True) -> None:
        """End this phase: kill its worker and strays, wait until they are reaped (without
        ``wait``, the zygote does before its next fork, or when a batch's barrier closes it:
        docs/design/threat-model.md, phases), keep what they printed, remove the workdir, let go
        of the slot. The budget, the rest of the deadline, the barred functions and the failed
        imports are kept for :meth:`resume`, in another process too (it pickles)."""
        if self.slot is None:
            return
        self._outputs[self.phase] += self._finish(wait=wait)
        self._busy_before = self.busy_seconds
        # The deadline stops while suspended: the time between sweeps is other submissions'.
        self.budget.suspend()
        self.slot = None
        self.workdir = self.sub_dir = ""
        self.recorder, self._worker_epoch = None, -1
        self.pipeline.reset()

    def resume(self, slot: Slot, phase: str) -> None:
        """Go on in fresh workers of ``slot``, in a fresh workdir, as phase ``phase``, where
        :meth:`suspend` stopped: the same budget and the rest of the deadline."""
        if self.slot is not None:
            self.suspend()
        self.slot = slot
        self.budget.resume()
        self.workdir, self.sub_dir = self._new_workdir()
        self.loaded = set()
        self.phase = phase

    def __getstate__(self) -> dict:
        if self.slot is not None:
            raise RuntimeError("only a suspended session travels (Session.suspend)")
        return dict(self.__dict__)

    def output(self, phase: str) -> str:
        """What the workers of ``phase`` ("public", "hidden") printed, once :meth:`close`d."""
        return self._outputs[phase]

    def close(self, wait: bool = True) -> str:
        """Kill the worker and any stray process; return what it printed (capped).

        Without ``wait`` the zygote finishes the killing while the grader goes on (see
        :meth:`_finish`). A suspended session has nothing left to close.
        """
        if self.slot is not None:
            self._outputs[self.phase] += self._finish(wait)
            self.slot = None
        return self._outputs["public"] + self._outputs["hidden"]

    # -- requests
    def _request(self, req: dict, where: str, timeout: float | None = None) -> Any:
        frame = codec.encode(req)
        # Imports (after a restart) and topic starts are the session's own: never fed, and
        # they leave a test's feeding where it was.
        body = None
        if req["op"] not in ("load", "forget") and (fed := self.pipeline.fed(req, frame)):
            if fed is REFUSED:
                self.refusals += 1
                raise budget_spent(where, self.limits.submission_seconds)
            body, self.source_generation = fed
        if body is None:
            body = self._exchange(frame, where, timeout)
            self.source_generation = self.generation
        if self.recorder is not None:
            self.recorder.append(Call(frame, body, where, f"{req.get('module')}.{req.get('name')}",
                                      timeout))
        if req["op"] not in ("call", "method"):  # imports, library objects, probes: ours
            return self._interpret(body, where)
        try:
            value = self._interpret(body, where)
        except StudentException:
            self.raised += 1
            raise
        # a value from the submission's own function or class (a method's comes from an
        # object that one of those, or a library call of the test's, made)
        self.returned += req["op"] == "call"
        return value

    def _exchange(self, frame: bytes, where: str, timeout: float | None) -> bytes:
        """Send one request frame and return the reply's body, within the call's limits."""
        self.live_calls += 1
        if self.budget.exhausted():
            raise budget_spent(where, self.limits.submission_seconds)
        self.connect()
        timeout = self.budget.timeout(timeout)
        t0 = time.monotonic()
        deadline = t0 + max(timeout, 0.01)
        try:
            # The timeout is set before sending: a worker that stops reading must not block
            # the grader in sendall (a fresh socket has no timeout at all).
            self.sock.settimeout(max(timeout, 0.01))
            self.sock.sendall(frame)
            self.bytes_sent += len(frame)
            body = frames.read_frame(self.sock, codec.MAX_FRAME + 1024, deadline)
            self.bytes_received += len(body)
        except (TimeoutError, socket.timeout):
            self._account(t0)
            if self.out_of_time():  # cut short by the deadline: not the function's own fault
                self.kill_worker()
                raise budget_spent(where, self.limits.submission_seconds) from None
            raise self.worker_timed_out(where, timeout) from None
        except (EOFError, ConnectionError, BrokenPipeError, OSError) as exc:
            self._account(t0)
            raise self.worker_died(where) from exc
        except frames.FrameError as exc:  # a length over the limit
            self._account(t0)
            self.kill_worker()
            raise unreadable(where, exc) from None
        self._account(t0)
        return body

    def worker_timed_out(self, where: str, timeout: float) -> CallTimeout:
        """Kill the worker that ran past ``timeout`` during ``where``; the fault to raise."""
        self.kill_worker()
        return call_timeout(where, timeout)

    def worker_died(self, where: str) -> WorkerDied:
        """Reap the worker that died during ``where``; the fault to raise (its exit status
        only outside the hidden phase and hidden tests)."""
        status = self.kill_worker()
        if self.hidden:
            # The exit status is the submission's choice (os._exit(n)): a number it picks
            # from a hidden input. Only whether it died is said.
            return WorkerDied(f"the worker process died during {where} (sys.exit/os._exit or "
                              "a crash in student code?)")
        hint = " — sys.exit/os._exit or a crash in student code?" if "status" in status else ""
        return WorkerDied(f"the worker process died during {where} ({status}{hint})")

    def _interpret(self, body: bytes, where: str) -> Any:
        """The value (or the student's exception) a reply body carries (one interpreter:
        :func:`autograder.driver.protocol.interpret_reply`); a malformed reply kills the worker."""
        return interpret_reply(body, where, hidden=self.hidden, scrub=self._scrub,
                               distrust=self.kill_worker)

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
        results). A suspended session has no folders ("" would match everywhere).
        """
        if not self.workdir:
            return text
        return text.replace(self.sub_dir, "<submission>").replace(self.workdir, "<workdir>")

    def _account(self, t0: float) -> None:
        self.budget.account(time.monotonic() - t0)

    def load(self, module: str) -> None:
        """Import a topic module in the worker; ``ImportFailed`` (cached) if it cannot."""
        if module in self.failed_imports:
            self.refusals += 1
            raise ImportFailed(self.failed_imports[module])
        self.connect()
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
        where = where_of(module, name, op)
        key = f"{module}.{name}"
        if key in self.timed_out:
            self.refusals += 1
            raise CallTimeout(self.timed_out[key])
        self.load(module)
        req = request(module, name, args, kwargs, keep=keep, op=op, handle=handle)
        try:
            return self._request(req, where, timeout)
        except CallTimeout as exc:
            self.timed_out[key] = barred(where, exc)
            raise
