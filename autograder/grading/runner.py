"""Collect a topic's graded tests and run them against one submission session.

Tests come from ``autograder.suites.public.<topic>`` and ``autograder.suites.hidden.<topic>``
(the hidden package is absent from a student release). Points follow the catalogue: each
exercise's points are shared equally among its tests, public and hidden together; ``gpu`` tests
carry none.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterator

from autograder import catalogue, paths

try:
    BaseExceptionGroup
except NameError:  # pragma: no cover - Python 3.10 (hypothesis brings the backport)
    from exceptiongroup import BaseExceptionGroup
from autograder.driver.errors import BUDGET_SPENT, SubmissionFault
from autograder.driver.session import Session
from autograder.authoring.suite import SubmissionModule, TestMeta
from autograder.driver.errors import HIDDEN


@dataclass(frozen=True)
class TestSpec:
    name: str
    topic: str
    exercise: str
    description: str
    visibility: str  # "public" | "hidden"
    points: float
    advisory: bool
    gpu: bool
    fn: Callable[..., Any] = field(compare=False, repr=False)
    #: the test's own hint (``graded(..., hint=...)``); "" : the exercise's first hint is shown
    hint: str = ""
    #: a constant or empty answer passes it (``graded(..., trivial=True)``): gated like an
    #: error rule (:func:`gate_error_rules`)
    trivial: bool = False


@dataclass
class TestResult:
    spec: TestSpec
    passed: bool
    message: str = ""
    seconds: float = 0.0
    #: not run here (a GPU test without CUDA): no points either way, and not a failure
    skipped: bool = False
    #: passed, and every call it made of the submission raised (an error rule's test): it
    #: counts only beside a passed test that got a value back (:func:`gate_error_rules`)
    raised_only: bool = False
    #: never run because its topic could not run: one of
    #: :data:`autograder.results.model.NOT_RUN`, decided where that is known (:func:`run_topic`
    #: from its caller's facts about the submission's files, or its own failed import)
    not_run: str = ""

    @property
    def score(self) -> float:
        """The points it earned: its spec's when passed, else 0."""
        return self.spec.points if self.passed else 0.0

    @property
    def kind(self) -> str:
        """One of :data:`autograder.results.model.KINDS`: skipped, passed, the topic's
        :attr:`not_run` kind, else failed."""
        if self.skipped:
            return "skipped"
        if self.passed:
            return "passed"
        return self.not_run or "failed"


#: Why a test that passed on raising alone scores nothing (grader text, shown in either phase).
#: ``{which}``: "test" for a public one, "hidden test" for a hidden one (:data:`OPENED_BY`).
ERROR_RULES_ONLY = ("passed by raising alone: {exercise}'s error rules count once it computes "
                    "something right (no {which} of {exercise} that gets a result back passed)")
#: Why a passed trivial test (a constant or empty answer passes it) scores nothing.
TRIVIAL_ONLY = ("passed, but a constant or empty answer passes this case too: it counts once "
                "{exercise} computes something right (no other {which} of {exercise} that gets "
                "a result back passed)")
#: Which passes open a gated test of each visibility (:func:`gate_error_rules`): a public one
#: opens on any pass, a hidden one only on a hidden pass. The public tests' inputs and answers
#: ship with the release, so an answer looked up from them is no sign of computing anything.
OPENED_BY = {"public": ("public", "hidden"), "hidden": ("hidden",)}


