"""`course grade`: a batch of submissions, N worker slots, resumable, outputs per submission.

Each slot is one trusted grading process (spawned, so no torch state is shared) that owns a
sandbox :class:`~autograder.driver.session.Slot`; submissions stream through the slots and each one's
results are written as soon as it is done. A re-run skips submissions whose results already
carry the same submission hash and grader version, so a killed batch resumes where it stopped.

Ctrl-C (SIGINT to the foreground process group) or SIGTERM stops a batch quietly: the slots
ignore SIGINT and leave when the grader sends them SIGTERM (closing their zygotes and temp
folders, never in the middle of writing a submission's files), and :func:`grade_batch` raises
:class:`Interrupted` with how many submissions are saved; grades.csv and report.html are not
written for a half batch.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from autograder import catalogue
from autograder.results import model
from autograder.results.version import grader_version, versions
from autograder.results import writers as outputs
from autograder.grading import plan, plan_file
from autograder.results import report
from autograder.grading import loop
from autograder.grading.phase_lock import phase_lock
from autograder.grading import runner
from autograder.grading import submission, timing, uploads
from autograder.limits import Limits
from autograder.driver.slot import Slot
from autograder.grading.stopping import (SLOT_CLOSE_SECONDS, STOP_SIGNALS, Interrupted,  # noqa: F401
                                         stop_pool, stop_signals, stops_ignored)


def _specs(hidden: bool) -> dict[str, list[runner.TestSpec]]:
    return {m: runner.collect(m, hidden=hidden) for m in catalogue.topic_modules()}


def grade_loaded(slot: Slot, loaded: submission.Loaded,
                 specs: dict[str, list[runner.TestSpec]],
                 plans: dict | None = None, public_slot: Slot | None = None) -> model.Result:
    """Grade one submission read into memory, both phases (:func:`loop.grade`). Never raises
    for anything the submission does.

    With ``public_slot``, the public tests run in its workers and the hidden ones in fresh
    workers of ``slot``. One hard deadline, from now, bounds all of the submission's work
    (``Limits.submission_seconds``). A batch grades in two sweeps instead (:func:`grade_batch`).
    """
    t0 = time.monotonic()
    o = loop.grade(slot, loaded.sources, specs, problems=loaded.problems, error=loaded.error,
                   missing=loaded.missing, plans=plans, public_slot=public_slot)
    return _result(loaded, o, time.monotonic() - t0)


def _result(loaded: submission.Loaded, o: loop.Outcome, seconds: float) -> model.Result:
    """The one record of ``loaded`` graded as ``o`` (:meth:`model.Result.of`: the tests'
    records and the topics' kinds as they were decided), stamped with this grader's version."""
    return model.Result.of(
        loaded.id, loaded.sha256, o.tests(), error=loaded.error, topic_notes=o.notes,
        topic_kinds=o.kinds, output=o.output, hidden_output=o.hidden_output, seconds=seconds,
        student_seconds=o.student_seconds, busy_seconds=o.busy_seconds,
        grader_version=grader_version(), versions=versions())


@dataclass
class Pending:
    """A submission between the sweeps: its public phase done, its hidden phase to come.

    Travels from the slot process that ran the public sweep to the one that runs the hidden
    sweep (pickled by the pool); :attr:`grading` holds the suspended session.
    """

    loaded: submission.Loaded
    grading: loop.Grading
    seconds: float


def _resumable(out: Path, loaded: submission.Loaded, version: str,
               site_url: str | None = None) -> model.Result | None:
    done = model.load(out, loaded.id)
    if done is None or done.sha256 != loaded.sha256 or done.grader_version != version:
        return None
    done = loop.with_hints(done)  # the file carries no hints; the feedback shows them
    # Graded with other lesson links (another --site-url): graded again, so that no feedback
    # keeps a dead address. Feedback is a function of the result, so equal text = same links.
    try:
        feedback = (out / "feedback" / f"{loaded.id}.md").read_bytes()
    except OSError:
        return None
    # (encoded as write_atomic encodes it)
    if feedback != outputs.feedback_md(done, site_url).encode("utf-8", "backslashreplace"):
        return None
    done.resumed = True
    return done


# ---------------------------------------------------------------- stopping a batch


_writing = False  # this process is writing a submission's files: a stop waits for the end
_stop_after_write: Callable[[], None] | None = None  # the stop that arrived meanwhile
_signalled: int | None = None  # the stop signal the grader got (see grade_batch)


def _write(out: Path, g: model.Result, visibility: str, site_url: str | None) -> model.Result:
    """:func:`outputs.write_submission`, never cut short by a stop signal (which then acts
    as soon as the files are complete): a stopped batch leaves no half-written submission."""
    global _writing, _stop_after_write
    _writing = True
    try:
        return outputs.write_submission(out, g, visibility, site_url)
    finally:
        _writing = False
        stop, _stop_after_write = _stop_after_write, None
        if stop is not None:
            stop()


_local_slots = False  # jobs=1: this process's own slots are grading (see _interrupt)


def _interrupt() -> None:
    """Stop the grader: KeyboardInterrupt, once its own slots (jobs=1) are closed.

    Their zygotes kill the workers first, so that no clean-up on the way out meets a worker
    still starting in a removed folder (which would print a traceback)."""
    if _local_slots:
        _close_slots_now()
    raise KeyboardInterrupt


def _close_slots_now() -> None:
    """:meth:`Slot.close_now` this process's slots (signal-handler safe, never raises)."""
    for s in (_slot, _public_slot):
        if s is not None:
            with contextlib.suppress(Exception):
                s.close_now()


def _grader_stop(signum: int, frame: object) -> None:
    """SIGINT/SIGTERM in the grader: KeyboardInterrupt, after the files being written."""
    global _signalled, _stop_after_write
    _signalled = signum
    if _writing:
        _stop_after_write = _interrupt
    else:
        _interrupt()


class _Handed(NamedTuple):
    """What :func:`_resumable` reads of a :class:`submission.Loaded` (without its sources)."""

    id: str
    sha256: str


def _saved(out: Path, paths: list[Path], loaded: dict[Path, _Handed], version: str,
           site_url: str | None) -> int:
    """How many of ``paths`` a re-run of the batch would resume (complete results in ``out``
    of this very submission, grader and lesson links)."""
    n = 0
    for p in paths:
        if p not in loaded:  # the stop came while the batch was still reading submissions
            got = uploads.load(p, notebooks=False)
            loaded[p] = _Handed(got.id, got.sha256)
        n += _resumable(out, loaded[p], version, site_url) is not None
    return n


# ---------------------------------------------------------------- slot processes

_slot: Slot | None = None
_public_slot: Slot | None = None  # the public sweep's (closed between the sweeps)
_slot_index = 0
_slot_specs: dict[str, list[runner.TestSpec]] | None = None
_slot_plans: dict[str, dict[str, plan.TopicPlan]] | None = None
_slot_cfg: dict = {}
_slot_gates: list[Any] = []  # the barriers between the sweeps (a pool's slots only)

#: A batch of at least this many submissions is graded with a plan (each slot first grades
#: the reference, a few seconds; each submission then goes several times faster). It depends
#: on the batch alone, not on --jobs: a plan runs more of a submission's calls (what it prints
#: differs), and the same submissions must give the same results however many slots run.
PLAN_MIN = 3


def _init_slot(queue: mp.Queue, cfg: dict, gates: list[Any] | None = None) -> None:
    """Make this process a slot: its zygotes (the hidden sweep's, and the public sweep's
    when there is a hidden sweep), the suites' specs, and the public phase's plan."""
    global _slot, _public_slot, _slot_specs, _slot_cfg, _slot_plans, _slot_index, _slot_gates
    import atexit
    import threading

    _slot_cfg, _slot_gates = cfg, gates or []
    _slot_index = index = queue.get()
    _slot = Slot(index, Limits(**cfg["limits"]), hide=cfg["hide"])
    atexit.register(_slot.close)
    _public_slot = None
    if cfg["hidden_sweep"]:
        # A zygote of its own for the public sweep, closed between the sweeps.
        _public_slot = Slot(index, Limits(**cfg["limits"]), hide=cfg["hide"])
        atexit.register(_public_slot.close)
    # The zygotes start while this process imports the suites (seconds each: torch); one that
    # fails to start here starts, or says why, at its first request.
    starting = [threading.Thread(target=_start_quietly, args=(s,), daemon=True)
                for s in (_slot, _public_slot) if s is not None]
    for t in starting:
        t.start()
    _slot_specs = _specs(cfg["hidden"])
    timing.lap("the suites imported (torch), the zygotes starting meanwhile")
    for t in starting:
        t.join()
    timing.lap("the zygotes started, after the suites")
    _slot_plans = None
    if cfg.get("plan_path"):
        _slot_plans = plan_file.load(Path(cfg["plan_path"]), hidden=cfg["hidden"])
        timing.lap("the recorded plan read")
        if _slot_plans is not None:
            plan.preload(_public_slot or _slot, _slot_plans)
            timing.lap("its zygote warmed up (Triton, torch), the public plan handed to it")
            return
    if cfg["plan"]:
        sources = {t: src for t, src in plan.reference_sources().items()
                   if t in cfg["plan_topics"]}
        # The public phase's only: the hidden phase's is recorded in the hidden sweep. Several
        # slots record a part each and swap them (plan.record_shared).
        share = (cfg.get("plan_share") or {}).get("public")
        _slot_plans = (plan.record_shared(_slot, _slot_specs, sources, _public_slot, index,
                                          share, phases=("public",)) if sources else None)


def _start_quietly(slot: Slot) -> None:
    """Start ``slot``'s zygote and have it warm up (:meth:`Slot.warm_up`) while this process
    imports the suites: a batch's slot would warm up at its plan or second fork anyway, and a
    run of one submission (Gradescope's) has nothing else to do meanwhile."""
    with contextlib.suppress(Exception):  # raised again, with its reason, at the first request
        slot.start()
        slot.warm_up()


def _init_pool_slot(queue: mp.Queue, cfg: dict, gates: list[Any]) -> None:
    """The pool's initializer: a slot process ignores SIGINT (the grader, which gets Ctrl-C
    too, decides) and leaves quietly on SIGTERM (:func:`_slot_stop`); then :func:`_init_slot`.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _slot_stop)
    _init_slot(queue, cfg, gates)


def _slot_stop(signum: int, frame: object) -> None:
    """SIGTERM in a slot process: leave, once the submission being written is complete."""
    global _stop_after_write
    if _writing:
        _stop_after_write = _leave_slot
    else:
        _leave_slot()


def _leave_slot() -> None:
    """Close this process's slots (their zygotes, workers and temp folders) and exit, with
    no traceback: the grader is stopping the batch."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _close_slots_now()
    os._exit(0)


def _public_task(path: str) -> model.Result | Pending:
    """Sweep 1 for one submission in a slot process: its public phase, in workers reaped before
    this returns. Written at once when the batch has no hidden phase."""
    loaded = uploads.load(Path(path))
    t0 = time.monotonic()
    g = loop.begin(loaded.sources, _slot_specs, problems=loaded.problems, error=loaded.error,
                   missing=loaded.missing)
    if _slot_cfg["hidden_sweep"]:
        # Its workers are reaped by the zygote before its next fork, and all of them when the
        # barrier between the sweeps closes it (_between_sweeps): no wait here.
        loop.run_phase(g, _public_slot or _slot, _slot_specs, "public", plans=_slot_plans,
                       reap=False)
        return Pending(loaded, g, time.monotonic() - t0)
    loop.run_phase(g, _slot, _slot_specs, "public", plans=_slot_plans)
    return _finish(Pending(loaded, g, time.monotonic() - t0))


def _between_sweeps(gate: Any) -> None:
    """Run once in every slot process between the sweeps (``gate``, a barrier of all the
    slots, holds each process to one call): close the public tests' slot, its zygote and every
    worker it forked, reaped."""
    global _public_slot
    if _public_slot is not None:
        _public_slot.close()
        _public_slot = None
    gate.wait(timeout=plan.SHARE_WAIT_SECONDS)


def _record_hidden_plans(queues: list | None) -> None:
    """Add the hidden phase's recorded plans to this slot's (the hidden sweep's)."""
    global _slot_plans
    sources = {t: src for t, src in plan.reference_sources().items()
               if t in _slot_cfg["plan_topics"]}
    if not sources:
        return
    hidden = plan.record_shared(_slot, _slot_specs, sources, None, _slot_index, queues,
                                phases=("hidden",))
    merged = {t: dict(p) for t, p in (_slot_plans or {}).items()}
    for t, phases in hidden.items():
        merged.setdefault(t, {}).update(phases)
    _slot_plans = merged


def _hidden_task(pending: Pending) -> model.Result:
    """Sweep 2 for one submission in a slot process: its hidden phase, then its files."""
    t0 = time.monotonic()
    loop.run_phase(pending.grading, _slot, _slot_specs, "hidden", plans=_slot_plans, reap=False)
    pending.seconds += time.monotonic() - t0
    return _finish(pending)


def _finish(pending: Pending) -> model.Result:
    """Write a submission whose phases have all run: its result and feedback, atomically."""
    t0 = time.monotonic()
    o = loop.finish(pending.grading, _slot_specs)
    g = _result(pending.loaded, o, pending.seconds + time.monotonic() - t0)
    return _write(Path(_slot_cfg["out"]), g, _slot_cfg["visibility"], _slot_cfg["site_url"])


def grade_batch(paths: list[Path], out: Path, *, jobs: int = 1, limits: Limits | None = None,
                hidden: bool = True, visibility_hidden: str = "after_published",
                progress: Callable[[model.Result], None] | None = None,
                plan_batches: bool = True, site_url: str | None = None,
                plan_path: Path | None = None, class_files: bool = True,
                sweep: Callable[[str, int, int], None] | None = None,
                plan_size: int | None = None) -> list[model.Result]:
    """Grade every submission into ``out``; returns summaries sorted by id.

    In two sweeps (docs/design/threat-model.md, phases): every submission's public tests, then,
    once every public-phase worker of the batch is reaped, every submission's hidden tests; a
    submission's files are written as its hidden phase ends. The sweeps hold the host-wide
    :func:`~autograder.grading.phase_lock.phase_lock` of their phase, so no other grader of this
    machine runs a worker of the other phase meanwhile. ``sweep(name, done, count)`` is told
    as each sweep ("public", "hidden") starts and as each of its submissions is done;
    ``progress`` gets each submission's summary as it is written (the resumed ones first).
    A batch stopped half way holds the files of the submissions whose last phase ended.

    Feedback links each failed test's lesson on ``site_url`` (the published lesson site), or
    names its file in the repository when None (:func:`autograder.catalogue.lesson_link`).

    The instructor's own folders (the class, the output) are hidden from workers too. With
    ``PLAN_MIN`` submissions or more, each slot first records the plan of :mod:`autograder.grading.replay`
    (``plan_batches=False`` grades every call one at a time, as `course check` does).
    ``plan_path``: a plan recorded earlier (:mod:`autograder.grading.plan_file`), replayed
    whatever the batch's size where it is current (Gradescope's runs, one submission each).
    ``class_files=False`` leaves out grades.csv and report.html (a class of one needs neither,
    a shard leaves them to `course report`) and removes only ``paths``' own stale temp files:
    other graders (the other shards) may be writing into ``out`` at the same time.
    ``plan_size``: how many submissions decide whether to plan (default ``len(paths)``); a
    shard gives its whole class's, so that it writes what one unsharded run would
    (:data:`PLAN_MIN`; :mod:`autograder.grading.shards`).

    Raises:
        Interrupted: a stop signal (SIGINT, SIGTERM) ended the batch; the submissions whose
            files were written stay written, and a re-run resumes after them.
    """
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("results", "feedback"):  # there even for an empty class, as the CLI says
        (out / sub).mkdir(exist_ok=True)
    # A batch killed mid-write left them; they are no result. Only this batch's own when the
    # folder is shared: another shard's temp file is a write in progress.
    outputs.remove_stale_temps(out, None if class_files else
                               [submission.submission_id(p) for p in paths])
    global _signalled
    _signalled = None
    version = grader_version()
    loaded: dict[Path, _Handed] = {}  # for Interrupted's count
    try:
        with stop_signals(_grader_stop):
            summaries = _grade_all(paths, out, jobs, limits, hidden, visibility_hidden,
                                   progress, plan_batches, version, loaded, site_url,
                                   plan_path, sweep, plan_size)
    except BaseException as exc:
        # After a stop signal, whatever broke on the way out (a slot it reached first breaks
        # the pool; a closed slot refuses to restart) is the stop's doing.
        if not isinstance(exc, KeyboardInterrupt) and _signalled is None:
            raise
        with stops_ignored():
            saved = _saved(out, paths, loaded, version, site_url)
        raise Interrupted(saved, len(paths), _signalled or signal.SIGINT) from None
    # Only once every submission is graded: a stopped batch writes no partial table.
    # From the records in memory (each as its file holds it, or read back when resumed): the
    # files are not read again.
    if class_files:
        outputs.write_grades_csv(out, summaries)
        report.write_report(out, summaries)
    return sorted(summaries, key=lambda s: s.id)


def _grade_all(paths: list[Path], out: Path, jobs: int, limits: Limits | None, hidden: bool,
               visibility_hidden: str, progress: Callable[[model.Result], None] | None,
               plan_batches: bool, version: str, loaded: dict[Path, _Handed],
               site_url: str | None, plan_path: Path | None = None,
               sweep: Callable[[str, int, int], None] | None = None,
               plan_size: int | None = None) -> list[model.Result]:
    """:func:`grade_batch`'s grading, without its outputs for the whole batch: the summaries
    in the order they finished. Fills ``loaded`` (path -> id and hash) as it reads them."""
    hide = sorted({str(out.resolve()), *(str(p.resolve().parent) for p in paths)})
    cfg = {"out": str(out), "limits": (limits or Limits()).to_json(), "hide": hide,
           "hidden": hidden, "version": version,
           "visibility": visibility_hidden, "site_url": site_url,
           "plan_path": str(plan_path) if plan_path else None}
    summaries: list[model.Result] = []
    # Whether to plan depends on the whole batch, resumed ones included: a resumed run must
    # write what an uninterrupted one would have; a shard counts its whole class.
    cfg["plan"] = plan_batches and (len(paths) if plan_size is None else plan_size) >= PLAN_MIN
    cfg["hidden_sweep"] = hidden and runner.has_hidden_suites()
    todo = []
    handed_in: set[str] = set()
    for p in paths:  # unchanged submissions first: a re-run of a graded class starts no slot
        got = uploads.load(p, notebooks=False)
        loaded[p] = _Handed(got.id, got.sha256)
        handed_in.update(got.sources)
        done = _resumable(out, got, cfg["version"], site_url)
        if done is None:
            todo.append(p)
            continue
        summaries.append(done)
        if progress:
            progress(done)
    # Only the topics someone handed in get a plan (recording one grades the reference, seconds
    # a topic per slot). A submission's own topics are always among them, so each of its
    # topics is planned or not exactly as if every topic were recorded.
    cfg["plan_topics"] = sorted(handed_in)
    timing.lap("the submission read, the grader's version")
    if todo:
        jobs = max(1, min(jobs, len(todo)))
        sweeps = _Sweeps(cfg, jobs, progress, sweep)
        summaries.extend(sweeps.run_here(todo) if jobs == 1 else sweeps.run_pool(todo))
    return summaries


class _Sweeps:
    """The two sweeps of a batch over its slots: in this process (one slot) or a pool's."""

    def __init__(self, cfg: dict, jobs: int, progress: Callable[[model.Result], None] | None,
                 sweep: Callable[[str, int, int], None] | None) -> None:
        self.cfg, self.jobs, self.progress, self.sweep = cfg, jobs, progress, sweep
        self.written: list[model.Result] = []

    def _started(self, name: str, count: int) -> None:
        self.phase, self.count, self.done = name, count, 0
        if self.sweep:
            self.sweep(name, 0, count)

    def _got(self, r: model.Result | Pending, pending: list[Pending]) -> None:
        self.done += 1
        if self.sweep:
            self.sweep(self.phase, self.done, self.count)
        if isinstance(r, Pending):
            pending.append(r)
            return
        self.written.append(r)
        if self.progress:
            self.progress(r)

    def run_here(self, paths: list[Path]) -> list[model.Result]:
        """Both sweeps in this process, on one slot (and the public tests' slot)."""
        global _local_slots
        _local_slots = True
        pending: list[Pending] = []
        try:
            _init_slot(_ListQueue([0]), self.cfg)
            with phase_lock("public"):
                timing.lap("waiting for the phase lock")
                self._started("public", len(paths))
                for p in paths:
                    self._got(_public_task(str(p)), pending)
                timing.lap("the public tests")
                if _public_slot is not None:
                    _between_sweeps(_NoGate())  # reaped before the lock goes
                    timing.lap("the public workers reaped")
            if pending:
                with phase_lock("hidden"):
                    timing.lap("waiting for the phase lock")
                    if self.cfg["plan"] and not _hidden_planned():
                        _record_hidden_plans(None)
                        timing.lap("the hidden plan recorded")
                    self._started("hidden", len(pending))
                    for item in pending:
                        self._got(_hidden_task(item), [])
                    timing.lap("the hidden tests, the files written")
        finally:
            _local_slots = False
            with stops_ignored():
                _close_slots_now()
            timing.lap("the slots closed")
        return self.written

    def run_pool(self, paths: list[Path]) -> list[model.Result]:
        """Both sweeps in a pool of ``jobs`` slot processes, with a barrier between them."""
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        for i in range(self.jobs):
            q.put(i)
        cfg = dict(self.cfg)
        if cfg["plan"] and cfg["plan_path"] is None:
            cfg["plan_share"] = {ph: [ctx.Queue() for _ in range(self.jobs)]
                                 for ph in runner.PHASES}
        gates = [ctx.Barrier(self.jobs) for _ in range(2)]
        pool = ProcessPoolExecutor(self.jobs, mp_context=ctx, initializer=_init_pool_slot,
                                   initargs=(q, cfg, gates))
        pending: list[Pending] = []
        try:
            with phase_lock("public"):
                self._started("public", len(paths))
                # The slots are spawned here: ignoring both signals meanwhile, they start
                # ignoring them too (no KeyboardInterrupt of theirs before _init_pool_slot).
                with stops_ignored():
                    futures = [pool.submit(_public_task, str(p)) for p in paths]
                for f in as_completed(futures):
                    self._got(f.result(), pending)
                if pending:
                    # Every slot closes its public slot: one call each (the barrier), all
                    # done before the public lock goes.
                    self._each_slot(pool, _pool_between_sweeps, 0)
            if pending:
                with phase_lock("hidden"):
                    if cfg["plan"]:
                        self._each_slot(pool, _pool_record_hidden, 1)
                    self._started("hidden", len(pending))
                    futures = [pool.submit(_hidden_task, item) for item in pending]
                    for f in as_completed(futures):
                        self._got(f.result(), [])
        except (KeyboardInterrupt, BrokenProcessPool):
            with stops_ignored():
                stop_pool(pool)
            raise
        finally:
            pool.shutdown(wait=True)  # at once after stop_pool
        return self.written

    def _each_slot(self, pool: ProcessPoolExecutor, fn: Callable[..., None],
                   *args: Any) -> None:
        """Run ``fn(*args)`` once in every slot process (it waits at a barrier of all slots,
        so no process takes two) and wait for all of them."""
        for f in [pool.submit(fn, *args) for _ in range(self.jobs)]:
            f.result()


class _NoGate:
    """The one-slot stand-in for the barrier between the sweeps."""

    def wait(self, timeout: float | None = None) -> None:
        return None


def _hidden_planned() -> bool:
    return any("hidden" in phases for phases in (_slot_plans or {}).values())


def _pool_between_sweeps(gate: int) -> None:
    """:func:`_between_sweeps` in a pool's slot process, with its barrier number ``gate``."""
    _between_sweeps(_slot_gates[gate])


def _pool_record_hidden(gate: int) -> None:
    """In a pool's slot process, once per slot: the hidden phase's plan, shared between the
    slots (unless a plan file brought it)."""
    _slot_gates[gate].wait(timeout=plan.SHARE_WAIT_SECONDS)
    if not _hidden_planned():
        _record_hidden_plans((_slot_cfg.get("plan_share") or {}).get("hidden"))


class _ListQueue:
    """The one-slot stand-in for a multiprocessing queue (jobs=1 grades in this process)."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def get(self) -> int:
        return self.items.pop(0)
