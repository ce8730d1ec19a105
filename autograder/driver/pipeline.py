"""Pipelining: a batch's recorded calls sent to the worker all at once, their replies kept
and fed to the tests that ask the same (autograder.grading.replay decides what to send).

The worker serves pipelined requests exactly as if they came one at a time; only the round trips
go. A :class:`Pipeline` is held by its :class:`autograder.driver.session.Session` and owns its
state (what it fed, the plans its workers were sent, the seconds it took); it sees the session
only through :class:`Worker` (the socket, the worker's generation, and what to do when the worker
fails) and the shared :class:`~autograder.driver.budget.Budget`. Its job: the budget it may take
(:data:`PIPELINE_SHARE`), the memory it may hold (:data:`PIPELINE_BYTES`), and the rule that a
recorded reply is used only while the test's requests match the recording byte for byte.
"""

from __future__ import annotations

import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from autograder.wire import codec
from autograder.wire import frames
from autograder.driver.budget import Budget
from autograder.driver.errors import CallTimeout, SubmissionFault, WorkerDied, budget_spent
from autograder.driver.protocol import Call, unreadable

#: Seconds a pipeline waits between reads, for replies to gather.
PIPELINE_NAP = 0.002

#: The most reply bytes one pipeline keeps (a correct submission's largest topic: 0.7 MB).
PIPELINE_BYTES = 32 * 2**20

#: The share of the submission's budget its pipelines may take, all together (a correct
#: submission's take a few seconds of the default 120 s): see :meth:`Pipeline._speculation`.
PIPELINE_SHARE = 0.25


@dataclass
class Pipelined:
    """The replies to a pipelined list of calls (``None``: not run) and where it stopped.

    ``seconds[i]`` is how long call ``i`` took: it is charged to the submission's budget only
    when a test uses the reply (:meth:`Budget.charge`), as if the call had been made then; a
    call no test reaches (a failing test stops early) costs the submission nothing.
    """

    replies: list[bytes | None]
    seconds: list[float] = field(default_factory=list)
    failed_at: int | None = None
    failure: SubmissionFault | None = None
    generation: int = 0

    def fail(self, i: int, exc: SubmissionFault) -> None:
        """Record that call ``i`` met ``exc`` (a test making that call raises it again)."""
        self.failed_at, self.failure = i, exc


class Fed(NamedTuple):
    """A recorded reply :meth:`Pipeline.fed` serves: its body, and the worker generation that
    gave it (objects it names live in that worker)."""

    body: bytes
    generation: int


#: :meth:`Pipeline.fed`'s answer when the call matched but the budget is spent: the session
#: refuses it, as it would refuse it live.
REFUSED = Fed(b"", -1)


class Worker(Protocol):
    """What a pipeline needs of the session whose worker it talks to, and nothing else."""

    #: the worker's socket (None: no worker now)
    sock: socket.socket | None
    #: bumped at each fork: objects held by an older worker are gone
    generation: int

    def connect(self) -> socket.socket:
        """The worker's socket, forked first if there is no worker."""

    def holds_plan(self, topic: str, count: int) -> bool:
        """Whether the worker's zygote holds ``topic``'s plan of ``count`` calls, decoded for
        this worker (then one short request stands for all of them)."""

    def kill_worker(self) -> str:
        """SIGKILL the worker and its strays; their status."""

    def worker_timed_out(self, where: str, timeout: float) -> CallTimeout:
        """Kill the worker that ran past ``timeout``; the fault a test making the call meets."""

    def worker_died(self, where: str) -> WorkerDied:
        """Reap the worker that died; the fault a test making the call meets."""