def gate_error_rules(results: list[TestResult]) -> list[TestResult]:
    """``results`` with each error-rule pass voided where its exercise passed nothing else.

    Red team, second round: a file whose every function raised ``ValueError`` (its message
    naming common shapes) scored 10.79 / 100 with status ``ok``, from the tests of error rules
    alone. An exercise's tests that passed with every call raising
    (:attr:`TestResult.raised_only`) keep their points only if some other test of the same
    exercise passed on a returned value; else each becomes a failure saying why
    (:data:`ERROR_RULES_ONLY`). Red team, third round: one degenerate case per exercise that
    needs no computation (empty ids give zeros, a meta input an empty meta tensor) opened that
    gate, and constant answers (always ``False``) passed one-sided tests; such tests are marked
    ``trivial`` (:func:`autograder.authoring.suite.graded`), open nothing, and count under the
    same condition (:data:`TRIVIAL_ONLY`). Red team, sixth round: answers looked up from the
    public examples (whose inputs and answers the release ships), zeros elsewhere, passed
    every public test of an exercise and so opened its hidden gates: 28 / 100 without
    computing anything on a hidden input. A hidden gated test now opens only on a hidden pass
    (:data:`OPENED_BY`). Code that computes anything right keeps every point it earned: it
    passes hidden tests too.
    """
    works = {(r.spec.topic, r.spec.exercise, r.spec.visibility) for r in results
             if r.passed and not r.raised_only and not r.skipped and not r.spec.trivial}

    def gated(r: TestResult) -> TestResult:
        opened_by = OPENED_BY.get(r.spec.visibility, ("hidden",))
        if not r.passed or any((r.spec.topic, r.spec.exercise, v) in works for v in opened_by):
            return r
        why = {"exercise": r.spec.exercise,
               "which": "hidden test" if r.spec.visibility == "hidden" else "test"}
        if r.raised_only:
            return dataclasses.replace(r, passed=False, raised_only=False,
                                       message=ERROR_RULES_ONLY.format(**why))
        if r.spec.trivial:
            return dataclasses.replace(r, passed=False, message=TRIVIAL_ONLY.format(**why))
        return r

    return [gated(r) for r in results]


