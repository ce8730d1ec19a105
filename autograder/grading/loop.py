"""The grading loop: open a session on a slot, run each topic's tests, close. Written once.

Every caller that grades goes through :func:`grade`: `course check`, `list` and `watch`
(public tests only), `course grade` (both phases, with the batch plan), the release build
(public tests against recorded references), and the repository's own tests. The suites'
conftest, where pytest drives each test itself, opens its session with :func:`open_session`.

The order is fixed here (docs/design/grading-contract.md, phases): every topic's public tests run
before any hidden test, and the hidden phase runs in fresh workers, so that what a public test
shows the student never comes from a worker that has seen a hidden input. A phase is a unit of
its own (:func:`run_phase`, reaping its workers as it ends): a batch runs every submission's
public phase, then every submission's hidden phase (:mod:`autograder.grading.batch`), so no
hidden-phase worker ever runs beside a public-phase one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass, field
from types import ModuleType
from typing import Callable, ContextManager, Iterator

from autograder.grading import runner
from autograder.results import failures
from autograder.results.model import Result, TestOutcome, capped_message
from autograder.grading.phase_lock import phase_lock
from autograder.grading.replay import planned_runner
from autograder.driver.session import Session
from autograder.driver.slot import Slot


@dataclass
class Outcome:
    """What grading one submission produced (trusted data only).

    ``results`` maps each topic to its results in the order of its specs; ``notes`` says why a
    topic could not run (missing, did not import, timed out) and ``kinds`` which of
    :data:`autograder.results.model.TOPIC_KINDS` that is, decided as it happened
    (:func:`run_phase`); ``output``/``hidden_output`` is what the workers printed in each phase;
    the seconds are the student code's own time.
    """

    results: dict[str, list[runner.TestResult]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    output: str = ""
    hidden_output: str = ""
    student_seconds: float = 0.0
    busy_seconds: float = 0.0

    def flat(self) -> list[runner.TestResult]:
        """All results, topic by topic in the order graded."""
        return [r for rs in self.results.values() for r in rs]

    def tests(self) -> list[TestOutcome]:
        """All results as the records every output is written from (:func:`record`), in
        :meth:`flat`'s order."""
        return [record(r) for r in self.flat()]


def record(r: runner.TestResult) -> TestOutcome:
    """``r`` as the one record every output is written from
    (:class:`autograder.results.model.TestOutcome`): its kind (:attr:`runner.TestResult.kind`),
    its points and score, its message (capped), and for a failed test the hint a student is
    shown with it (:func:`autograder.results.failures.hint_for`), all decided here from what
    the test's run knew, never re-derived from the written text."""
    s = r.spec
    kind = r.kind
    return TestOutcome(
        name=s.name, topic=s.topic, exercise=s.exercise, visibility=s.visibility,
        points=s.points, score=r.score, kind=kind,
        message="" if r.passed else capped_message(r.message),
        hint=None if kind in ("passed", "skipped") else failures.hint_for(
            s.topic, s.exercise, s.hint, r.message))


def with_hints(r: Result) -> Result:
    """``r`` (read back from a results file, which does not carry hints) with each failed
    test's hint recorded again, as :func:`record` decides it: the test's own hint, looked up by
    its name in its topic's suites as this grader has them, else the hint of its failure's kind
    or its exercise's first (:func:`autograder.results.failures.hint_for`). A topic whose suites
    do not collect here keeps the exercise's hints."""
    return dataclasses.replace(r, tests=[
        t if t.kind in ("passed", "skipped") else dataclasses.replace(
            t, hint=failures.hint_for(t.topic, t.exercise, _own_hints(t.topic).get(t.name, ""),
                                      t.message))
        for t in r.tests])


@functools.cache
def _own_hints(topic: str) -> dict[str, str]:
    """Test name -> its own hint, for ``topic``'s suites as this grader has them."""
    try:
        return {s.name: s.hint for s in runner.collect(topic) if s.hint}
    except (ImportError, KeyError, ValueError):  # no suites here: the exercise's hints serve
        return {}


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


