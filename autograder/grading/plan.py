"""The batch plan, recorded: the reference solution graded once, every request and reply kept.

See :mod:`autograder.grading.replay` for how a plan is used and why no verdict changes.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import math
import pickle
import queue
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from autograder.grading import runner
from autograder.grading.examples import Example, recording_examples
from autograder.driver.errors import SubmissionFault
from autograder.driver.protocol import Call
from autograder.driver.session import Session
from autograder.driver.slot import Slot



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
    #: of which, those it passed with every call raising (runner.TestResult.raised_only)
    raised_only: set[str] = field(default_factory=set)
    #: a passed Hypothesis test's examples, in the order Hypothesis ran them.
    examples: dict[str, list[Example]] = field(default_factory=dict)
    #: the reference, its results kept for every submission (see MemoReference)
    ref: MemoReference | None = None
    #: (test, digest of its replies) -> (passed, message, replies used, raised only): the
    #: verdict a test gave on exactly these replies, using no others (see run_planned)
    verdicts: dict[tuple[str, bytes], tuple[bool, str, tuple[int, ...], bool]] = field(
        default_factory=dict)

    #: "public" or "hidden": a plan covers one phase of a topic (runner.PHASES)
    phase: str = "public"

    MAX_VERDICTS = 20_000  # per topic: memory stays bounded as a class grows

    @property
    def key(self) -> str:
        """The plan's name for :meth:`Slot.preload` and :meth:`Pipeline.send`."""
        return f"{self.topic}:{self.phase}"



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

    def __getstate__(self) -> dict[str, Any]:
        # Kept in a plan file (autograder.grading.plan_file): the results, not the module,
        # which is loaded again by its topic's name.
        return {"topic": self._module.__name__.rsplit(".", 1)[-1], "cache": self._cache,
                "impure": self._impure, "frozen": self.frozen}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._module = runner.reference(state["topic"])
        self._cache, self._impure = state["cache"], state["impure"]
        self._wrapped, self.frozen = {}, state["frozen"]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "_module" not in self.__dict__:
            raise AttributeError(name)  # dunder lookups (copy, pickle) and a half-built memo
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
           public_slot: Slot | None = None, *, preload_plans: bool = True,
           phases: tuple[str, ...] = runner.PHASES) -> dict[str, dict[str, TopicPlan]]:
    """Grade ``sources`` (the reference solution) on ``slot`` and record every test's calls.

    ``phases``: which phases to record (a batch records the hidden one in its hidden sweep
    only: :mod:`autograder.grading.batch`). The public phase runs on ``public_slot`` when
    given, the hidden one in fresh workers of ``slot``.

    A topic whose recording was disturbed (its import failed, its worker restarted) gets no
    plan, and its tests then run one call at a time, as without a plan. With
    ``preload_plans`` (the default) the public slot's zygote then holds the requests
    (:func:`preload`).
    """
    session: Session | None = None
    plans: dict[str, dict[str, TopicPlan]] = {}
    try:
        # In the order a submission is graded (autograder.grading.loop): every topic's public
        # tests, then every topic's hidden tests (on ``slot``, in a fresh worker).
        for phase in phases:
            if not any(s.visibility == phase for t in specs.values() for s in t):
                continue
            where = (public_slot or slot) if phase == "public" else slot
            if session is None:
                session = Session(where, sources)
                session.phase = phase
                # The trusted reference has no deadline of its own (its calls keep their
                # limits): a small --submission-timeout would leave later topics without a plan.
                session.limits = dataclasses.replace(session.limits, submission_seconds=math.inf)
            else:
                session.resume(where, phase)
            for topic, topic_specs in specs.items():
                phase_specs = [s for s in topic_specs if s.visibility == phase]
                if topic not in sources or not phase_specs:
                    continue
                plan = _record_topic(session, topic, phase_specs, phase)
                if plan is not None:
                    plans.setdefault(topic, {})[phase] = plan
    finally:
        if session is not None:
            session.close()
    if preload_plans and "public" in phases:
        preload(public_slot or slot, plans)
    return plans


