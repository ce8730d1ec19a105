"""`course grade`: a batch of submissions, N worker slots, resumable, outputs per submission.

Each slot is one trusted grading process (spawned, so no torch state is shared), a
:class:`~autograder.grading.slot_process.SlotProcess` that owns a sandbox
:class:`~autograder.driver.slot.Slot`; submissions stream through the slots and each one's
results are written as soon as it is done. A re-run skips submissions whose results already
carry the same submission hash and grader version, so a killed batch resumes where it stopped.

Ctrl-C (SIGINT to the foreground process group) or SIGTERM stops a batch quietly: the slots
ignore SIGINT and leave when the grader sends them SIGTERM (closing their zygotes and temp
folders, never in the middle of writing a submission's files), and :func:`grade_batch` raises
:class:`Interrupted` with how many submissions are saved; grades.csv and report.html are not
written for a half batch.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, NamedTuple

from autograder.driver.slot import Slot
from autograder.grading import loop, runner, slot_process, submission, timing, uploads
from autograder.grading.phase_lock import phase_lock
from autograder.grading.slot_process import Pending, SlotConfig, SlotProcess, result_of
from autograder.grading.stopping import (SLOT_CLOSE_SECONDS, STOP_SIGNALS, Interrupted,  # noqa: F401
                                         stop_pool, stop_signals, stops_ignored)
from autograder.limits import Limits
from autograder.results import model, report
from autograder.results import writers as outputs
from autograder.results.version import grader_version

#: A batch of at least this many submissions is graded with a plan (each slot first grades
#: the reference, a few seconds; each submission then goes several times faster). It depends
#: on the batch alone, not on --jobs: a plan runs more of a submission's calls (what it prints
#: differs), and the same submissions must give the same results however many slots run.
PLAN_MIN = 3


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
    return result_of(loaded, o, time.monotonic() - t0)


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


class _GraderStop:
    """The grader's SIGINT/SIGTERM handler for one batch: KeyboardInterrupt, after the files
    being written; :attr:`signum` is the signal that came (None: none yet)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum: int, frame: object) -> None:
        self.signum = signum
        local = slot_process.current()  # jobs=1: this process is the slot, maybe writing
        if local is None:
            raise KeyboardInterrupt
        local.when_written(_interrupt_here)


def _interrupt_here() -> None:
    """Stop a grader that grades in its own process (jobs=1): KeyboardInterrupt, once its own
    slots are closed.

    Their zygotes kill the workers first, so that no clean-up on the way out meets a worker
    still starting in a removed folder (which would print a traceback)."""
    local = slot_process.current()
    if local is not None:
        local.close_now()
    raise KeyboardInterrupt


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
    stop = _GraderStop()
    version = grader_version()
    loaded: dict[Path, _Handed] = {}  # for Interrupted's count
    try:
        with stop_signals(stop):
            summaries = _grade_all(paths, out, jobs, limits, hidden, visibility_hidden,
                                   progress, plan_batches, version, loaded, site_url,
                                   plan_path, sweep, plan_size)
    except BaseException as exc:
        # After a stop signal, whatever broke on the way out (a slot it reached first breaks
        # the pool; a closed slot refuses to restart) is the stop's doing.
        if not isinstance(exc, KeyboardInterrupt) and stop.signum is None:
            raise
        with stops_ignored():
            saved = _saved(out, paths, loaded, version, site_url)
        raise Interrupted(saved, len(paths), stop.signum or signal.SIGINT) from None
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
    summaries: list[model.Result] = []
    todo = []
    handed_in: set[str] = set()
    for p in paths:  # unchanged submissions first: a re-run of a graded class starts no slot
        got = uploads.load(p, notebooks=False)
        loaded[p] = _Handed(got.id, got.sha256)
        handed_in.update(got.sources)
        done = _resumable(out, got, version, site_url)
        if done is None:
            todo.append(p)
            continue
        summaries.append(done)
        if progress:
            progress(done)
    # Only the topics someone handed in get a plan (recording one grades the reference, seconds
    # a topic per slot). A submission's own topics are always among them, so each of its
    # topics is planned or not exactly as if every topic were recorded.
    cfg = SlotConfig(
        out=out, limits=limits or Limits(),
        hide=tuple(sorted({str(out.resolve()), *(str(p.resolve().parent) for p in paths)})),
        hidden=hidden, hidden_sweep=hidden and runner.has_hidden_suites(),
        visibility=visibility_hidden, site_url=site_url,
        # Whether to plan depends on the whole batch, resumed ones included: a resumed run
        # must write what an uninterrupted one would have; a shard counts its whole class.
        plan=plan_batches and (len(paths) if plan_size is None else plan_size) >= PLAN_MIN,
        plan_topics=tuple(sorted(handed_in)), plan_path=plan_path)
    timing.lap("the submission read, the grader's version")
    if todo:
        jobs = max(1, min(jobs, len(todo)))
        sweeps = _Sweeps(cfg, jobs, progress, sweep)
        summaries.extend(sweeps.run_here(todo) if jobs == 1 else sweeps.run_pool(todo))
    return summaries


