"""A batch's plan: every request the tests make of a correct submission, recorded once.

The tests are deterministic: fixed seeds, and Hypothesis derandomised (docs/design/interface.md),
so a test
makes the same requests of every submission for as long as the replies are the same. A batch
therefore grades the reference solution once, recording each test's requests (the exact
frames) and the replies it got. For each submission it then

1. sends a topic's recorded requests to the worker all at once (:meth:`Session.pipeline`): the
   worker serves them one after another as it always did, each within its own time limit, but
   the thousands of round trips of a submission go;
2. passes, without running it again, a test whose replies are byte for byte the ones the
   reference got: the test is a deterministic function of those replies, and it passed on them;
3. runs every other test as before, with its requests answered from the pipelined replies
   while they match the recorded ones byte for byte, and live from the first one that does
   not (a failing test stops early, or sends what it got back to another call). A Hypothesis
   test replays the examples recorded for it, in order, without the engine: derandomised
   Hypothesis would generate exactly those for as long as they pass, and stops at the first
   that fails, as the replay does.

The verdict is the one a test run one call at a time would give: nothing here judges a value.
The worker still runs student code only, and the grader still decodes only plain data.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import inspect
import math
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterator

from autograder.grading import run as runner
from autograder.sandbox.session import Call, Pipelined, Session, Slot, SubmissionFault


@dataclass
class TopicPlan:
    """One topic's recorded calls, in order, and which of them each test made."""

    topic: str
    calls: list[Call] = field(default_factory=list)
    #: test name -> (start, stop) into ``calls``, and the replies the reference got there.
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    expected: dict[str, list[bytes]] = field(default_factory=dict)
    #: tests the reference passed: only those may pass on matching replies alone.
    passed: set[str] = field(default_factory=set)
    #: a passed Hypothesis test's examples, in the order Hypothesis ran them.
    examples: dict[str, list[Example]] = field(default_factory=dict)
    #: the reference, its results kept for every submission (see MemoReference)
    ref: MemoReference | None = None
    #: (test, digest of its replies) -> (passed, message, replies used): the verdict a test
    #: gave on exactly these replies, using no others (see run_planned)
    verdicts: dict[tuple[str, bytes], tuple[bool, str, tuple[int, ...]]] = field(
        default_factory=dict)

    #: "public" or "hidden": a plan covers one phase of a topic (runner.PHASES)
    phase: str = "public"

    MAX_VERDICTS = 20_000  # per topic: memory stays bounded as a class grows

    @property
    def key(self) -> str:
        """The plan's name for :meth:`Slot.preload` and :meth:`Session.pipeline`."""
        return f"{self.topic}:{self.phase}"


@dataclass
class Example:
    """The arguments Hypothesis gave one run of a test, and what ``data.draw`` returned."""

    kwargs: dict[str, Any]
    draws: list[Any] | None  # None: the test takes no ``data``
    valid: bool  # False: ``assume`` rejected it
    aborted: bool = False  # Hypothesis ended it inside a draw (out of data): not a test run


Diverged = runner.ReplayDiverged  # the replay left the recorded examples: run Hypothesis


class _Aborted(Exception):
    """Replaying an example Hypothesis ended inside a draw: it ends there too."""


class _RecordingData:
    def __init__(self, data: Any, example: Example) -> None:
        self._data, self._example = data, example

    def draw(self, strategy: Any, label: Any = None) -> Any:
        try:
            value = self._data.draw(strategy, label)
        except BaseException:
            self._example.aborted = True  # Hypothesis's own control flow (out of data)
            raise
        self._example.draws.append(copy.deepcopy(value))
        return value


class _ReplayData:
    def __init__(self, example: Example) -> None:
        self._draws = iter(copy.deepcopy(example.draws))
        self._aborted = example.aborted

    def draw(self, strategy: Any, label: Any = None) -> Any:
        try:
            return next(self._draws)
        except StopIteration:
            if self._aborted:
                raise _Aborted from None
            raise Diverged("more draws than recorded") from None


@contextlib.contextmanager
def _recording_examples(fn: Any) -> Iterator[list[Example] | None]:
    """Record every run Hypothesis makes of ``fn`` (its documented, reassignable
    ``fn.hypothesis.inner_test``; ``functools.wraps`` keeps the digest that seeds it)."""
    handle = getattr(fn, "hypothesis", None)
    original = getattr(handle, "inner_test", None)
    if original is None:
        yield None
        return
    from hypothesis.errors import UnsatisfiedAssumption

    examples: list[Example] = []
    # A suite test is ``test(sub, ref, **drawn)``: the rest of its parameters are drawn.
    drawn = list(inspect.signature(original).parameters)[2:]

    @functools.wraps(original)
    def recording(*args: Any, **kwargs: Any) -> Any:
        draws = [] if "data" in kwargs else None
        example = Example({k: copy.deepcopy(kwargs[k]) for k in drawn if k != "data"},
                          draws, True)
        examples.append(example)
        if draws is not None:
            kwargs["data"] = _RecordingData(kwargs["data"], example)
        try:
            return original(*args, **kwargs)
        except UnsatisfiedAssumption:
            example.valid = False
            raise

    handle.inner_test = recording
    try:
        yield examples
    finally:
        handle.inner_test = original


