"""`course grade`: a batch of submissions, N worker slots, resumable, outputs per submission.

Each slot is one trusted grading process (spawned, so no torch state is shared) that owns a
sandbox :class:`~autograder.sandbox.session.Slot`; submissions stream through the slots and each one's
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
from typing import Callable, NamedTuple

from autograder import catalogue
from autograder.results import model
from autograder.results.version import grader_version
from autograder.results import writers as outputs
from autograder.grading import plan, plan_file
from autograder.results import report
from autograder.grading import loop
from autograder.grading import run as runner
from autograder.grading import submission, uploads
from autograder.limits import Limits
from autograder.sandbox.slot import Slot
from autograder.grading.stopping import (SLOT_CLOSE_SECONDS, STOP_SIGNALS, Interrupted,  # noqa: F401
                                         stop_pool, stop_signals, stops_ignored)


def _specs(hidden: bool) -> dict[str, list[runner.TestSpec]]:
    return {m: runner.collect(m, hidden=hidden) for m in catalogue.topic_modules()}


def grade_loaded(slot: Slot, loaded: submission.Loaded,
                 specs: dict[str, list[runner.TestSpec]],
                 plans: dict | None = None, public_slot: Slot | None = None) -> model.Graded:
    """Grade one submission read into memory. Never raises for anything the submission does.

    With ``public_slot``, the public tests run in its workers and the hidden ones in fresh
    workers of ``slot`` (:meth:`Session.switch`), as :func:`plan.record` recorded them; without,
    the hidden ones run in fresh workers of ``slot`` all the same. One hard deadline, from now,
    bounds all of the submission's work (``Limits.submission_seconds``).
    """
    t0 = time.monotonic()
    g = model.Graded(id=loaded.id, sha256=loaded.sha256, status="ok", error=loaded.error,
                     missing=set(loaded.missing),
                     unreadable=set(loaded.problems) - set(loaded.missing))
    o = loop.grade(slot, loaded.sources, specs, problems=loaded.problems, error=loaded.error,
                   plans=plans, public_slot=public_slot)
    g.results = o.flat()
    g.topic_notes = o.notes
    g.output, g.hidden_output = o.output, o.hidden_output
    g.student_seconds, g.busy_seconds = o.student_seconds, o.busy_seconds
    if loaded.error:
        g.status = "error"
    elif g.topic_notes:
        g.status = "partial"
    g.seconds = time.monotonic() - t0
    return g


def _resumable(out: Path, loaded: submission.Loaded, version: str,
               site_url: str | None = None) -> model.Result | None:
    done = model.load(out, loaded.id)
    if done is None or done.sha256 != loaded.sha256 or done.grader_version != version:
        return None
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


def _write(out: Path, g: model.Graded, visibility: str, site_url: str | None) -> model.Result:
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
_public_slot: Slot | None = None  # the public tests' (see grade_loaded)
_slot_specs: dict[str, list[runner.TestSpec]] | None = None
_slot_plans: dict[str, dict[str, plan.TopicPlan]] | None = None
_slot_cfg: dict = {}

#: A batch of at least this many submissions is graded with a plan (each slot first grades
#: the reference, a few seconds; each submission then goes several times faster). It depends
#: on the batch alone, not on --jobs: a plan runs more of a submission's calls (what it prints
#: differs), and the same submissions must give the same results however many slots run.
PLAN_MIN = 3


def _init_slot(queue: mp.Queue, cfg: dict) -> None:
    global _slot, _public_slot, _slot_specs, _slot_cfg, _slot_plans
    import atexit
    import threading

    _slot_cfg = cfg
    index = queue.get()
    _slot = Slot(index, Limits(**cfg["limits"]), hide=cfg["hide"])
    atexit.register(_slot.close)
    _public_slot = None
    if cfg["hidden"] and runner.has_hidden_suites():
        # A second zygote for the public tests (see grade_loaded).
        _public_slot = Slot(index, Limits(**cfg["limits"]), hide=cfg["hide"])
        atexit.register(_public_slot.close)
    # The zygotes start while this process imports the suites (seconds each: torch); one that
    # fails to start here starts, or says why, at its first request.
    starting = [threading.Thread(target=_start_quietly, args=(s,), daemon=True)
                for s in (_slot, _public_slot) if s is not None]
    for t in starting:
        t.start()
    _slot_specs = _specs(cfg["hidden"])
    for t in starting:
        t.join()
    _slot_plans = None
    if cfg.get("plan_path"):
        _slot_plans = plan_file.load(Path(cfg["plan_path"]), hidden=cfg["hidden"])
        if _slot_plans is not None:
            plan.preload(_public_slot or _slot, _slot_plans)
            return
    if cfg["plan"]:
        sources = {t: src for t, src in plan.reference_sources().items()
                   if t in cfg["plan_topics"]}
        # Several slots record a part each and swap them (plan.record_shared).
        _slot_plans = (plan.record_shared(_slot, _slot_specs, sources, _public_slot, index,
                                          cfg.get("plan_share")) if sources else None)


def _start_quietly(slot: Slot) -> None:
    """Start ``slot``'s zygote and have it warm up (:meth:`Slot.warm_up`) while this process
    imports the suites: a batch's slot would warm up at its plan or second fork anyway, and a
    run of one submission (Gradescope's) has nothing else to do meanwhile."""
    with contextlib.suppress(Exception):  # raised again, with its reason, at the first request
        slot.start()
        slot.warm_up()


def _init_pool_slot(queue: mp.Queue, cfg: dict) -> None:
    """The pool's initializer: a slot process ignores SIGINT (the grader, which gets Ctrl-C
    too, decides) and leaves quietly on SIGTERM (:func:`_slot_stop`); then :func:`_init_slot`.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _slot_stop)
    _init_slot(queue, cfg)


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


def _grade_path(path: str) -> model.Result:
    out = Path(_slot_cfg["out"])
    loaded = uploads.load(Path(path))
    done = _resumable(out, loaded, _slot_cfg["version"], _slot_cfg["site_url"])
    if done is not None:
        return done
    g = grade_loaded(_slot, loaded, _slot_specs, _slot_plans, _public_slot)
    return _write(out, g, _slot_cfg["visibility"], _slot_cfg["site_url"])


def grade_batch(paths: list[Path], out: Path, *, jobs: int = 1, limits: Limits | None = None,
                hidden: bool = True, visibility_hidden: str = "after_published",
                progress: Callable[[model.Result], None] | None = None,
                plan_batches: bool = True, site_url: str | None = None,
                plan_path: Path | None = None,
                class_files: bool = True) -> list[model.Result]:
    """Grade every submission into ``out``; returns summaries sorted by id.

    Feedback links each failed test's lesson on ``site_url`` (the published lesson site), or
    names its file in the repository when None (:func:`autograder.catalogue.lesson_link`).

    The instructor's own folders (the class, the output) are hidden from workers too. With
    ``PLAN_MIN`` submissions or more, each slot first records the plan of :mod:`autograder.grading.replay`
    (``plan_batches=False`` grades every call one at a time, as `course check` does).
    ``plan_path``: a plan recorded earlier (:mod:`autograder.grading.plan_file`), replayed
    whatever the batch's size where it is current (Gradescope's runs, one submission each).
    ``class_files=False`` leaves out grades.csv and report.html (a class of one needs neither).
    """
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("results", "feedback"):  # there even for an empty class, as the CLI says
        (out / sub).mkdir(exist_ok=True)
    outputs.remove_stale_temps(out)  # a batch killed mid-write left them; they are no result
    global _signalled
    _signalled = None
    version = grader_version()
    loaded: dict[Path, _Handed] = {}  # for Interrupted's count
    try:
        with stop_signals(_grader_stop):
            summaries = _grade_all(paths, out, jobs, limits, hidden, visibility_hidden,
                                   progress, plan_batches, version, loaded, site_url,
                                   plan_path)
    except BaseException as exc:
        # After a stop signal, whatever broke on the way out (a slot it reached first breaks
        # the pool; a closed slot refuses to restart) is the stop's doing.
        if not isinstance(exc, KeyboardInterrupt) and _signalled is None:
            raise
        with stops_ignored():
            saved = _saved(out, paths, loaded, version, site_url)
        raise Interrupted(saved, len(paths), _signalled or signal.SIGINT) from None
    # Only once every submission is graded: a stopped batch writes no partial table.
    if class_files:
        outputs.write_grades_csv(out, [s.id for s in summaries])
        report.write_report(out, [s.id for s in summaries])
    return sorted(summaries, key=lambda s: s.id)


def _grade_all(paths: list[Path], out: Path, jobs: int, limits: Limits | None, hidden: bool,
               visibility_hidden: str, progress: Callable[[model.Result], None] | None,
               plan_batches: bool, version: str, loaded: dict[Path, _Handed],
               site_url: str | None, plan_path: Path | None = None) -> list[model.Result]:
    """:func:`grade_batch`'s grading, without its outputs for the whole batch: the summaries
    in the order they finished. Fills ``loaded`` (path -> id and hash) as it reads them."""
    global _local_slots
    hide = sorted({str(out.resolve()), *(str(p.resolve().parent) for p in paths)})
    cfg = {"out": str(out), "limits": (limits or Limits()).to_json(), "hide": hide,
           "hidden": hidden, "version": version,
           "visibility": visibility_hidden, "site_url": site_url,
           "plan_path": str(plan_path) if plan_path else None}
    summaries: list[model.Result] = []
    # Whether to plan depends on the whole batch, resumed ones included: a resumed run must
    # write what an uninterrupted one would have.
    cfg["plan"] = plan_batches and len(paths) >= PLAN_MIN
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
    paths = todo
    jobs = max(1, min(jobs, len(paths) or 1))
    if not paths:
        pass
    elif jobs == 1:
        q: mp.Queue = _ListQueue([0])
        _local_slots = True
        try:
            _init_slot(q, cfg)
            for p in paths:
                s = _grade_path(str(p))
                summaries.append(s)
                if progress:
                    progress(s)
        finally:
            _local_slots = False
            with stops_ignored():
                if _slot is not None:
                    _slot.close()
                if _public_slot is not None:
                    _public_slot.close()
    else:
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        for i in range(jobs):
            q.put(i)
        if cfg["plan"] and plan_path is None:
            cfg["plan_share"] = [ctx.Queue() for _ in range(jobs)]
        pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_pool_slot,
                                   initargs=(q, cfg))
        try:
            # The slots are spawned here: ignoring both signals meanwhile, they start ignoring
            # them too (no KeyboardInterrupt of theirs before _init_pool_slot runs).
            with stops_ignored():
                futures = [pool.submit(_grade_path, str(p)) for p in paths]
            for f in as_completed(futures):
                s = f.result()
                summaries.append(s)
                if progress:
                    progress(s)
        except (KeyboardInterrupt, BrokenProcessPool):
            with stops_ignored():
                stop_pool(pool)
            raise
        finally:
            pool.shutdown(wait=True)  # at once after stop_pool
    return summaries


class _ListQueue:
    """The one-slot stand-in for a multiprocessing queue (jobs=1 grades in this process)."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def get(self) -> int:
        return self.items.pop(0)