def _suite_module(kind: str, topic: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"autograder.suites.{kind}.{topic}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("autograder.suites"):
            return None  # a release without hidden suites, or a topic with no suite yet
        raise


def has_hidden_suites() -> bool:
    """Whether any topic has a hidden suite here (none in a student release), without
    importing one."""
    try:
        return any(importlib.util.find_spec(f"autograder.suites.hidden.{t}") is not None
                   for t in catalogue.topic_modules())
    except ModuleNotFoundError:
        return False  # no hidden package at all


def suite_visibility(module: ModuleType) -> str:
    """``"hidden"`` for a module of ``autograder.suites.hidden``, else ``"public"``: the one place
    that decides whether a test is hidden (its messages then show no inputs or values)."""
    return "hidden" if module.__name__.startswith("autograder.suites.hidden.") else "public"


@contextlib.contextmanager
def judging(visibility: str) -> Iterator[None]:
    """While a test of ``visibility`` runs: :data:`HIDDEN` is set for a hidden one (what the
    checks, the sandbox's exceptions and :func:`_message` may show depends on it)."""
    token = HIDDEN.set(visibility == "hidden")
    try:
        yield
    finally:
        HIDDEN.reset(token)


def hidden_available() -> bool:
    try:
        importlib.import_module("autograder.suites.hidden")
        return True
    except ModuleNotFoundError:
        return False


def cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def collect(topic: str, *, hidden: bool = True) -> list[TestSpec]:
    """The graded tests of ``topic`` in a stable order (catalogue exercise order, public first).

    Raises:
        ValueError: a test names an exercise the catalogue does not know.
    """
    top = catalogue.get_topic(topic)
    found: list[tuple[str, TestMeta, Callable]] = []
    for kind in ("public", "hidden") if hidden else ("public",):
        mod = _suite_module(kind, top.module)
        if mod is None:
            continue
        for fn in vars(mod).values():
            meta = getattr(fn, "__graded__", None)
            if isinstance(meta, TestMeta) and getattr(fn, "__name__", "").startswith("test"):
                found.append((suite_visibility(mod), meta, fn))
    names = {e.name for e in top.exercises}
    counts: dict[str, int] = {}
    for _, meta, _ in found:
        if meta.exercise not in names:
            raise ValueError(f"{top.module}: a test names unknown exercise {meta.exercise!r}")
        if not meta.gpu:
            counts[meta.exercise] = counts.get(meta.exercise, 0) + 1
    # When only the public half is collected (a release), points still follow the full suite.
    order = {e.name: i for i, e in enumerate(top.exercises)}
    specs = []
    for kind, meta, fn in found:
        ex = top.exercise(meta.exercise)
        points = 0.0 if meta.gpu else ex.points / counts[meta.exercise]
        specs.append(TestSpec(
            name=f"{top.module}.{meta.exercise}: {meta.description}", topic=top.module,
            exercise=meta.exercise, description=meta.description, visibility=kind,
            points=points, advisory=meta.advisory, gpu=meta.gpu, fn=fn, hint=meta.hint,
            trivial=meta.trivial))
    specs.sort(key=lambda s: (order[s.exercise], s.visibility != "public"))
    return specs


SOLUTIONS_DIR = paths.SOLUTIONS


def reference(topic: str) -> ModuleType:
    """The trusted reference implementation of a topic (only in the grading process).

    Loaded by path, so `course grade` works from any folder (the repository root need not be
    on ``sys.path``; the package may be installed).
    """
    name = f"solutions.{topic}"
    if name in sys.modules:
        return sys.modules[name]
    path = SOLUTIONS_DIR / f"{topic}.py"
    if not path.exists():
        # A student release (`course release`): the public tests' recorded reference values.
        from autograder.grading import recorded

        return recorded.reference(topic)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: A hidden test's message when its check gave none fit to show (see :func:`_message`).
HIDDEN_FAILURE = "the result does not meet this test's rule (a hidden test shows no details)"
#: A gpu test of a Triton topic met in an interpreting worker (every slot of `course grade`).
TRITON_GPU_SKIP = ("skipped: this grader's workers run Triton kernels through its interpreter; "
                   "the CUDA tests run in a compiling slot (scripts/gpu_check.sh)")


class ReplayDiverged(Exception):
    """A replayed test left its recording (:mod:`autograder.grading.replay`): run it for real instead."""


def _message(exc: BaseException) -> str:
    # Hypothesis may group several failures; the first is enough for a student.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if HIDDEN.get() and isinstance(exc, AssertionError):
        # Only what a check built from the grader's words (checks.Failure.hidden): a suite's
        # own message may quote a returned value, which could spell a hidden input.
        return getattr(exc, "hidden", None) or HIDDEN_FAILURE
    if isinstance(exc, (AssertionError, SubmissionFault)):
        return str(exc) or type(exc).__name__
    if HIDDEN.get():
        # The trusted code tripped over a returned value, and its message may quote it (a dict
        # key, a shape): a hidden test's message is the grader's words only.
        return f"could not check the result ({type(exc).__name__})"
    return f"could not check the result ({type(exc).__name__}: {exc})"


def _skipped(spec: TestSpec, session: Session | None = None) -> TestResult | None:
    if spec.gpu and not cuda_available():
        return TestResult(spec, False, "skipped: no CUDA device on the grading machine", 0.0,
                          skipped=True)
    if spec.gpu and interpreted_gpu_test(spec.topic, session):
        return TestResult(spec, False, TRITON_GPU_SKIP, 0.0, skipped=True)
    return None


def interpreted_gpu_test(topic: str, session: Session | None) -> bool:
    """Whether a gpu test of ``topic`` would meet Triton's interpreter in ``session``'s workers:
    a Triton topic's CUDA-sized kernel would then run on the host for minutes and spend the
    submission's time budget (docs/design/measured-facts.md, Triton in the sandbox)."""
    return (session is not None and session.slot.triton_interpret
            and catalogue.get_topic(topic).triton)


def _not_run(spec: TestSpec, why: str, kind: str) -> TestResult:
    """A test of a topic that could not run: failed with ``why`` and marked with ``kind`` (one
    of :data:`autograder.results.model.NOT_RUN`), unless it is skipped anyway (every
    submission then lists the same tests)."""
    return _skipped(spec) or TestResult(spec, False, why, not_run=kind)


def after_deadline(session: Session | None, spec: TestSpec) -> TestResult | None:
    """The result of a test met after the submission's hard deadline (else None): failed,
    "submission time budget spent", however fast it would be (autograder.driver.session)."""
    if session is None or not session.out_of_time():
        return None
    return _skipped(spec) or TestResult(
        spec, False, f"not run: {BUDGET_SPENT} (the submission used up its "
                     f"{session.limits.submission_seconds:g} s)")


def run_test(session: Session, spec: TestSpec, ref: ModuleType | None) -> TestResult:
    """Run one test against the submission; its verdict, never an exception of its own."""
    t0 = time.monotonic()
    skipped = _skipped(spec, session)
    if skipped is not None:
        return skipped
    late = after_deadline(session, spec)
    if late is not None:
        return late
    returned, raised = session.returned, session.raised
    with judging(spec.visibility):
        try:
            spec.fn(SubmissionModule(session, spec.topic), ref)
            return TestResult(spec, True, "", time.monotonic() - t0,
                              raised_only=session.returned == returned and session.raised > raised)
        except BaseException as exc:  # noqa: BLE001 - any failure is the test's verdict
            if isinstance(exc, (KeyboardInterrupt, SystemExit, ReplayDiverged)):
                raise
            if not isinstance(exc, (AssertionError, SubmissionFault, BaseExceptionGroup)):
                # Not the student's fault as far as we can tell: keep the trace for instructors.
                traceback.print_exc()
            return TestResult(spec, False, _message(exc), time.monotonic() - t0)


#: The order tests run in: a public test's feedback quotes what the student's code raised or
#: returned, so it must come from a worker that has not yet been given any hidden test's input
#: (red team: a submission kept hidden inputs and raised them in a later public test).
PHASES = ("public", "hidden")


def phase_order(specs: list[TestSpec]) -> list[int]:
    """Indices of ``specs``, the public tests first, each phase in the given order."""
    return [i for phase in PHASES for i, s in enumerate(specs) if s.visibility == phase]


#: How a batch runs a loaded topic's tests instead of one by one: (session, specs, reference)
#: -> results in ``specs``' order (:func:`autograder.grading.replay.planned_runner` makes one).
PlannedRunner = Callable[[Session, list[TestSpec], ModuleType], list[TestResult]]


#: The note of a topic that ran but timed out (:data:`autograder.results.model.TIMED_OUT`).
TIMED_OUT = "timed out"


def run_topic(session: Session | None, topic: str, specs: list[TestSpec],
              missing: str | None = None, planned: PlannedRunner | None = None,
              ref: Any = None, missing_kind: str = "missing"
              ) -> tuple[list[TestResult], str | None]:
    """Run one topic's tests. Returns results and, if the topic could not run, why
    (:data:`TIMED_OUT` when it ran and a call took too long).

    ``missing`` (the submission has no usable file for the topic) fails every test with it,
    each marked ``missing_kind`` (:attr:`TestResult.not_run`: the caller knows whether the
    file is missing, unreadable, or the whole submission could not be graded); a topic whose
    file does not import fails every test as ``import_error``.
    ``planned`` (in a batch: the plan's runner) pipelines the calls; without, one by one.
    ``ref`` replaces the reference solution the tests get (the release's recordings).
    """
    if missing is not None or session is None:
        why = missing or f"{topic}.py not found in the submission"
        return [_not_run(s, why, missing_kind) for s in specs], why
    try:
        session.load(topic)
    except SubmissionFault as exc:  # it does not import, or the budget is spent (red team)
        return [_not_run(s, str(exc), "import_error") for s in specs], str(exc)
    if ref is None:
        ref = reference(topic) if specs else None
    if planned is not None:
        results = planned(session, specs, ref)
    else:
        results: list[Any] = [None] * len(specs)
        for i in phase_order(specs):
            results[i] = run_test(session, specs[i], ref)
    why = None
    if any(k.startswith(f"{topic}.") for k in session.timed_out):
        why = TIMED_OUT
    return results, why