class Pipeline:
    """A session's pipelined calls and the feeding of their replies to tests.

    Args:
        worker: the session, as the worker this pipeline talks to (:class:`Worker`).
        budget: the submission's budget and deadline, shared with the session's live calls.
    """

    def __init__(self, worker: Worker, budget: Budget) -> None:
        self.worker, self.budget = worker, budget
        self.piped = 0.0  # time pipelines took (bounded by the budget too: _speculation)
        self.fed_log: list[int] = []  # the pipelined replies used, in order
        self._planned: set[tuple[int, str]] = set()  # (worker generation, topic) plans sent
        self._feed: list | None = None  # [calls, replies, next index, stop] while feeding

    def reset(self) -> None:
        """Forget what held for the session's workers and slot (it is being suspended): the
        feeding and the plans sent. The seconds pipelines took are kept."""
        self._feed = None
        self._planned = set()

    def _speculation(self) -> float:
        """How long this session's pipelines may take, all together.

        Pipelined calls run before any test reads them; a slow, wrong function runs all its
        recorded calls though its failing test would stop at the first. Past this share of
        the budget, the rest is asked call by call (the hard deadline counts all of it).
        """
        return self.budget.seconds * PIPELINE_SHARE

    def send(self, calls: list[Call], topic: str | None = None) -> Pipelined:
        """Send every call at once and collect the replies in order, each within its limits.

        The worker serves requests one after another exactly as if they came one at a time;
        only the round trips go (a few hundred microseconds each, thousands per submission).
        Each reply must arrive within its own call's time limit, counted from the previous
        reply, and the submission's budget still bounds the whole. At the first failure
        (timeout, death, an oversized reply, the budget spent) the worker is killed and the
        rest is left unrun: the tests then make those calls themselves, one at a time, as
        they always could.

        With ``topic``, and the zygote holding that topic's plan decoded (:meth:`Slot.preload`,
        :meth:`Worker.holds_plan`),
        one short request stands for all of them; the worker answers exactly the same way.
        """
        out = Pipelined([None] * len(calls), [0.0] * len(calls))
        worker, budget = self.worker, self.budget
        if not calls or budget.exhausted() or self.piped >= self._speculation():
            return out
        sock, limit = worker.connect(), codec.MAX_FRAME + 1024
        out.generation = worker.generation
        if (topic is not None and worker.holds_plan(topic, len(calls))
                and (worker.generation, topic) not in self._planned):
            self._planned.add((worker.generation, topic))  # a worker answers a plan once
            data = memoryview(codec.encode({"op": "plan", "topic": topic}))
        else:
            data = memoryview(b"".join(c.frame for c in calls))
        sent, inbuf, pos, i, kept = 0, bytearray(), 0, 0, 0
        sock.setblocking(False)
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        t_prev = time.monotonic()
        timeout = budget.timeout(calls[0].timeout)
        deadline = t_prev + max(timeout, 0.01)
        try:
            while i < len(calls):
                left = deadline - time.monotonic()
                if left <= 0:
                    out.seconds[i] = self._piped(t_prev)
                    if budget.out_of_time():  # the hard deadline, not this call's own limit
                        worker.kill_worker()
                        out.fail(i, budget_spent(calls[i].where, budget.seconds))
                        break
                    # Raised, and the function barred from further calls, when a test makes
                    # this call (Session.call), as if it had made it live.
                    out.fail(i, worker.worker_timed_out(calls[i].where, timeout))
                    break
                for _key, mask in sel.select(left):
                    if mask & selectors.EVENT_WRITE and sent < len(data):
                        try:
                            sent += sock.send(data[sent:sent + (1 << 20)])
                        except BlockingIOError:
                            pass
                        except (BrokenPipeError, ConnectionResetError):
                            # The worker died while requests were still going out. Its replies
                            # to the calls before its death are still in our buffer: read them
                            # (up to its EOF) so the death is charged to the call that caused
                            # it, not to whichever call the send happened to be at (a race
                            # that gave the same submission different grades under load).
                            sent = len(data)
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
                while (body := frames.frame_at(inbuf, pos, limit)) is not None:
                    now = time.monotonic()
                    out.seconds[i] = self._piped(t_prev, now)
                    kept += body.stop - body.start
                    if kept > PIPELINE_BYTES:
                        # Held until the tests have read them: past this, a worker returning
                        # huge results one after another would exhaust the grader's memory.
                        # The rest is asked again call by call (and dropped after each test).
                        worker.kill_worker()
                        return out
                    out.replies[i] = bytes(inbuf[body])
                    pos = body.stop
                    t_prev, i = now, i + 1
                    if i == len(calls):
                        break
                    if self.piped >= self._speculation():
                        # Pipelines may take their share of the budget, no longer: the rest
                        # is asked call by call, within what is left before the deadline.
                        worker.kill_worker()
                        return out
                    timeout = budget.timeout(calls[i].timeout)
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
                    worker.kill_worker()
        except (EOFError, ConnectionError, OSError) as exc:
            out.seconds[i] = self._piped(t_prev)
            out.fail(i, worker.worker_died(calls[i].where))
            out.failure.__cause__ = exc
        except frames.FrameError as exc:  # a length over the limit
            out.seconds[i] = self._piped(t_prev)
            worker.kill_worker()
            out.fail(i, unreadable(calls[i].where, exc))
        finally:
            sel.close()
            if worker.sock is sock:
                sock.setblocking(True)
        return out

    def _piped(self, t0: float, now: float | None = None) -> float:
        """Count the seconds since ``t0`` as pipelined and as the student's; return them."""
        dt = (now or time.monotonic()) - t0
        self.piped += dt
        self.budget.student_seconds += dt
        return dt

    def alive(self, replies: Pipelined) -> bool:
        """Whether the worker that gave ``replies`` still runs (its objects still exist)."""
        return self.worker.sock is not None and self.worker.generation == replies.generation

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
        """The index of the next recorded call :meth:`feed` compares with (None: not feeding)."""
        return None if self._feed is None else self._feed[2]

    def rewind(self, position: int | None) -> None:
        """Feed again from ``position`` (a re-run of a failing example asks the same)."""
        if self._feed is not None and position is not None:
            self._feed[2] = position

    def fed(self, req: dict, frame: bytes) -> Fed | None:
        """The recorded reply for ``frame`` while feeding matches, else None (go live).

        :data:`REFUSED` when the call matched but the budget is spent (the session refuses it,
        as it would live); the reply is charged to the budget when it is used.

        Raises:
            SubmissionFault: the failure the pipeline met at this very call.
        """
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
            if not self.alive(replies) and (
                    req.get("keep") or req.get("op") in ("method", "probe", "lib")
                    or b'"__handle__"' in frame):
                # The worker that answered is gone, and with it the objects it made: from the
                # first call that makes or uses one, the test goes on live (red team: it was
                # handed objects of a dead worker). Plain values stay as good as recorded.
                self._feed = None
                return None
        if self.budget.exhausted():
            self._feed = None
            return REFUSED
        self.budget.charge(replies.seconds[i])
        self.fed_log.append(i)
        if replies.failed_at == i:
            self._feed = None
            raise replies.failure
        return Fed(replies.replies[i], replies.generation)
