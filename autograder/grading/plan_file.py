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
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from autograder import catalogue
from autograder.grading import plan
from autograder.grading import runner
from autograder.grading.plan import TopicPlan
from autograder.limits import Limits
from autograder.results.version import grader_version
from autograder.driver.slot import Slot

#: Bumped when what a plan file holds changes shape.
FORMAT = 1
Plans = dict[str, dict[str, TopicPlan]]


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
            print(f"plan file {path}: {why}; grading call by call", file=sys.stderr)
            return None
        return pickle.load(f)


def _stale(header: object, hidden: bool) -> str:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return "another format"
    if header.get("version") != grader_version():
        return (f"made by grader {header.get('version')}, this is {grader_version()} "
                "(record it again: python -m autograder.exports.gradescope prepare)")
    if hidden and not header.get("hidden"):
        return "recorded without the hidden tests"
    return ""
