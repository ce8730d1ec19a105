"""The grading loop: open a session on a slot, run each topic's tests, close. Written once.

Every caller that grades goes through :func:`grade`: `course check`, `list` and `watch`
(public tests only), `course grade` (both phases, with the batch plan), the release build
(public tests against recorded references), and the repository's own tests. The suites'
conftest, where pytest drives each test itself, opens its session with :func:`open_session`.

The order is fixed here (docs/design/grading-contract.md, phases): every topic's public tests run
before any hidden test, and the hidden phase runs in fresh workers, so that what a public test
shows the student never comes from a worker that has seen a hidden input.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Callable, ContextManager, Iterator

from autograder.grading import run as runner
from autograder.grading.replay import planned_runner
from autograder.sandbox.session import Session
from autograder.sandbox.slot import Slot


@dataclass
class Outcome:
    """What grading one submission produced (trusted data only).

    ``results`` maps each topic to its results in the order of its specs; ``notes`` says why a
    topic could not run (missing, did not import, timed out); ``output``/``hidden_output`` is
    what the workers printed in each phase; the seconds are the student code's own time.
    """

    results: dict[str, list[runner.TestResult]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    output: str = ""
    hidden_output: str = ""
    student_seconds: float = 0.0
    busy_seconds: float = 0.0

    def flat(self) -> list[runner.TestResult]:
        """All results, topic by topic in the order graded."""
        return [r for rs in self.results.values() for r in rs]


@contextlib.contextmanager
def open_session(slot: Slot, sources: dict[str, bytes], *,
                 wait: bool = True) -> Iterator[Session | None]:
    """A :class:`Session` over ``sources`` on ``slot``, closed on the way out (None when there
    is nothing to load: every test then fails as "not found" without starting a worker)."""
    session = Session(slot, sources) if sources else None
    try:
        yield session
    finally:
        if session is not None:
            session.close(wait=wait)


def grade(slot: Slot, sources: dict[str, bytes], specs: dict[str, list[runner.TestSpec]], *,
          problems: dict[str, str] | None = None, error: str | None = None,
          plans: dict | None = None, public_slot: Slot | None = None,
          references: dict[str, ModuleType] | None = None,
          status: Callable[[str], ContextManager] | None = None) -> Outcome:
    """Grade one submission's ``sources`` (topic -> file bytes) on the tests in ``specs``.

    Args:
        problems: topic -> why its file is unusable (every test of it fails with that).
        error: the submission as a whole could not be read: every test fails with it.
        plans: the batch plan per topic (:func:`autograder.grading.plan.record`); without,
            tests run call by call.
        public_slot: in a batch, the public tests run in this slot's workers and the hidden ones
            in fresh workers of ``slot``; without, the hidden phase still gets fresh workers.
        references: topic -> the ``ref`` the tests get (default: the reference solution).
        status: a context manager shown while a topic runs (``course check``'s spinner).

    Never raises for anything the submission does; one hard deadline bounds its work
    (``Limits.submission_seconds``).
    """
    problems = problems or {}
    out = Outcome()
    done: dict[str, list] = {t: [None] * len(s) for t, s in specs.items()}
    unloadable: dict[str, str] = {}
    session = Session(public_slot or slot, sources) if sources else None
    try:
        for phase in runner.PHASES:
            if phase == "hidden" and session is not None and any(
                    s.visibility == phase for ss in specs.values() for s in ss):
                # Fresh workers: what they print is kept apart from the public phase's.
                session.switch(slot, phase)
            for topic, topic_specs in specs.items():
                idx = [i for i, s in enumerate(topic_specs) if s.visibility == phase]
                if not idx:
                    continue
                missing = unloadable.get(topic, problems.get(topic))
                if error:
                    missing = f"nothing could be graded: {error}"
                with status(topic) if status else contextlib.nullcontext():
                    results, why = runner.run_topic(
                        session, topic, [topic_specs[i] for i in idx], missing,
                        planned_runner((plans or {}).get(topic)),
                        ref=(references or {}).get(topic))
                for i, r in zip(idx, results):
                    done[topic][i] = r
                if why:
                    out.notes[topic] = why
                    if why != "timed out":  # it did not import: not tried again
                        unloadable[topic] = why
    finally:
        if session is not None:
            # With two slots the next submission starts on the other one: this slot's zygote
            # can finish off the worker meanwhile (it does so before its next fork).
            session.close(wait=public_slot is None)
            # Only the public phase's output may reach the student (results' ``output``);
            # the hidden phase's is for the instructors.
            out.output, out.hidden_output = session.output("public"), session.output("hidden")
            out.student_seconds = session.student_seconds
            out.busy_seconds = session.busy_seconds
    # An exercise's error rules count once it computes something right (red team).
    out.results = {t: runner.gate_error_rules(rs) for t, rs in done.items()}
    return out