class _Sweeps:
    """The two sweeps of a batch over its slots: in this process (one slot) or a pool's."""

    def __init__(self, cfg: SlotConfig, jobs: int, progress: Callable[[model.Result], None] | None,
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
        pending: list[Pending] = []
        proc = SlotProcess(self.cfg, 0)
        slot_process.become(proc)  # before it starts: a stop meanwhile closes its zygotes
        try:
            proc.start()
            with phase_lock("public"):
                timing.lap("waiting for the phase lock")
                self._started("public", len(paths))
                for p in paths:
                    self._got(proc.public_task(str(p)), pending)
                timing.lap("the public tests")
                if proc.public_slot is not None:
                    proc.between_sweeps(None)  # reaped before the lock goes
                    timing.lap("the public workers reaped")
            if pending:
                with phase_lock("hidden"):
                    timing.lap("waiting for the phase lock")
                    if self.cfg.plan and not proc.hidden_planned():
                        proc.record_hidden_plans(None)
                        timing.lap("the hidden plan recorded")
                    self._started("hidden", len(pending))
                    for item in pending:
                        self._got(proc.hidden_task(item), [])
                    timing.lap("the hidden tests, the files written")
        finally:
            with stops_ignored():
                slot_process.become(None)
                proc.close_now()
            timing.lap("the slots closed")
        return self.written

    def run_pool(self, paths: list[Path]) -> list[model.Result]:
        """Both sweeps in a pool of ``jobs`` slot processes, with a barrier between them."""
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        for i in range(self.jobs):
            q.put(i)
        cfg = self.cfg
        if cfg.plan and cfg.plan_path is None:
            cfg = dataclasses.replace(cfg, plan_share={
                ph: [ctx.Queue() for _ in range(self.jobs)] for ph in runner.PHASES})
        gates = [ctx.Barrier(self.jobs) for _ in range(2)]
        pool = ProcessPoolExecutor(self.jobs, mp_context=ctx, initializer=slot_process.init_pool,
                                   initargs=(q, cfg, gates))
        pending: list[Pending] = []
        try:
            with phase_lock("public"):
                self._started("public", len(paths))
                # The slots are spawned here: ignoring both signals meanwhile, they start
                # ignoring them too (no KeyboardInterrupt of theirs before init_pool).
                with stops_ignored():
                    futures = [pool.submit(slot_process.public_task, str(p)) for p in paths]
                for f in as_completed(futures):
                    self._got(f.result(), pending)
                if pending:
                    # Every slot closes its public slot: one call each (the barrier), all
                    # done before the public lock goes.
                    self._each_slot(pool, slot_process.pool_between_sweeps, 0)
            if pending:
                with phase_lock("hidden"):
                    if cfg.plan:
                        self._each_slot(pool, slot_process.pool_record_hidden, 1)
                    self._started("hidden", len(pending))
                    futures = [pool.submit(slot_process.hidden_task, item) for item in pending]
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
