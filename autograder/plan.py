"""A batch's plan: every request the tests make of a correct submission, recorded once.

The tests are deterministic: fixed seeds, and Hypothesis derandomised (INTERFACE.md), so a test
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
import inspect
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterator

from autograder import runner
from autograder.sandbox import Call, Pipelined, Session, Slot, SubmissionFault


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


def _replayer(fn: Any, examples: list[Example]) -> Any:
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
            try:
                run(example, sub, ref)
            except (Diverged, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as first:  # noqa: BLE001 - the test failed on this example
                # Hypothesis runs a failing example once more and reports that run (a timed
                # out function, say, is then "not run again"): so does the replay.
                try:
                    run(example, sub, ref)
                except (Diverged, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as again:  # noqa: BLE001
                    raise again from None
                raise first from None  # Hypothesis: flaky, reporting the first failure

    return replay


def reference_sources() -> dict[str, bytes]:
    """The reference solution's topic files (none in a student release: no plan there)."""
    from autograder import catalogue

    found = {}
    for topic in catalogue.topic_modules():
        path = runner.SOLUTIONS_DIR / f"{topic}.py"
        if path.is_file():
            found[topic] = path.read_bytes()
    return found


def record(slot: Slot, specs: dict[str, list[runner.TestSpec]],
           sources: dict[str, bytes]) -> dict[str, TopicPlan]:
    """Grade ``sources`` (the reference solution) on ``slot`` and record every test's calls.

    A topic whose recording was disturbed (its import failed, its worker restarted) gets no
    plan, and its tests then run one call at a time, as without a plan.
    """
    session = Session(slot, sources)
    plans: dict[str, TopicPlan] = {}
    try:
        for topic, topic_specs in specs.items():
            if topic not in sources:
                continue
            plan = _record_topic(session, topic, topic_specs)
            if plan is not None:
                plans[topic] = plan
    finally:
        session.close()
    slot.preload({t: p.calls for t, p in plans.items()})
    return plans


def _record_topic(session: Session, topic: str,
                  specs: list[runner.TestSpec]) -> TopicPlan | None:
    try:
        session.load(topic)
        session.forget()
    except SubmissionFault:
        return None
    generation = session.generation
    ref = runner.reference(topic)
    plan = TopicPlan(topic)
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
    if session.generation != generation:
        return None  # the worker restarted: the calls are not one worker's sequence
    return plan


def run_planned(session: Session, plan: TopicPlan, specs: list[runner.TestSpec],
                ref: ModuleType) -> list[runner.TestResult]:
    """Run a topic's tests against a loaded submission with the plan (steps 1-3 above)."""
    try:
        session.forget()
    except SubmissionFault:
        return [runner.run_test(session, s, ref) for s in specs]
    replies: Pipelined = session.pipeline(plan.calls, plan.topic)
    results = []
    for spec in specs:
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
        results.append(_run_fed(session, plan, replies, spec, ref))
    return results


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
                spec, fn=_replayer(spec.fn, examples)), ref)
        except Diverged:
            pass
        finally:
            session.feed()
    session.feed(plan.calls, replies, start, stop)
    try:
        return runner.run_test(session, spec, ref)
    finally:
        session.feed()