@dataclass
class Grading:
    """One submission's grading between its phases: what is done, and its suspended session.

    Made by :func:`begin`, advanced one phase at a time by :func:`run_phase`, ended by
    :func:`finish`. Between phases it pickles (a batch's hidden sweep may run in another
    process than its public sweep): results travel without their specs, which each process
    collects alike, and are bound to them again by name (:meth:`bind`).
    """

    sources: dict[str, bytes]
    problems: dict[str, str]
    error: str | None
    done: dict[str, list] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    #: topic -> the kind of its note (:data:`autograder.results.model.TOPIC_KINDS`)
    kinds: dict[str, str] = field(default_factory=dict)
    #: the topics of ``problems`` with no file at all (the rest are unreadable files)
    missing: frozenset[str] = frozenset()
    unloadable: dict[str, str] = field(default_factory=dict)
    session: Session | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if state.pop("_unbound", False):  # travelling on (the grader passes it between slots)
            return state
        state["done"] = {t: [None if r is None else (r.spec.name, dataclasses.replace(r, spec=None))
                             for r in rs] for t, rs in self.done.items()}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._unbound = True

    def bind(self, specs: dict[str, list[runner.TestSpec]]) -> None:
        """Give results that travelled their specs again (this process's, by test name)."""
        if not self.__dict__.pop("_unbound", False):
            return
        by_name = {s.name: s for ss in specs.values() for s in ss}
        self.done = {t: [None if r is None else dataclasses.replace(r[1], spec=by_name[r[0]])
                         for r in rs] for t, rs in self.done.items()}


def begin(sources: dict[str, bytes], specs: dict[str, list[runner.TestSpec]], *,
          problems: dict[str, str] | None = None, error: str | None = None,
          missing: set[str] | frozenset[str] = frozenset()) -> Grading:
    """A submission's grading, before its first phase (no worker yet). ``missing``: the topics
    of ``problems`` that have no file at all (:attr:`autograder.grading.submission.Loaded.missing`),
    so that their tests are recorded as ``missing``, the others' as ``unreadable``."""
    return Grading(sources, problems or {}, error,
                   done={t: [None] * len(s) for t, s in specs.items()},
                   missing=frozenset(missing))


def _not_run_kind(g: Grading, topic: str) -> str:
    """Why ``topic``'s tests would not run, from the loader's facts: ``not_graded`` (nothing
    could be read), ``missing``, ``unreadable``, else ``import_error`` (its file did not load)."""
    if g.error:
        return "not_graded"
    if topic in g.problems:
        return "missing" if topic in g.missing else "unreadable"
    return "import_error"


def has_phase(specs: dict[str, list[runner.TestSpec]], phase: str) -> bool:
    """Whether any test of ``specs`` belongs to ``phase``."""
    return any(s.visibility == phase for ss in specs.values() for s in ss)


def run_phase(g: Grading, slot: Slot, specs: dict[str, list[runner.TestSpec]], phase: str, *,
              plans: dict | None = None, references: dict[str, ModuleType] | None = None,
              status: Callable[[str], ContextManager] | None = None,
              reap: bool = True) -> None:
    """Run ``phase``'s tests of every topic in fresh workers of ``slot``, then suspend the
    session: when this returns, every worker of the phase is reaped (without ``reap``, the
    slot's zygote reaps them before its next fork: a batch, whose barrier between the sweeps
    closes the zygote, :mod:`autograder.grading.batch`). Never raises for anything the
    submission does."""
    g.bind(specs)
    if g.sources and g.session is None:
        g.session = Session(slot, g.sources)
        g.session.phase = phase
    elif g.session is not None:
        g.session.resume(slot, phase)
    try:
        for topic, topic_specs in specs.items():
            idx = [i for i, s in enumerate(topic_specs) if s.visibility == phase]
            if not idx:
                continue
            missing = g.unloadable.get(topic, g.problems.get(topic))
            if g.error:
                missing = f"nothing could be graded: {g.error}"
            with status(topic) if status else contextlib.nullcontext():
                results, why = runner.run_topic(
                    g.session, topic, [topic_specs[i] for i in idx], missing,
                    planned_runner((plans or {}).get(topic)),
                    ref=(references or {}).get(topic), missing_kind=_not_run_kind(g, topic))
            for i, r in zip(idx, results):
                g.done[topic][i] = r
            if why:
                g.notes[topic] = why
                timed_out = why == runner.TIMED_OUT and missing is None
                g.kinds[topic] = "timeout" if timed_out else _not_run_kind(g, topic)
                if not timed_out:  # it did not import: not tried again
                    g.unloadable[topic] = why
    finally:
        if g.session is not None:
            g.session.suspend(wait=reap)