#: How long a slot waits for another slot's share of the plan before recording that share
#: itself. A safety net only: a slot that dies breaks the batch's pool, which stops them all.
SHARE_WAIT_SECONDS = 900.0


def record_shared(slot: Slot, specs: dict[str, list[runner.TestSpec]],
                  sources: dict[str, bytes], public_slot: Slot | None, index: int,
                  queues: list[Any] | None,
                  phases: tuple[str, ...] = runner.PHASES) -> dict[str, dict[str, TopicPlan]]:
    """:func:`record`, split between a batch's ``len(queues)`` slots, each calling this.

    Slot ``index`` records every ``len(queues)``-th topic of ``sorted(sources)`` from its
    ``index``-th, sends what it recorded to each other slot's queue and takes theirs from
    ``queues[index]``: the reference is graded once per batch, not once per slot (a batch
    with two slots starts about twice as fast on two cores). The plans are the same whichever
    slot recorded them (the reference and the suites' examples are deterministic, as a plan
    file replayed by another process already relies on: :mod:`autograder.grading.plan_file`).

    The queues are multiprocessing queues between the grader's own slot processes: no worker
    holds them, and what travels is this module's pickled plans, as in a plan file. A share
    that does not come within :data:`SHARE_WAIT_SECONDS` is recorded here instead.

    Without ``queues`` (one slot) it is :func:`record`. ``phases`` as for :func:`record`; a
    second recording (another phase) needs queues of its own.

    Returns:
        Every topic's plans, in ``sorted(sources)`` order, preloaded as :func:`record` does.
    """
    if not queues:
        return record(slot, specs, sources, public_slot, phases=phases)
    n = len(queues)
    topics = sorted(sources)
    share = {t: sources[t] for t in topics[index::n]}
    plans = (record(slot, specs, share, public_slot, preload_plans=False, phases=phases)
             if share else {})
    # Pickled now, not by the queue's feeder thread later: grading adds verdicts to them.
    blob = pickle.dumps((index, plans), protocol=pickle.HIGHEST_PROTOCOL)
    for j, q in enumerate(queues):
        if j != index:
            q.put(blob)
            # A share nobody reads (its slot died) must not hold this process at its exit.
            getattr(q, "cancel_join_thread", lambda: None)()
    got = {index: plans}
    while len(got) < n:
        try:
            j, theirs = pickle.loads(queues[index].get(timeout=SHARE_WAIT_SECONDS))
        except queue.Empty:
            break
        got[j] = theirs
    for j in range(n):
        if j not in got:
            late = {t: sources[t] for t in topics[j::n]}
            got[j] = (record(slot, specs, late, public_slot, preload_plans=False, phases=phases)
                      if late else {})
    merged = {t: p for part in got.values() for t, p in part.items()}
    plans = {t: merged[t] for t in topics if t in merged}
    if "public" in phases:
        preload(public_slot or slot, plans)
    return plans


def preload(slot: Slot, plans: dict[str, dict[str, TopicPlan]]) -> None:
    """Have ``slot``'s zygote hold the public plans' requests decoded (:meth:`Slot.preload`).

    The public tests' zygote holds their requests decoded; every worker inherits them.
    Hidden requests are never preloaded: a worker that runs student code holds no hidden
    input before a test asks (an import-time error could quote them all into a topic's
    note, which the student sees at once: test_hidden_text.py). They travel as frames when
    their topic's hidden tests run.
    """
    public = {p.key: p.calls for phases in plans.values() for p in phases.values()
              if p.phase == "public"}
    slot.preload(public)


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
            with recording_examples(spec.fn) as examples:
                result = runner.run_test(session, spec, ref)
        finally:
            calls, session.recorder = session.recorder, None
        start = len(plan.calls)
        plan.calls.extend(calls)
        plan.spans[spec.name] = (start, len(plan.calls))
        plan.expected[spec.name] = [c.reply for c in calls]
        if result.passed:
            plan.passed.add(spec.name)
            if result.raised_only:
                plan.raised_only.add(spec.name)
            if examples:
                plan.examples[spec.name] = examples
    ref.frozen = True
    if session.generation != generation:
        return None  # the worker restarted: the calls are not one worker's sequence
    return plan