def _replayer(fn: Any, examples: list[Example], session: Session) -> Any:
    """A stand-in for a Hypothesis test that runs its recorded examples in order."""
    import warnings

    from hypothesis.errors import HypothesisException, HypothesisWarning, UnsatisfiedAssumption

    inner = fn.hypothesis.inner_test

    def run(example: Example, sub: Any, ref: Any) -> None:
        kwargs = copy.deepcopy(example.kwargs)
        if example.draws is not None:
            kwargs["data"] = _ReplayData(example)
        try:
            with warnings.catch_warnings():
                # ``assume`` outside the engine warns (and still rejects the example).
                warnings.simplefilter("ignore", HypothesisWarning)
                inner(sub, ref, **kwargs)
        except _Aborted:
            return  # as Hypothesis did: the example was never a test run
        except UnsatisfiedAssumption:
            if example.valid:
                raise Diverged("an example the reference ran was rejected") from None
        except HypothesisException as exc:  # anything else of Hypothesis's: let it run
            raise Diverged(f"Hypothesis objected ({type(exc).__name__})") from None

    def replay(sub: Any, ref: Any) -> None:
        for example in examples:
            position = session.feed_position()
            try:
                run(example, sub, ref)
            except (Diverged, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as first:  # noqa: BLE001 - the test failed on this example
                # Hypothesis runs a failing example once more and reports that run (a timed
                # out function, say, is then "not run again"): so does the replay, asking the
                # same calls, whose replies the worker already gave.
                session.rewind(position)
                try:
                    run(example, sub, ref)
                except (Diverged, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as again:  # noqa: BLE001
                    raise again from None
                raise first from None  # Hypothesis: flaky, reporting the first failure

    return replay


class MemoReference:
    """The reference module, with its functions' results kept per argument values.

    A test that runs again (its replies differ from the reference's) computes the same
    expected values for every submission: "reference values computed once per batch". Only
    functions of the module itself, called on plain values (numbers, strings, NumPy arrays,
    CPU tensors without gradients, and tuples, lists and dicts of them), returning plain values,
    are kept; a function that changes its arguments is never kept. A hit returns a copy. Results
    are kept while the reference itself is graded (those are the calls other submissions' tests
    repeat), then the memo is frozen: memory stays that of one grading.
    """

    MAX_ENTRIES = 50_000

    def __init__(self, module: ModuleType) -> None:
        self._module = module
        self._cache: dict[Any, Any] = {}
        self._wrapped: dict[str, Any] = {}
        self._impure: set[str] = set()
        self.frozen = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        if not (inspect.isfunction(attr) and attr.__module__ == self._module.__name__):
            return attr
        wrapped = self._wrapped.get(name)
        if wrapped is None:
            wrapped = self._wrapped[name] = self._memoised(name, attr)
        return wrapped

    def _memoised(self, name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            key = None if name in self._impure else _key((name, args, kwargs))
            if key is None:
                return fn(*args, **kwargs)
            if key in self._cache:
                return copy.deepcopy(self._cache[key])
            result = fn(*args, **kwargs)
            if _key((name, args, kwargs)) != key:
                self._impure.add(name)  # it changed its arguments: never kept
            elif (not self.frozen and len(self._cache) < self.MAX_ENTRIES
                  and _key(result) is not None):
                self._cache[key] = copy.deepcopy(result)
            return result

        return call


def _key(x: Any) -> Any:
    """A hashable stand-in for a plain value, equal only for identical values (or None)."""
    import numpy as np

    t = type(x)
    if x is None or t in (bool, int, str):
        return (t.__name__, x)
    if t is float or t is complex:
        return (t.__name__, repr(x))  # tells -0.0 from 0.0, and nan equals nan
    if t in (tuple, list):
        items = tuple(_key(v) for v in x)
        return None if None in items else (t.__name__, items)
    if t is dict:
        items = tuple((k, _key(v)) for k, v in x.items())
        return None if not all(type(k) is str for k, _ in items) or any(
            v is None for _, v in items) else ("dict", items)
    if t is np.ndarray and x.dtype.kind in "biufc":
        return ("nd", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return ("np", x.dtype.str, x.tobytes())
    torch = sys.modules.get("torch")
    if (torch is not None and t is torch.Tensor and x.device.type == "cpu"
            and not x.requires_grad and x.layout == torch.strided):
        return ("tensor", str(x.dtype), tuple(x.shape), _tensor_bytes(x, torch))
    return None


def _tensor_bytes(x: Any, torch: Any) -> bytes:
    y = x.detach().contiguous()
    if y.dtype == torch.bfloat16:
        y = y.view(torch.int16)
    return y.numpy().tobytes()


def reference_sources() -> dict[str, bytes]:
    """The reference solution's topic files (none in a student release: no plan there)."""
    from autograder import catalogue

    found = {}
    for topic in catalogue.topic_modules():
        path = runner.SOLUTIONS_DIR / f"{topic}.py"
        if path.is_file():
            found[topic] = path.read_bytes()
    return found


def record(slot: Slot, specs: dict[str, list[runner.TestSpec]], sources: dict[str, bytes],
           public_slot: Slot | None = None) -> dict[str, dict[str, TopicPlan]]:
    """Grade ``sources`` (the reference solution) on ``slot`` and record every test's calls.

    A topic whose recording was disturbed (its import failed, its worker restarted) gets no
    plan, and its tests then run one call at a time, as without a plan.
    """
    session = Session(public_slot or slot, sources)
    # The trusted reference has no deadline of its own (its calls keep their limits): a small
    # --submission-timeout would leave the later topics without a plan, for nothing.
    session.limits = dataclasses.replace(session.limits, submission_seconds=math.inf)
    plans: dict[str, dict[str, TopicPlan]] = {}
    try:
        # In the order a submission is graded (grade.grade_loaded): every topic's public tests,
        # then every topic's hidden tests (on ``slot``, in a fresh worker).
        for phase in runner.PHASES:
            if phase == "hidden":
                if not any(s.visibility == phase for t in specs.values() for s in t):
                    break
                session.switch(slot, phase)
            for topic, topic_specs in specs.items():
                phase_specs = [s for s in topic_specs if s.visibility == phase]
                if topic not in sources or not phase_specs:
                    continue
                plan = _record_topic(session, topic, phase_specs, phase)
                if plan is not None:
                    plans.setdefault(topic, {})[phase] = plan
    finally:
        session.close()
    # The public tests' zygote holds their requests decoded; every worker inherits them.
    # Hidden requests are never preloaded: a worker that runs student code holds no hidden
    # input before a test asks (an import-time error could quote them all into a topic's
    # note, which the student sees at once: test_hidden_text.py). They travel as frames when
    # their topic's hidden tests run.
    public = {p.key: p.calls for phases in plans.values() for p in phases.values()
              if p.phase == "public"}
    (public_slot or slot).preload(public)
    return plans


def _record_topic(session: Session, topic: str, specs: list[runner.TestSpec],
                  phase: str = "public") -> TopicPlan | None:
    try:
        session.load(topic)
        session.forget()
    except SubmissionFault:
        return None
    generation = session.generation
    ref = MemoReference(runner.reference(topic))  # filled as the reference is graded
    plan = TopicPlan(topic, ref=ref, phase=phase)
    for spec in specs:
        if spec.gpu:
            continue
        session.recorder = []
        try:
            with _recording_examples(spec.fn) as examples:
                result = runner.run_test(session, spec, ref)
        finally:
            calls, session.recorder = session.recorder, None
        start = len(plan.calls)
        plan.calls.extend(calls)
        plan.spans[spec.name] = (start, len(plan.calls))
        plan.expected[spec.name] = [c.reply for c in calls]
        if result.passed:
            plan.passed.add(spec.name)
            if examples:
                plan.examples[spec.name] = examples
    ref.frozen = True
    if session.generation != generation:
        return None  # the worker restarted: the calls are not one worker's sequence
    return plan


def planned_runner(plans: dict[str, TopicPlan] | TopicPlan | None
                   ) -> runner.PlannedRunner | None:
    """What :func:`autograder.grading.run.run_topic` calls to run a topic with ``plans`` (None: run
    call by call). The runner never imports this module: the batch hands it this function."""
    if plans is None:
        return None
    return lambda session, specs, ref: run_planned(session, plans, specs, ref)


def run_planned(session: Session, plans: dict[str, TopicPlan] | TopicPlan,
                specs: list[runner.TestSpec], ref: ModuleType) -> list[runner.TestResult]:
    """Run a topic's tests against a loaded submission with its plans (steps 1-3 above).

    ``plans`` maps a phase ("public", "hidden") to its plan (:func:`record`); the public tests
    run first (runner.PHASES), a phase without a plan call by call. Results are in ``specs``'
    order.
    """
    if isinstance(plans, TopicPlan):
        plans = {plans.phase: plans}
    results: list[Any] = [None] * len(specs)
    for phase in runner.PHASES:
        idx = [i for i, s in enumerate(specs) if s.visibility == phase]
        if not idx:
            continue
        phase_specs = [specs[i] for i in idx]
        plan = plans.get(phase)
        if plan is None:
            done = [runner.run_test(session, s, ref) for s in phase_specs]
        else:
            done = _run_phase(session, plan, phase_specs, ref)
        for i, r in zip(idx, done):
            results[i] = r
    return results


def _run_phase(session: Session, plan: TopicPlan, specs: list[runner.TestSpec],
               ref: ModuleType) -> list[runner.TestResult]:
    if plan.ref is not None:
        ref = plan.ref
    try:
        session.forget()
    except SubmissionFault:
        return [runner.run_test(session, s, ref) for s in specs]
    replies: Pipelined = session.pipeline(plan.calls, plan.key)
    results = []
    for spec in specs:
        late = runner.after_deadline(session, spec)
        if late is not None:  # the hard deadline passed: no verdict, even on replies at hand
            results.append(late)
            continue
        span = plan.spans.get(spec.name)
        if span is None:
            results.append(runner.run_test(session, spec, ref))
            continue
        start, stop = span
        if (spec.name in plan.passed and replies.replies[start:stop] == plan.expected[spec.name]
                and _as_if_live(session, plan, replies, start, stop)):
            session.charge(sum(replies.seconds[start:stop]))
            results.append(runner.TestResult(spec, True, "", 0.0))
            continue
        key = _verdict_key(session, plan, replies, spec.name, start, stop)
        seen = plan.verdicts.get(key) if key else None
        if seen is not None and session.affordable([replies.seconds[i] for i in seen[2]]):
            # This test ran before on exactly these replies, asking nothing else and refused
            # nothing: the same deterministic test gives the same verdict (a stub's
            # NotImplementedError, say).
            session.charge(sum(replies.seconds[i] for i in seen[2]))
            results.append(runner.TestResult(spec, seen[0], seen[1], 0.0))
            continue
        live, refused = session.live_calls, session.refusals
        generation, used = session.generation, len(session.fed_log)
        result = _run_fed(session, plan, replies, spec, ref)
        if (key and session.live_calls == live and session.refusals == refused
                and session.generation == generation and session.pipeline_alive(replies)
                and len(plan.verdicts) < plan.MAX_VERDICTS):
            plan.verdicts[key] = (result.passed, result.message,
                                  tuple(session.fed_log[used:]))
        del session.fed_log[used:]
        results.append(result)
    return results


def _verdict_key(session: Session, plan: TopicPlan, replies: Pipelined, name: str, start: int,
                 stop: int) -> tuple[str, bytes] | None:
    """The key of a test's verdict on its replies, if they may stand for the test: all run,
    none failed, from a worker still alive, and no call of a function barred since."""
    window = replies.replies[start:stop]
    if (None in window or not session.pipeline_alive(replies)
            or (replies.failed_at is not None and start <= replies.failed_at < stop)):
        return None
    if session.timed_out and any(c.key in session.timed_out for c in plan.calls[start:stop]):
        return None
    digest = hashlib.sha256()
    for body in window:
        digest.update(len(body).to_bytes(8, "little"))
        digest.update(body)
    return name, digest.digest()


def _as_if_live(session: Session, plan: TopicPlan, replies: Pipelined, start: int,
                stop: int) -> bool:
    """Whether the test's calls would all have run, live: none of a function barred after a
    timeout (Session.call refuses those), and none once the budget is spent."""
    if session.timed_out and any(c.key in session.timed_out for c in plan.calls[start:stop]):
        return False
    return session.affordable(replies.seconds[start:stop])


def _run_fed(session: Session, plan: TopicPlan, replies: Pipelined, spec: runner.TestSpec,
             ref: ModuleType) -> runner.TestResult:
    start, stop = plan.spans[spec.name]
    examples = plan.examples.get(spec.name)
    if examples:
        session.feed(plan.calls, replies, start, stop)
        try:
            return runner.run_test(session, dataclasses.replace(
                spec, fn=_replayer(spec.fn, examples, session)), ref)
        except Diverged:
            pass
        finally:
            session.feed()
    session.feed(plan.calls, replies, start, stop)
    try:
        return runner.run_test(session, spec, ref)
    finally:
        session.feed()
