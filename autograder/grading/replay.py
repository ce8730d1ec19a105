"""A batch's plan: every request the tests make of a correct submission, recorded once.

The tests are deterministic: fixed seeds, and Hypothesis derandomised (docs/design/interface.md),
so a test
makes the same requests of every submission for as long as the replies are the same. A batch
therefore grades the reference solution once, recording each test's requests (the exact
frames) and the replies it got. For each submission it then

1. sends a topic's recorded requests to the worker all at once (:meth:`Pipeline.send`): the
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

import dataclasses
import hashlib
from types import ModuleType
from typing import Any

from autograder.grading import runner
from autograder.grading.examples import Diverged, replayer
from autograder.grading.plan import TopicPlan
from autograder.driver.errors import SubmissionFault
from autograder.driver.pipeline import Pipelined
from autograder.driver.session import Session



def planned_runner(plans: dict[str, TopicPlan] | TopicPlan | None
                   ) -> runner.PlannedRunner | None:
    """What :func:`autograder.grading.runner.run_topic` calls to run a topic with ``plans`` (None: run
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
    replies: Pipelined = session.pipeline.send(plan.calls, plan.key)
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
            session.budget.charge(sum(replies.seconds[start:stop]))
            results.append(runner.TestResult(spec, True, "", 0.0,
                                             raised_only=spec.name in plan.raised_only))
            continue
        key = _verdict_key(session, plan, replies, spec.name, start, stop)
        seen = plan.verdicts.get(key) if key else None
        if seen is not None and session.budget.affordable([replies.seconds[i] for i in seen[2]]):
            # This test ran before on exactly these replies, asking nothing else and refused
            # nothing: the same deterministic test gives the same verdict (a stub's
            # NotImplementedError, say).
            session.budget.charge(sum(replies.seconds[i] for i in seen[2]))
            results.append(runner.TestResult(spec, seen[0], seen[1], 0.0, raised_only=seen[3]))
            continue
        live, refused = session.live_calls, session.refusals
        generation, used = session.generation, len(session.pipeline.fed_log)
        result = _run_fed(session, plan, replies, spec, ref)
        if (key and session.live_calls == live and session.refusals == refused
                and session.generation == generation and session.pipeline.alive(replies)
                and len(plan.verdicts) < plan.MAX_VERDICTS):
            plan.verdicts[key] = (result.passed, result.message,
                                  tuple(session.pipeline.fed_log[used:]), result.raised_only)
        del session.pipeline.fed_log[used:]
        results.append(result)
    return results


def _verdict_key(session: Session, plan: TopicPlan, replies: Pipelined, name: str, start: int,
                 stop: int) -> tuple[str, bytes] | None:
    """The key of a test's verdict on its replies, if they may stand for the test: all run,
    none failed, from a worker still alive, and no call of a function barred since."""
    window = replies.replies[start:stop]
    if (None in window or not session.pipeline.alive(replies)
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
    return session.budget.affordable(replies.seconds[start:stop])


def _run_fed(session: Session, plan: TopicPlan, replies: Pipelined, spec: runner.TestSpec,
             ref: ModuleType) -> runner.TestResult:
    start, stop = plan.spans[spec.name]
    examples = plan.examples.get(spec.name)
    if examples:
        session.pipeline.feed(plan.calls, replies, start, stop)
        try:
            return runner.run_test(session, dataclasses.replace(
                spec, fn=replayer(spec.fn, examples, session)), ref)
        except Diverged:
            pass
        finally:
            session.pipeline.feed()
    session.pipeline.feed(plan.calls, replies, start, stop)
    try:
        return runner.run_test(session, spec, ref)
    finally:
        session.pipeline.feed()
