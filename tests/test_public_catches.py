"""The public tests catch the commonest mistakes, and the docstring examples hold.

A student who runs `course check` should not learn about a softmax that ignores its axis, or a
transposed score grid, only from the hidden tests; and a docstring example must hold for every
method the docstring accepts (angle_between: Kahan's atan2 form and the clipped arccos).
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from solutions import ex01_vectors, ex03_softmax
from tests.banks import wrong_ex01_vectors, wrong_ex03_softmax, wrong_ex08_flash_attention
from tests.helpers import grade_sources, with_replacement

CAUGHT_IN_PUBLIC = [
    ("ex03_softmax", wrong_ex03_softmax, "softmax", "ignores axis"),
    ("ex03_softmax", wrong_ex03_softmax, "softmax", "hard-coded axis=0"),
    ("ex03_softmax", wrong_ex03_softmax, "softmax", "max and sum without keepdims"),
    ("ex01_vectors", wrong_ex01_vectors, "pairwise_dot", "transposed grid"),
    # issue 36: caught by logsumexp's own docstring example (a public test since then)
    ("ex03_softmax", wrong_ex03_softmax, "logsumexp", "reduces over axis 0"),
    # topic 8: the kernel mistakes the lesson warns of, seen by `course check` already
    ("ex08_flash_attention", wrong_ex08_flash_attention, "softmax_rows", "padding lanes"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "softmax_rows", "no guard"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "flash_attention_forward",
     "the accumulator is not rescaled"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "flash_attention_forward",
     "lse without the max"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "flash_attention_forward",
     "causal tiles aligned top-left"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "flash_attention_backward",
     "the D term"),
    ("ex08_flash_attention", wrong_ex08_flash_attention, "FlashAttention",
     "backward forgets is_causal"),
]


def _variant(bank, function: str, why_start: str):
    found = [v for v in bank.BANK if v.function == function and v.why.startswith(why_start)]
    assert len(found) == 1, f"expected one {function} variant starting {why_start!r}"
    return found[0]


@pytest.mark.parametrize(("topic", "bank", "function", "why"), CAUGHT_IN_PUBLIC,
                         ids=[f"{c[2]}-{c[3]}" for c in CAUGHT_IN_PUBLIC])
def test_public_tests_catch_common_mistake(slot, topic, bank, function, why):
    variant = _variant(bank, function, why)
    results = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic],
                            hidden=False)
    own = [r for r in results.values() if r.spec.exercise == function]
    assert own, f"no public tests for {topic}.{function}"
    assert any(not r.passed for r in own), (
        f"{variant.why}: this wrong {function} passes every public test of {function}")


@pytest.mark.parametrize("module", [ex01_vectors, ex03_softmax], ids=lambda m: m.__name__)
def test_docstring_examples_hold(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def _arccos_angle(u, v):
    """The textbook angle: arccos of the clipped cosine (accepted, within 1e-5°)."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    cos = np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def test_angle_between_example_holds_for_the_arccos_form_too():
    globs = {**vars(ex01_vectors), "angle_between": _arccos_angle}
    test = doctest.DocTestFinder().find(ex01_vectors.angle_between, "angle_between",
                                        globs=globs)[0]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
