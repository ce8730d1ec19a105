"""A batch plan kept in a file: recorded once where an image is built, replayed by every run.

Gradescope grades each submission in a fresh container, one at a time, so no run is a batch of
:data:`autograder.grading.batch.PLAN_MIN`: without more, each one grades every call one at a
time, and a student waits for that (docs/design/measured-facts.md, "Gradescope"). ``setup.sh``
therefore records the plan (:func:`autograder.grading.plan.record`: the reference graded once)
while Gradescope builds the image, and :func:`save` keeps it; each ``run_autograder`` then
:func:`load`\\ s it and replays it (:mod:`autograder.grading.replay`), as a batch would.

The file is trusted data: the grader wrote it from its own process, before any submission
existed (the requests its tests made and the replies the reference gave, as bytes; the examples
Hypothesis drew; the reference's own results), so it is a pickle. It is the instructor's:
written 0600 inside the suites folder, which no worker can see (a tmpfs covers it in the
allow-list view, and :func:`autograder.exports.gradescope.run` closes it to other users), and
each Gradescope run starts from the image, so nothing a submission did can reach a later run.
A file made under another grader version (another suite, solution, Python, NumPy, PyTorch or
Hypothesis) is not unpickled at all: :func:`load` reads its header first and gives None.

`course grade` keeps its plan the same way (:func:`kept`): a plan depends on the grader version
alone, never on the class, so a class graded again, another class, or a shard of one replays the
plan the first batch recorded instead of grading the reference again (seconds of two cores
each time). One file, :data:`KEPT`, serves both.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import sys
import time
from pathlib import Path

from autograder import catalogue, paths
from autograder.grading import plan
from autograder.grading import runner
from autograder.grading.phase_lock import phase_lock
from autograder.grading.plan import TopicPlan
from autograder.limits import Limits
from autograder.results.version import grader_version
from autograder.driver.slot import Slot

#: Bumped when what a plan file holds changes shape.
FORMAT = 1
Plans = dict[str, dict[str, TopicPlan]]
#: Where the plan is kept, mode 0600; Gradescope's setup.sh records it there too.
KEPT = paths.PLAN_FILE
#: ``COURSE_KEEP_PLAN=0``: every batch records its own plan and keeps none (what a grader whose
#: suites folder is read-only does anyway); the repository's tests grade that path this way.
KEEP_ENV = "COURSE_KEEP_PLAN"


def record(path: Path, *, hidden: bool = True, limits: Limits | None = None) -> Plans:
    """Grade the reference solution once, as a batch's slot does, and :func:`save` its plan.

    Raises:
        RuntimeError: no topic could be recorded (the reference failed to import, or the
            sandbox would not start): a file with nothing in it would hide that.
    """
    specs = {t: runner.collect(t, hidden=hidden) for t in catalogue.topic_modules()}
    with Slot(0, limits or Limits()) as slot, Slot(0, limits or Limits()) as public:
        plans = plan.record(slot, specs, plan.reference_sources(), public)
    if not plans:
        raise RuntimeError("no topic's plan could be recorded (does the reference import?)")
    save(plans, path, hidden=hidden)
    return plans


def save(plans: Plans, path: Path, *, hidden: bool) -> Path:
    """Write ``plans`` (:func:`~autograder.grading.plan.record`'s) to ``path``, mode 0600,
    atomically (a half-written file is never found). ``hidden``: whether the hidden tests were
    recorded too (a run grading them needs a plan that has them)."""
    header = {"format": FORMAT, "version": grader_version(), "hidden": hidden,
              "topics": {t: sorted(phases) for t, phases in plans.items()}}
    for phases in plans.values():
        for p in phases.values():
            p.verdicts.clear()  # verdicts are a batch's memory, not part of the recording
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(header, f, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.dump(plans, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return path


def load(path: Path, *, hidden: bool) -> Plans | None:
    """The plans in ``path``, or None (with a line on stderr saying why) where there is no file,
    it was made under another grader version, or it lacks the hidden tests ``hidden`` asks for.
    The grader then grades call by call, with the same verdicts, only slower."""
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        try:
            header = pickle.load(f)
        except Exception as exc:  # noqa: BLE001 - a damaged file costs time, never a grade
            print(f"plan file {path}: unreadable ({type(exc).__name__}); grading call by call",
                  file=sys.stderr)
            return None
        why = _stale(header, hidden)
        if why:
            print(f"plan file {path}: {why}; grading call by call (record it again: "
                  "python -m autograder.exports.gradescope prepare)", file=sys.stderr)
            return None
        return pickle.load(f)


def _stale(header: object, hidden: bool) -> str:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return "another format"
    if header.get("version") != grader_version():
        return f"made by grader {header.get('version')}, this is {grader_version()}"
    if hidden and not header.get("hidden"):
        return "recorded without the hidden tests"
    return ""


def kept(path: Path = KEPT, *, hidden: bool = True) -> tuple[Path | None, str]:
    """The plan kept for this grader version at ``path``, recorded first when there is none.

    Returns ``(path, what happened)``, or ``(None, why)`` where no plan can be kept (the folder
    is not writable, the reference would not record): the batch then records its plan itself,
    as it did before plans were kept, with the same grades.

    Recording runs the reference on the hidden tests' inputs in a worker, so it holds the
    host-wide hidden phase lock (:mod:`autograder.grading.phase_lock`): no public-phase
    worker of any grader on this kernel runs meanwhile. Concurrent graders of one checkout
    (shards, parallel test workers) wait on a lock beside the file, so one records and the
    others replay. The plan is recorded with the default limits: a class's own call timeout
    must not decide which of the reference's calls are recorded.
    """
    if os.environ.get(KEEP_ENV) == "0":
        return None, f"none kept ({KEEP_ENV}=0): this batch records its own"
    try:
        fd = os.open(path.with_name(path.name + ".lock"),
                     os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return None, f"cannot keep a plan in {path.parent} ({exc.strerror})"
    with os.fdopen(fd, "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        why = _missing_or_stale(path, hidden)
        if not why:
            return path, f"replaying the plan kept in {path}"
        t0 = time.monotonic()
        try:
            with phase_lock("hidden"):
                record(path, hidden=hidden)
        except Exception as exc:  # noqa: BLE001 - the batch records its own: same grades
            return None, f"no plan kept ({type(exc).__name__}: {exc})"
        return path, (f"plan recorded in {time.monotonic() - t0:.0f} s ({why}) and kept in "
                      f"{path} for later runs of this grader version")


def _missing_or_stale(path: Path, hidden: bool) -> str:
    """Why the file at ``path`` cannot be replayed ("" when it can), from its header alone."""
    if not path.is_file():
        return "none was kept"
    with open(path, "rb") as f, contextlib.suppress(Exception):
        return _stale(pickle.load(f), hidden)
    return "the kept file is unreadable"
