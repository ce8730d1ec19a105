"""Answers that compute nothing earn nothing.

Red team, fourth round: every public function of a topic wrapped to run the reference (so its
``ValueError``s are right) and then answer zeros, ones or its own input in the reference's
shape and dtype (:mod:`tests.no_computation`) scored 2.02 / 100 across the course, from
tests such an answer passes that were not marked ``trivial``: each opened its exercise's gate
(autograder.grading.runner.gate_error_rules), and the error rules and the trivial tests counted
too. Every such test is now marked, and this test finds any new one: each function's tests
must earn nothing under each answer. Classes keep the reference's ``__init__`` (building the
layers is work), so only their functions are held to it; the red team's own class, which
builds nothing and hands its input back, is graded on its own.
"""

from __future__ import annotations

import pytest

from autograder import catalogue
from tests import no_computation
from tests.helpers import grade_sources, with_replacement

pytestmark = pytest.mark.slow

#: Topic 8's kernels are launched by its tests' own checks, and grading it costs seconds:
#: its functions pass nothing without a kernel (measured when this test was written).
TOPICS = [t for t in catalogue.topic_modules() if t != "ex08_flash_attention"]

#: The red team's MultiHeadAttention: no layers at all, its input handed back.
EMPTY_MHA = '''
class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        torch.nn.Module.__init__(self)
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")

    def forward(self, x, mask=None, is_causal=False):
        return x
'''


def _earned(results: dict, keep) -> dict[str, list[str]]:
    """Per exercise that ``keep`` accepts, the tests that kept their points."""
    out: dict[str, list[str]] = {}
    for name, r in results.items():
        if r.passed and keep(r.spec.exercise):
            out.setdefault(r.spec.exercise, []).append(name)
    return out


@pytest.mark.parametrize("mode", no_computation.MODES)
@pytest.mark.parametrize("topic", TOPICS)
def test_a_function_that_computes_nothing_earns_nothing(slot, topic, mode):
    results = grade_sources(slot, {topic: no_computation.source(topic, mode)}, [topic])
    assert results
    earned = _earned(results, lambda exercise: not exercise[:1].isupper())
    assert not earned, f"{mode} answers kept points: {earned}"


def test_a_layer_without_layers_earns_nothing(slot):
    topic = "ex05_attention"
    results = grade_sources(slot, {topic: with_replacement(topic, EMPTY_MHA)}, [topic])
    earned = _earned(results, lambda exercise: exercise == "MultiHeadAttention")
    assert not earned, earned