def finish(g: Grading, specs: dict[str, list[runner.TestSpec]]) -> Outcome:
    """The submission's :class:`Outcome`, once its phases have run."""
    g.bind(specs)
    out = Outcome(notes=g.notes, kinds=g.kinds)
    if g.session is not None:
        g.session.close()
        # Only the public phase's output may reach the student (results' ``output``); the
        # hidden phase's is for the instructors.
        out.output, out.hidden_output = g.session.output("public"), g.session.output("hidden")
        out.student_seconds = g.session.student_seconds
        out.busy_seconds = g.session.busy_seconds
    # An exercise's error rules count once it computes something right (red team).
    out.results = {t: runner.gate_error_rules(rs) for t, rs in g.done.items()}
    return out


def grade(slot: Slot, sources: dict[str, bytes], specs: dict[str, list[runner.TestSpec]], *,
          problems: dict[str, str] | None = None, error: str | None = None,
          missing: set[str] | frozenset[str] = frozenset(),
          plans: dict | None = None, public_slot: Slot | None = None,
          references: dict[str, ModuleType] | None = None,
          status: Callable[[str], ContextManager] | None = None) -> Outcome:
    """Grade one submission's ``sources`` (topic -> file bytes) on the tests in ``specs``:
    every topic's public tests, then every topic's hidden tests in fresh workers, each phase
    (where there is a hidden one) under the host-wide
    :func:`~autograder.grading.phase_lock.phase_lock`.

    Args:
        problems: topic -> why its file is unusable (every test of it fails with that).
        missing: the topics of ``problems`` with no file at all (their tests' kind).
        error: the submission as a whole could not be read: every test fails with it.
        plans: the batch plan per topic (:func:`autograder.grading.plan.record`); without,
            tests run call by call.
        public_slot: the public tests run in this slot's workers, the hidden ones in fresh
            workers of ``slot``; without, both phases use ``slot``.
        references: topic -> the ``ref`` the tests get (default: the reference solution).
        status: a context manager shown while a topic runs (``course check``'s spinner).

    Never raises for anything the submission does; one hard deadline bounds its work
    (``Limits.submission_seconds``). A batch runs the phases as sweeps over the whole class
    instead (:mod:`autograder.grading.batch`).
    """
    g = begin(sources, specs, problems=problems, error=error, missing=missing)
    # Only a grading that has a hidden phase orders its phases with other graders: a
    # public-only one (course check, list, watch, the release build) holds no hidden input,
    # and on a host where students run code of their own, any of their processes could
    # listen anyway (docs/design/threat-model.md, phases).
    ordered = has_phase(specs, "hidden")
    try:
        for phase in runner.PHASES:
            if has_phase(specs, phase):
                with phase_lock(phase) if ordered else contextlib.nullcontext():
                    run_phase(g, (public_slot or slot) if phase == "public" else slot, specs,
                              phase, plans=plans, references=references, status=status)
    except BaseException:  # a stop (Ctrl-C): no outcome, the session closed
        if g.session is not None:
            g.session.close()
        raise
    return finish(g, specs)
