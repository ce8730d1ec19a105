"""Wrong implementations lose points in their own function's tests; correct ones get full marks.

This is what makes the hidden suites trustworthy (issue: "catch real mistakes and only mistakes").
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from tests import banks
from tests.helpers import grade_sources, with_replacement


def _variants(kind: str) -> list:
    params = []
    for info in sorted(pkgutil.iter_modules(banks.__path__), key=lambda i: i.name):
        if not info.name.startswith(kind + "_"):
            continue
        topic = info.name[len(kind) + 1:]
        mod = importlib.import_module(f"tests.banks.{info.name}")
        for i, v in enumerate(mod.BANK):
            params.append(pytest.param(topic, v, id=f"{topic}-{v.function}-{i}"))
    return params


@pytest.mark.parametrize(("topic", "variant"), _variants("wrong"))
def test_wrong_implementation_loses_points_in_its_own_tests(slot, topic, variant):
    results = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic])
    own = [r for r in results.values() if r.spec.exercise == variant.function]
    assert own, f"no tests for {topic}.{variant.function}"
    assert any(not r.passed for r in own), (
        f"{variant.why}: this wrong {variant.function} passes every one of its tests")
    allowed = {variant.function, *variant.also}
    # gpu tests carry no points and fail as "skipped" without CUDA: not the variant's doing.
    stray = sorted(r.spec.name for r in results.values()
                   if not r.passed and r.spec.exercise not in allowed and not r.spec.gpu)
    assert not stray, f"{variant.why}: tests of other functions failed too: {stray[:5]}"


@pytest.mark.parametrize(("topic", "variant"), _variants("correct"))
def test_correct_alternative_gets_full_marks(slot, topic, variant):
    results = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic])
    failed = {n: r.message for n, r in results.items() if not r.passed and not r.spec.gpu}
    assert not failed, f"{variant.why}: a correct {variant.function} failed: {failed}"
