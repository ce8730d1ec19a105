"""A batch's slot process: the trusted grading process that owns a sandbox
:class:`~autograder.driver.slot.Slot` (two, when there is a hidden sweep) and grades the
submissions :mod:`autograder.grading.batch` hands it, one phase at a time, writing each one's
files as its last phase ends.

All its state is one :class:`SlotProcess`, made from a :class:`SlotConfig` by the pool's
initializer (:func:`init_pool`) in each of a pool's processes, or by the grader itself when it
grades in its own process (``jobs=1``). A stop (SIGTERM from the grader, which decides on
Ctrl-C) never cuts a submission's files short: it acts as soon as they are complete
(:meth:`SlotProcess.when_written`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder import catalogue
from autograder.driver.slot import Slot
from autograder.grading import loop, plan, plan_file, runner, submission, timing, uploads
from autograder.limits import Limits
from autograder.results import model
from autograder.results import writers as outputs
from autograder.results.version import grader_version, versions


@dataclass(frozen=True)
class SlotConfig:
    """What every slot process of one batch is told (pickled to a pool's processes).

    Attributes:
        out: the batch's output folder (results/, feedback/).
        limits: the worker's and the submission's limits (each slot gets its own copy).
        hide: folders hidden from the workers (the class's, the output).
        hidden: whether the hidden suites are graded.
        hidden_sweep: whether there is a hidden sweep (hidden, and hidden suites exist): the
            public sweep then runs in a slot of its own, closed between the sweeps.
        visibility: the hidden tests' visibility in the feedback (``--visibility``).
        site_url: the lesson site the feedback links, or None (the repository's files).
        plan: whether to grade with a recorded plan (:data:`autograder.grading.batch.PLAN_MIN`).
        plan_topics: the topics a plan is recorded for (those someone handed in).
        plan_path: a plan recorded earlier (:mod:`autograder.grading.plan_file`), or None.
        plan_share: per phase, one queue per slot through which the slots swap the parts of
            the plan each recorded (:func:`autograder.grading.plan.record_shared`); None in a
            single slot or with ``plan_path``.
    """

    out: Path
    limits: Limits
    hide: tuple[str, ...]
    hidden: bool
    hidden_sweep: bool
    visibility: str
    site_url: str | None
    plan: bool
    plan_topics: tuple[str, ...]
    plan_path: Path | None = None
    plan_share: dict[str, list[Any]] | None = None


@dataclass
class Pending:
    """A submission between the sweeps: its public phase done, its hidden phase to come.

    Travels from the slot process that ran the public sweep to the one that runs the hidden
    sweep (pickled by the pool); :attr:`grading` holds the suspended session.
    """

    loaded: submission.Loaded
    grading: loop.Grading
    seconds: float


def result_of(loaded: submission.Loaded, o: loop.Outcome, seconds: float) -> model.Result:
    """The one record of ``loaded`` graded as ``o`` (:meth:`model.Result.of`: the tests'
    records and the topics' kinds as they were decided), stamped with this grader's version."""
    return model.Result.of(
        loaded.id, loaded.sha256, o.tests(), error=loaded.error, topic_notes=o.notes,
        topic_kinds=o.kinds, output=o.output, hidden_output=o.hidden_output, seconds=seconds,
        student_seconds=o.student_seconds, busy_seconds=o.busy_seconds,
        grader_version=grader_version(), versions=versions())


class SlotProcess:
    """This process as one slot of a batch: its slots, the suites, the plans, and whether it
    is writing a submission's files (a stop then waits for the end).

    Args:
        cfg: the batch's configuration.
        index: the slot's number (its zygotes' and its cgroup's).
        gates: the pool's barriers between the sweeps (none for a single slot).
    """

    def __init__(self, cfg: SlotConfig, index: int, gates: Sequence[Any] = ()) -> None:
        self.cfg, self.index, self.gates = cfg, index, list(gates)
        self.slot: Slot | None = None  # the hidden sweep's (or the only one)
        self.public_slot: Slot | None = None  # the public sweep's (closed between the sweeps)
        self.specs: dict[str, list[runner.TestSpec]] = {}
        self.plans: dict[str, dict[str, plan.TopicPlan]] | None = None
        self.writing = False
        self._after_write: Callable[[], None] | None = None  # a stop that came meanwhile

    def start(self) -> None:
        """Start the zygotes (the hidden sweep's, and the public sweep's when there is a
        hidden sweep), import the suites' specs meanwhile, and get the public phase's plan."""
        cfg = self.cfg
        self.slot = Slot(self.index, dataclasses.replace(cfg.limits), hide=list(cfg.hide))
        atexit.register(self.slot.close)
        if cfg.hidden_sweep:
            self.public_slot = Slot(self.index, dataclasses.replace(cfg.limits),
                                    hide=list(cfg.hide))
            atexit.register(self.public_slot.close)
        # The zygotes start while this process imports the suites (seconds each: torch); one that
        # fails to start here starts, or says why, at its first request.
        starting = [threading.Thread(target=_start_quietly, args=(s,), daemon=True)
                    for s in (self.slot, self.public_slot) if s is not None]
        for t in starting:
            t.start()
        self.specs = {m: runner.collect(m, hidden=cfg.hidden) for m in catalogue.topic_modules()}
        timing.lap("the suites imported (torch), the zygotes starting meanwhile")
        for t in starting:
            t.join()
        timing.lap("the zygotes started, after the suites")
        if cfg.plan_path is not None:
            self.plans = plan_file.load(cfg.plan_path, hidden=cfg.hidden)
            timing.lap("the recorded plan read")
            if self.plans is not None:
                plan.preload(self.public_slot or self.slot, self.plans)
                timing.lap("its zygote warmed up (Triton, torch), the public plan handed to it")
                return
        if cfg.plan:
            sources = {t: src for t, src in plan.reference_sources().items()
                       if t in cfg.plan_topics}
            # The public phase's only: the hidden phase's is recorded in the hidden sweep. Several
            # slots record a part each and swap them (plan.record_shared).
            share = (cfg.plan_share or {}).get("public")
            self.plans = (plan.record_shared(self.slot, self.specs, sources, self.public_slot,
                                             self.index, share, phases=("public",))
                          if sources else None)

    def public_task(self, path: str) -> model.Result | Pending:
        """Sweep 1 for one submission: its public phase, in workers reaped before this returns.
        Written at once when the batch has no hidden phase."""
        loaded = uploads.load(Path(path))
        t0 = time.monotonic()
        g = loop.begin(loaded.sources, self.specs, problems=loaded.problems, error=loaded.error,
                       missing=loaded.missing)
        if self.cfg.hidden_sweep:
            # Its workers are reaped by the zygote before its next fork, and all of them when
            # the barrier between the sweeps closes it (between_sweeps): no wait here.
            loop.run_phase(g, self.public_slot or self.slot, self.specs, "public",
                           plans=self.plans, reap=False)
            return Pending(loaded, g, time.monotonic() - t0)
        loop.run_phase(g, self.slot, self.specs, "public", plans=self.plans)
        return self.finish(Pending(loaded, g, time.monotonic() - t0))

    def between_sweeps(self, gate: Any | None) -> None:
        """Close the public tests' slot, its zygote and every worker it forked, reaped; then
        wait at ``gate`` (a barrier of all the slots, which holds each process to one call;
        None for a single slot)."""
        if self.public_slot is not None:
            self.public_slot.close()
            self.public_slot = None
        if gate is not None:
            gate.wait(timeout=plan.SHARE_WAIT_SECONDS)

    def hidden_planned(self) -> bool:
        """Whether this slot holds a hidden phase's plan already (a plan file brought it)."""
        return any("hidden" in phases for phases in (self.plans or {}).values())

    def record_hidden_plans(self, queues: list | None) -> None:
        """Add the hidden phase's recorded plans to this slot's (the hidden sweep's), shared
        through ``queues`` between a pool's slots."""
        sources = {t: src for t, src in plan.reference_sources().items()
                   if t in self.cfg.plan_topics}
        if not sources:
            return
        hidden = plan.record_shared(self.slot, self.specs, sources, None, self.index, queues,
                                    phases=("hidden",))
        merged = {t: dict(p) for t, p in (self.plans or {}).items()}
        for t, phases in hidden.items():
            merged.setdefault(t, {}).update(phases)
        self.plans = merged

    def hidden_task(self, pending: Pending) -> model.Result:
        """Sweep 2 for one submission: its hidden phase, then its files."""
        t0 = time.monotonic()
        loop.run_phase(pending.grading, self.slot, self.specs, "hidden", plans=self.plans,
                       reap=False)
        pending.seconds += time.monotonic() - t0
        return self.finish(pending)

    def finish(self, pending: Pending) -> model.Result:
        """Write a submission whose phases have all run: its result and feedback, atomically
        and never cut short by a stop (:meth:`when_written`)."""
        t0 = time.monotonic()
        o = loop.finish(pending.grading, self.specs)
        g = result_of(pending.loaded, o, pending.seconds + time.monotonic() - t0)
        self.writing = True
        try:
            return outputs.write_submission(self.cfg.out, g, self.cfg.visibility,
                                            self.cfg.site_url)
        finally:
            self.writing = False
            stop, self._after_write = self._after_write, None
            if stop is not None:
                stop()

    def when_written(self, stop: Callable[[], None]) -> None:
        """Run ``stop`` now, or as soon as the submission being written is complete (a signal
        handler's: a stopped batch leaves no half-written submission)."""
        if self.writing:
            self._after_write = stop
        else:
            stop()

    def close_now(self) -> None:
        """:meth:`Slot.close_now` this process's slots (signal-handler safe, never raises)."""
        for s in (self.slot, self.public_slot):
            if s is not None:
                with contextlib.suppress(Exception):
                    s.close_now()


def _start_quietly(slot: Slot) -> None:
    """Start ``slot``'s zygote and have it warm up (:meth:`Slot.warm_up`) while this process
    imports the suites: a batch's slot would warm up at its plan or second fork anyway, and a
    run of one submission (Gradescope's) has nothing else to do meanwhile."""
    with contextlib.suppress(Exception):  # raised again, with its reason, at the first request
        slot.start()
        slot.warm_up()


# ---------------------------------------------------------------- this process's slot

#: The slot this process is, if it is one. Module-level because the two callers that reach it
#: get nothing of ours to hold it by: a signal handler (its arguments are the signal's), and a
#: pool, which calls the module-level functions below by name in whichever process is free.
_current: SlotProcess | None = None


def current() -> SlotProcess | None:
    """This process's :class:`SlotProcess` (None: it is not grading as a slot now)."""
    return _current


def become(proc: SlotProcess | None) -> None:
    """Make ``proc`` this process's slot (None: no longer one)."""
    global _current
    _current = proc


def init_pool(queue: Any, cfg: SlotConfig, gates: list[Any]) -> None:
    """The pool's initializer: a slot process ignores SIGINT (the grader, which gets Ctrl-C
    too, decides) and leaves quietly on SIGTERM (:func:`_slot_stop`); then it becomes the
    slot numbered by ``queue`` and starts (:meth:`SlotProcess.start`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _slot_stop)
    proc = SlotProcess(cfg, queue.get(), gates)
    become(proc)  # before it starts: a stop meanwhile closes the zygotes started so far
    proc.start()


def _slot_stop(signum: int, frame: object) -> None:
    """SIGTERM in a slot process: leave, once the submission being written is complete."""
    if _current is None:
        _leave_slot()
    else:
        _current.when_written(_leave_slot)


def _leave_slot() -> None:
    """Close this process's slots (their zygotes, workers and temp folders) and exit, with
    no traceback: the grader is stopping the batch."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _current is not None:
        _current.close_now()
    os._exit(0)


def _here() -> SlotProcess:
    if _current is None:
        raise RuntimeError("this process is no batch slot (slot_process.init_pool)")
    return _current


def public_task(path: str) -> model.Result | Pending:
    """:meth:`SlotProcess.public_task` in a pool's slot process."""
    return _here().public_task(path)


def hidden_task(pending: Pending) -> model.Result:
    """:meth:`SlotProcess.hidden_task` in a pool's slot process."""
    return _here().hidden_task(pending)


def pool_between_sweeps(gate: int) -> None:
    """:meth:`SlotProcess.between_sweeps` in a pool's slot process, at its barrier ``gate``."""
    proc = _here()
    proc.between_sweeps(proc.gates[gate])


def pool_record_hidden(gate: int) -> None:
    """In a pool's slot process, once per slot (the barrier ``gate``): the hidden phase's plan,
    shared between the slots (unless a plan file brought it)."""
    proc = _here()
    proc.gates[gate].wait(timeout=plan.SHARE_WAIT_SECONDS)
    if not proc.hidden_planned():
        proc.record_hidden_plans((proc.cfg.plan_share or {}).get("hidden"))
