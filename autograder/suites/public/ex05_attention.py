"""Public tests of topic 5 (attention on any device), on the lesson's numbers.

Inputs are built as tensors in the worker; expected values come from the reference run here on
float64 copies of the same numbers.
"""

from __future__ import annotations

import numpy as np
import torch

from autograder.authoring.checks import expect_raises, expect_tensor, fail
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import graded
# The suites' old local names: a Hypothesis test's examples are derived from its source
# (derandomised), so the test bodies keep their text and their examples.
from autograder.authoring.strategies import as_torch as _torch, tensor as _t

TOPIC = "ex05_attention"

#: cat = [0.8, 0.3] and dog = [0.6, 0.7] as queries and keys (lesson 1's vectors)
CAT_DOG = np.array([[0.8, 0.3], [0.6, 0.7]])




@graded("causal_mask", "2 new queries over 4 cached keys: the last two rows of the triangle")
def test_causal_mask_kv_cache(sub, ref):
    expected = np.array([[True, True, True, False], [True, True, True, True]])
    expect_tensor(sub.causal_mask(2, 4), expected, dtype="bool")


@graded("causal_mask", "3 queries over 3 keys: lower triangular")
def test_causal_mask_square(sub, ref):
    expect_tensor(sub.causal_mask(3, 3), np.tril(np.ones((3, 3), bool)), dtype="bool")


@graded("causal_mask", "more queries than keys raises ValueError")
def test_causal_mask_too_many_queries(sub, ref):
    expect_raises("ValueError", sub.causal_mask, 5, 2, what="n_q = 5, n_k = 2")


@graded("scaled_dot_product_attention",
        "cat and dog, causal, v = I: rows [1, 0] and [0.4717, 0.5283]")
def test_sdpa_cat_dog_causal(sub, ref):
    got = sub.scaled_dot_product_attention(_t(CAT_DOG), _t(CAT_DOG), _t(np.eye(2)), is_causal=True)
    expected = ref.scaled_dot_product_attention(_torch(CAT_DOG), _torch(CAT_DOG),
                                                torch.eye(2, dtype=torch.float64), is_causal=True)
    expect_tensor(got, expected.numpy(), dtype="float64")


@graded("scaled_dot_product_attention", "a fully masked row gives zeros, not NaN")
def test_sdpa_fully_masked_row(sub, ref):
    mask = np.array([[False, False], [True, True]])
    got = sub.scaled_dot_product_attention(_t(CAT_DOG), _t(CAT_DOG), _t(np.eye(2)),
                                           mask=_t(mask, "bool"))
    expected = ref.scaled_dot_product_attention(_torch(CAT_DOG), _torch(CAT_DOG),
                                                torch.eye(2, dtype=torch.float64),
                                                mask=_torch(mask))
    expect_tensor(got, expected.numpy(), dtype="float64")


@graded("split_heads", "GPT-2 small: (2, 10, 768) in 12 heads gives (2, 12, 10, 64)")
def test_split_heads_gpt2(sub, ref):
    x = np.random.default_rng(5).standard_normal((2, 10, 768)).astype(np.float32)
    expected = ref.split_heads(torch.from_numpy(x), 12).numpy()
    expect_tensor(sub.split_heads(_t(x, "float32"), 12), expected, dtype="float32")


@graded("merge_heads", "merging the heads of a split (2, 10, 768) gives it back")
def test_merge_heads_round_trip(sub, ref):
    x = np.random.default_rng(6).standard_normal((2, 10, 768)).astype(np.float32)
    heads = ref.split_heads(torch.from_numpy(x), 12).contiguous().numpy()
    expect_tensor(sub.merge_heads(_t(heads, "float32")), x, dtype="float32")


def _mha_state(rng, d: int) -> dict:
    state = {}
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        state[f"{name}.weight"] = rng.standard_normal((d, d)) / np.sqrt(d)
        state[f"{name}.bias"] = rng.standard_normal(d) * 0.1
    return state


@graded("MultiHeadAttention",
        "d_model 64 in 4 heads, causal, trusted weights: matches the reference")
def test_mha_causal(sub, ref):
    rng = np.random.default_rng(7)
    d, h = 64, 4
    state = _mha_state(rng, d)
    mha = sub.new("MultiHeadAttention", d, h).call("double", keep=True)
    names = set(mha.parameters())
    if not set(state) <= names:
        fail(f"expected nn.Linear layers q_proj, k_proj, v_proj, o_proj; parameters are "
             f"{sorted(names)}")
    mha.probe("load_state", {k: _t(v) for k, v in state.items()})
    x = rng.standard_normal((2, 6, d))
    layer = ref.MultiHeadAttention(d, h).double()
    with torch.no_grad():
        for name, p in layer.named_parameters():
            p.copy_(torch.from_numpy(state[name]))
        expected = layer(torch.from_numpy(x), is_causal=True).numpy()
    expect_tensor(mha(_t(x), is_causal=True), expected, dtype="float64")


add_docstring_tests(globals())
