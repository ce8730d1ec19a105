"""Wrong implementations lose points in their own function's tests; correct ones get full marks.

This is what makes the hidden suites trustworthy (issue: "catch real mistakes and only mistakes").
Each variant is graded as `course grade` grades a class (the batch plan), and its verdicts must
be the stored ones (tests/golden/banks.json, made call by call as `course check` grades). A
sample is also graded call by call in the same run, and there every test must give the same
verdict and message with and without the plan: the plan is a shortcut, never a judge.

Costs (docs/design/measured-facts.md, "The test suite's time"): a variant graded call by call
takes about 3 s of the grader's time (Hypothesis drawing inputs), with the plan about 0.5 s.
`make test` grades every variant with the plan and one in LIVE_SAMPLE call by call too; the
quick run, one in QUICK_SAMPLE and one in PLAN_SAMPLE.
"""

from __future__ import annotations

import pytest

from tests import banks, golden
from tests.helpers import grade_sources, with_replacement

GOLDEN = golden.load(golden.BANKS)
#: `make test` grades every variant with the plan, and one in LIVE_SAMPLE call by call as
#: well; the quick run (`make test-quick`, ≤ 5 minutes on 2 cores) grades one in QUICK_SAMPLE
#: (every topic, wrong and correct, is still met) and compares one in PLAN_SAMPLE. The rest are
#: marked slow. Sampled by the variant's place in banks.all_variants(), so a variant's tests are
#: in or out of a run together. Every variant's planned verdicts are already held to the
#: call-by-call ones stored in tests/golden/banks.json; the live sample (28 of 446 variants,
#: every topic's wrong and correct ones among them: test_the_live_sample_meets_every_topic)
#: checks in the same run that grading call by call still gives them. One in 16, not 8: each
#: live variant costs about 3 CPU-seconds of Hypothesis drawing, and `make test` must stay
#: within 15 minutes on 2 cores (docs/design/measured-facts.md, "The test suite's time").
QUICK_SAMPLE = 5
LIVE_SAMPLE = 16
PLAN_SAMPLE = 20
#: key -> its results with the plan, so that a variant's tests grade it once per process
#: (`make test` groups a variant's tests on one xdist worker).
_PLANNED: dict[str, dict] = {}
_PLACE = {key: i for i, (key, _, _) in enumerate(banks.all_variants())}


def _variants(kind: str | None) -> list:
    params = []
    for key, topic, v in banks.all_variants(kind):
        marks = [pytest.mark.xdist_group(key)]
        place = _PLACE[key]
        if kind is None and place % LIVE_SAMPLE:
            continue  # graded call by call in one variant in LIVE_SAMPLE only
        if place % (QUICK_SAMPLE if kind else PLAN_SAMPLE):
            marks.append(pytest.mark.slow)
        params.append(pytest.param(key, topic, v, id=key.partition("-")[2] if kind else key,
                                   marks=marks))
    return params


def _verdict(result) -> tuple[bool, str]:
    # A wrong variant that draws random weights (torch's generator, inherited from the zygote)
    # draws other numbers when the plan has run more calls before: measured errors may differ.
    return result.passed, golden.NUMBER.sub("#", result.message)


def _planned(slot, plans, key: str, topic: str, variant) -> dict:
    """The variant graded with the batch plan (as `course grade` grades a class), checked
    against its stored fingerprint: the verdicts tests/golden/banks.json holds (numbers aside,
    as in _verdict, and the variant's unsettled tests by name alone), which were made call by
    call."""
    if key not in _PLANNED:
        got = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic],
                            plans=plans)
        assert GOLDEN.get(key) == golden.verdicts_digest(got, variant.unsettled), (
            f"{key}: verdicts differ from tests/golden/banks.json (regenerate it if meant)")
        _PLANNED[key] = got
    return _PLANNED[key]


@pytest.mark.parametrize(("key", "topic", "variant"), _variants("wrong"))
def test_wrong_implementation_loses_points_in_its_own_tests(slot, plans, key, topic, variant):
    results = _planned(slot, plans, key, topic, variant)
    own = [r for r in results.values() if r.spec.exercise == variant.function]
    assert own, f"no tests for {topic}.{variant.function}"
    # A test whose verdict the BLAS kernel decides for this variant proves nothing: it must
    # lose points where every processor agrees.
    settled = [r for r in own if r.spec.fn.__name__ not in variant.unsettled]
    assert any(not r.passed for r in settled), (
        f"{variant.why}: this wrong {variant.function} passes every one of its settled tests")
    allowed = {variant.function, *variant.also}
    # gpu tests carry no points and fail as "skipped" without CUDA: not the variant's doing.
    stray = sorted(r.spec.name for r in results.values()
                   if not r.passed and r.spec.exercise not in allowed and not r.spec.gpu)
    assert not stray, f"{variant.why}: tests of other functions failed too: {stray[:5]}"


@pytest.mark.parametrize(("key", "topic", "variant"), _variants("correct"))
def test_correct_alternative_gets_full_marks(slot, plans, key, topic, variant):
    results = _planned(slot, plans, key, topic, variant)
    failed = {n: r.message for n, r in results.items() if not r.passed and not r.spec.gpu}
    assert not failed, f"{variant.why}: a correct {variant.function} failed: {failed}"


@pytest.mark.parametrize(("key", "topic", "variant"), _variants(None))
def test_the_plan_gives_the_same_verdicts(slot, plans, key, topic, variant):
    """Graded call by call (as `course check` grades), every test's verdict and message are
    the ones the recorded plan gave (numbers aside, see _verdict)."""
    planned = _planned(slot, plans, key, topic, variant)
    live = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic])
    verdicts = {n: _verdict(r) for n, r in live.items()}
    changed = [(n, verdicts.get(n), _verdict(r)) for n, r in planned.items()
               if _verdict(r) != verdicts.get(n)]
    assert not changed and len(planned) == len(live), f"the plan changed verdicts: {changed[:3]}"


def test_the_live_sample_meets_every_topic():
    """The call-by-call sample holds a wrong and a correct variant of every topic."""
    sampled = {(topic, key.partition("-")[0]) for key, topic, _ in (
        p.values for p in _variants(None))}
    topics = {topic for _, topic, _ in banks.all_variants()}
    assert sampled == {(t, kind) for t in topics for kind in ("wrong", "correct")}
