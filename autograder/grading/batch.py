"""`course grade`: a batch of submissions, N worker slots, resumable, outputs per submission.

Each slot is one trusted grading process (spawned, so no torch state is shared) that owns a
sandbox :class:`~autograder.sandbox.session.Slot`; submissions stream through the slots and each one's
results are written as soon as it is done. A re-run skips submissions whose results already
carry the same submission hash and grader version, so a killed batch resumes where it stopped.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from autograder import catalogue
from autograder.results import model
from autograder.results.version import grader_version
from autograder.results import writers as outputs
from autograder.grading import plan
from autograder.results import report
from autograder.grading import loop
from autograder.grading import run as runner
from autograder.grading import submission, uploads
from autograder.limits import Limits
from autograder.sandbox.slot import Slot


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


def _resumable(out: Path, loaded: submission.Loaded, version: str) -> model.Result | None:
    done = model.load(out, loaded.id)
    if done is None or done.sha256 != loaded.sha256 or done.grader_version != version:
        return None
    done.resumed = True
    return done


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
    _slot_specs = _specs(cfg["hidden"])
    _public_slot = None
    if any(s.visibility == "hidden" for specs in _slot_specs.values() for s in specs):
        # A second zygote for the public tests (see grade_loaded); both start side by side.
        _public_slot = Slot(index, Limits(**cfg["limits"]), hide=cfg["hide"])
        atexit.register(_public_slot.close)
        starting = threading.Thread(target=_public_slot.start)
        starting.start()
        _slot.start()
        starting.join()
    _slot_plans = None
    if cfg["plan"]:
        sources = {t: src for t, src in plan.reference_sources().items()
                   if t in cfg["plan_topics"]}
        _slot_plans = (plan.record(_slot, _slot_specs, sources, _public_slot)
                       if sources else None)


def _grade_path(path: str) -> model.Result:
    out = Path(_slot_cfg["out"])
    loaded = uploads.load(Path(path))
    done = _resumable(out, loaded, _slot_cfg["version"])
    if done is not None:
        return done
    g = grade_loaded(_slot, loaded, _slot_specs, _slot_plans, _public_slot)
    return outputs.write_submission(out, g, _slot_cfg["visibility"])


def grade_batch(paths: list[Path], out: Path, *, jobs: int = 1, limits: Limits | None = None,
                hidden: bool = True, visibility_hidden: str = "after_published",
                progress: Callable[[model.Result], None] | None = None,
                plan_batches: bool = True) -> list[model.Result]:
    """Grade every submission into ``out``; returns summaries sorted by id.

    The instructor's own folders (the class, the output) are hidden from workers too. With
    ``PLAN_MIN`` submissions or more, each slot first records the plan of :mod:`autograder.grading.replay`
    (``plan_batches=False`` grades every call one at a time, as `course check` does).
    """
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("results", "feedback"):  # there even for an empty class, as the CLI says
        (out / sub).mkdir(exist_ok=True)
    outputs.remove_stale_temps(out)  # a batch killed mid-write left them; they are no result
    hide = sorted({str(out.resolve()), *(str(p.resolve().parent) for p in paths)})
    cfg = {"out": str(out), "limits": (limits or Limits()).to_json(), "hide": hide,
           "hidden": hidden, "version": grader_version(),
           "visibility": visibility_hidden}
    summaries: list[model.Result] = []
    # Whether to plan depends on the whole batch, resumed ones included: a resumed run must
    # write what an uninterrupted one would have.
    cfg["plan"] = plan_batches and len(paths) >= PLAN_MIN
    todo = []
    handed_in: set[str] = set()
    for p in paths:  # unchanged submissions first: a re-run of a graded class starts no slot
        loaded = uploads.load(p)
        handed_in.update(loaded.sources)
        done = _resumable(out, loaded, cfg["version"])
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
        _init_slot(q, cfg)
        try:
            for p in paths:
                s = _grade_path(str(p))
                summaries.append(s)
                if progress:
                    progress(s)
        finally:
            _slot.close()
            if _public_slot is not None:
                _public_slot.close()
    else:
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        for i in range(jobs):
            q.put(i)
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_slot,
                                 initargs=(q, cfg)) as pool:
            futures = [pool.submit(_grade_path, str(p)) for p in paths]
            for f in as_completed(futures):
                s = f.result()
                summaries.append(s)
                if progress:
                    progress(s)
    outputs.write_grades_csv(out, [s.id for s in summaries])
    report.write_report(out, [s.id for s in summaries])
    return sorted(summaries, key=lambda s: s.id)


class _ListQueue:
    """The one-slot stand-in for a multiprocessing queue (jobs=1 grades in this process)."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def get(self) -> int:
        return self.items.pop(0)
