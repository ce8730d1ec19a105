"""Wrong implementations lose points in their own function's tests; correct ones get full marks.

This is what makes the hidden suites trustworthy (issue: "catch real mistakes and only mistakes").
Each variant is graded twice, call by call (as `course check`) and with the batch plan (as
`course grade`): the two must give every test the same verdict and message.
"""

from __future__ import annotations

import re

import pytest

from tests import banks, golden
from tests.helpers import grade_sources, with_replacement


GOLDEN = golden.load(golden.BANKS)


def _variants(kind: str) -> list:
    return [pytest.param(key, topic, v, id=key.partition("-")[2])
            for key, topic, v in banks.all_variants(kind)]


def _verdict(result) -> tuple[bool, str]:
    # A wrong variant that draws random weights (torch's generator, inherited from the zygote)
    # draws other numbers when the plan has run more calls before: measured errors may differ.
    return result.passed, re.sub(r"\d+\.\d+(e[-+]?\d+)?", "#", result.message)


def _grade_both_ways(slot, plans, key: str, topic: str, code: str) -> dict:
    sources = {topic: with_replacement(topic, code)}
    live = grade_sources(slot, sources, [topic])
    # Byte for byte the verdicts stored in tests/golden/banks.json (tests/golden/__init__.py).
    assert golden.verdicts_digest(live) == GOLDEN.get(key), (
        f"{key}: verdicts differ from tests/golden/banks.json (regenerate it if meant)")
    planned = grade_sources(slot, sources, [topic], plans=plans)
    verdicts = {n: _verdict(r) for n, r in live.items()}
    changed = [(n, verdicts.get(n), _verdict(r)) for n, r in planned.items()
               if _verdict(r) != verdicts.get(n)]
    assert not changed and len(planned) == len(live), f"the plan changed verdicts: {changed[:3]}"
    return live


@pytest.mark.parametrize(("key", "topic", "variant"), _variants("wrong"))
def test_wrong_implementation_loses_points_in_its_own_tests(slot, plans, key, topic, variant):
    results = _grade_both_ways(slot, plans, key, topic, variant.code)
    own = [r for r in results.values() if r.spec.exercise == variant.function]
    assert own, f"no tests for {topic}.{variant.function}"
    assert any(not r.passed for r in own), (
        f"{variant.why}: this wrong {variant.function} passes every one of its tests")
    allowed = {variant.function, *variant.also}
    # gpu tests carry no points and fail as "skipped" without CUDA: not the variant's doing.
    stray = sorted(r.spec.name for r in results.values()
                   if not r.passed and r.spec.exercise not in allowed and not r.spec.gpu)
    assert not stray, f"{variant.why}: tests of other functions failed too: {stray[:5]}"


@pytest.mark.parametrize(("key", "topic", "variant"), _variants("correct"))
def test_correct_alternative_gets_full_marks(slot, plans, key, topic, variant):
    results = _grade_both_ways(slot, plans, key, topic, variant.code)
    failed = {n: r.message for n, r in results.items() if not r.passed and not r.spec.gpu}
    assert not failed, f"{variant.why}: a correct {variant.function} failed: {failed}"
