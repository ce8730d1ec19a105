"""The second edition's corrections (issue 13): each wrong sentence stays gone, and each
corrected claim that is a fact about the maths, not a number of prose, is checked here
against the solutions. The numbers the corrections quote are ``Claim``s in test_numbers.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from solutions import ex01_vectors as ex1
from solutions import ex04_svd_lora as ex4
from solutions import ex05_attention as ex5
from solutions import ex06_rotation_norm as ex6
from solutions import ex07_matrix_properties as ex7

from .test_numbers import (
    ALTERNATING,
    L1,
    L2,
    L4,
    L5,
    L6,
    L7,
    L8,
    W_nonnormal,
    cat,
    dog,
    lesson_text,
    toy_attention,
    toy_qkv,
)

# (lesson, a phrase of the first edition's wrong sentence, what was wrong with it)
RETIRED = [
    (L2, "ignores token 2", "a score of 0 becomes 0.999997 of token 1's weight"),
    (L2, "every token would match itself best", "Cauchy–Schwarz: [1,0]·[2,0.1] = 2 > 1"),
    (L1, "can win the softmax for every query", "a long key wins only where it is aligned"),
    (L6, "whatever their direction", "a long key wins only where it is aligned"),
    (L1, "is exactly what *QK-norm*", "RMSNorm gives length √d_h and a learned gain"),
    (L1, "$O(1)$ work", "the lookup copies d numbers: O(d), independent of V"),
    (L7, "$W_{hh}$ set the trend", "a product of varying Jacobians is bounded by σ_max, not ρ"),
    (L4, "right-hand picture", "the two spectra share one plot"),
    (L2, "GPT-2 uses GELU,", "GPT-2 computes the tanh approximation"),
    (L6, "GPT-NeoX and LLaMA)", "Meta's LLaMA code pairs adjacent dimensions"),
    (L6, "permute the rows of $W_Q$", "in the course's convention the columns are permuted"),
    (L6, "shuffle the tokens and every score moves with them.", "a causal mask sees order"),
    (L7, "nearly all of float16", "1.0001 is 1.0 in float16: every digit is lost"),
    (L7, "$w$ positions per layer", "each layer adds w − 1 positions"),
    (L5, "$S = Q K^\\top$", "S is the number of keys in lesson 5"),
    (L2, "the lookup does it for free", "the lookup is O(d) per token"),
    # third edition (issue 39)
    (L8, "are left out: there are", "exponentials run on the SFUs: half the matmul time"),
    (L8, "(FlashAttention-2, Dao, 2023): one extra", "recomputation is FlashAttention-1's"),
    (L8, "need power-of-two sides of at least 16", "only tl.dot needs 16; tl.arange any 2^k"),
    (L4, "keeps the update's size roughly independent", "alpha/r shrinks it; rsLoRA: alpha/sqrt r"),
    (L7, "a product of a hundred such factors is pinned", "only when eps is about 1/depth"),
    (L1, "between two embeddings is far beyond", "1/sqrt d holds for isotropic vectors only"),
    (L6, "OLMo-2 and Gemma-3 the order", "OLMo 2 normalises the whole projection"),
    (L6, "without making activations grow or fade", "rotated q, k never enter the residual"),
    (L5, "The cost is the same as one head", "same FLOPs, h times the scores"),
    (L7, "as some texts do", "an aside correcting a source the student never saw"),
    (L1, "you may meet 28.9°", "an aside correcting a source the student never saw"),
    (L1, "sometimes quoted for GPT-4", "an aside correcting a source the student never saw"),
]


@pytest.mark.parametrize("lesson, phrase, why", RETIRED, ids=[r[1] for r in RETIRED])
def test_retired_sentence_stays_gone(lesson, phrase, why):
    assert phrase not in lesson_text(lesson), f"{lesson} again says {phrase!r} ({why})"


def test_longer_key_sharpens_both_ways():
    """Lesson 1: scaling a key scales its scores, so it wins only for aligned queries."""
    keys = np.stack([cat, 3 * dog])  # dog made long
    weights = torch.softmax(torch.tensor(ex1.pairwise_dot(np.stack([dog, -dog]), keys)), -1)
    assert weights[0, 1] > 0.5 > weights[1, 1]  # wins for dog, loses for -dog


def test_adding_100_to_a_row_changes_no_weight():
    """Lesson 2's check-yourself: only differences within a row matter."""
    from solutions import ex02_projections as ex2
    from solutions import ex03_softmax as ex3

    from .test_numbers import toy_qk

    row = ex2.attention_scores(*toy_qk())[0]
    assert np.allclose(ex3.softmax(row + 100.0), ex3.softmax(row), rtol=1e-9, atol=0)


def test_rms_norm_length_is_sqrt_d():
    """Lesson 1 and 6: RMSNorm with unit gain gives length √d, not 1."""
    x = np.random.default_rng(0).normal(size=(5, 64))
    lengths = np.linalg.norm(ex6.rms_norm(x, np.ones(64)), axis=-1)
    assert np.allclose(lengths, 8.0, rtol=1e-5)


def test_qk_norm_then_rope_equals_rope_then_norm_only_with_unit_gain():
    """Lesson 6: RoPE keeps the RMS, so the order matters only through the learned gain."""
    rng = np.random.default_rng(1)
    q, pos = rng.normal(size=(4, 8)), np.arange(4)
    ones, gain = np.ones(8), rng.uniform(0.5, 2.0, size=8)
    assert np.allclose(
        ex6.apply_rope(ex6.rms_norm(q, ones), pos), ex6.rms_norm(ex6.apply_rope(q, pos), ones)
    )
    assert not np.allclose(
        ex6.apply_rope(ex6.rms_norm(q, gain), pos), ex6.rms_norm(ex6.apply_rope(q, pos), gain)
    )


def test_nonnormal_counterexample():
    """Lesson 7: ρ < 1 and W^50 vanishes, yet alternating tanh factors explode the product,
    which still respects the bound σ_max^T."""
    rho, sigma = ex7.spectral_radius(W_nonnormal), np.linalg.norm(W_nonnormal, 2)
    assert rho < 1 < sigma
    linear = np.linalg.norm(ex7.bptt_jacobian(W_nonnormal, np.zeros((50, 2))), 2)
    exploded = np.linalg.norm(ex7.bptt_jacobian(W_nonnormal, ALTERNATING), 2)
    assert linear < 0.01 and exploded > 1e24
    assert exploded <= sigma**50
    assert np.all(1 - np.tanh(ALTERNATING) ** 2 <= 1)  # every tanh factor only shrinks


def test_sigma_max_below_one_always_vanishes():
    """Lesson 7: σ_max < 1 is enough, whatever the tanh factors do."""
    rng = np.random.default_rng(2)
    W = rng.normal(size=(6, 6))
    W *= 0.95 / np.linalg.norm(W, 2)
    for _ in range(5):
        J = ex7.bptt_jacobian(W, rng.normal(scale=3.0, size=(50, 6)))
        assert np.linalg.norm(J, 2) <= 0.95**50 * (1 + 1e-9)


def test_float16_loses_every_digit_of_the_example():
    """Lesson 7: 1.0001 is 1.0 in float16, so the stored matrix is singular."""
    assert np.float16(1.0001) == np.float16(1.0)
    stored = np.array([[1, 1], [1, 1.0001]], dtype=np.float16).astype(np.float64)
    assert np.linalg.matrix_rank(stored) == 1


def test_kv_cache_reproduces_the_causal_rows():
    """Lesson 5's worked example: step-by-step decoding with a cache equals causal attention."""
    Q, K, V = (torch.tensor(a) for a in toy_qkv())
    step1 = ex5.scaled_dot_product_attention(Q[:1], K[:1], V[:1])
    step2 = ex5.scaled_dot_product_attention(Q[1:], K, V, mask=ex5.causal_mask(1, 2))
    assert torch.allclose(torch.cat([step1, step2]), toy_attention(is_causal=True))
    assert not torch.allclose(toy_attention(is_causal=True), toy_attention())  # the mask acts


def test_padding_mask_broadcasts_from_b_1_1_s():
    """Lesson 5: a (B, 1, 1, S) key mask hides the same keys from every head and query."""
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 6)
    keep = torch.tensor([[True, True, True, False, False], [True] * 5])  # (B, S)
    out = ex5.scaled_dot_product_attention(q, k, v, mask=keep.view(2, 1, 1, 5))
    short = ex5.scaled_dot_product_attention(q[:1], k[:1, :, :3], v[:1, :, :3])
    assert torch.allclose(out[:1], short, atol=1e-6)  # as if the padding were not there


def test_lora_b_gets_the_first_gradient():
    """Lesson 4: with B = 0, A's first gradient is zero but B's is not."""
    torch.manual_seed(0)
    layer = ex4.LoRALinear(torch.nn.Linear(16, 12, bias=False), r=4, alpha=8)
    layer(torch.randn(3, 16)).pow(2).sum().backward()
    assert torch.count_nonzero(layer.lora_A.grad) == 0
    assert torch.count_nonzero(layer.lora_B.grad) > 0


def test_rope_score_depends_on_the_offset_only():
    """Lesson 6's numeric example: positions (2, 5) and (5, 8) give the same score."""
    from .test_numbers import rope_score

    assert rope_score(2, 5) == pytest.approx(rope_score(5, 8)) == pytest.approx(np.cos(3))
    assert rope_score(2, 5) != pytest.approx(rope_score(2, 6))


def test_headings_hold_no_raw_tex():
    """Headings feed the table of contents and search, where maths is not typeset: a heading
    with `d_k` or `$…$` shows the raw source there."""
    from .conftest import LESSONS

    raw = []
    for lesson in LESSONS:
        for line in lesson.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                title = line.split("{#")[0]
                if any(mark in title for mark in ("_", "$", "\\")):
                    raw.append(f"{lesson.name}: {title.strip()}")
    assert not raw, raw


def test_float16_score_overflows_from_32():
    """Lesson 5's check-yourself: 64 c² leaves float16's range first at c = 32."""
    assert torch.isfinite(torch.tensor(64.0 * 31**2).half())
    assert torch.isinf(torch.tensor(64.0 * 32**2).half())


def test_random_residual_branches_grow_like_one_plus_eps_squared():
    """Lesson 7: N residual layers with random branches of size eps multiply a vector's expected
    squared length by about (1 + eps^2)^N, far inside the worst-case (1 + eps)^(2N); with
    eps = 1/sqrt(N) that stays below e at every depth (GPT-2's 1/sqrt(N) initialisation)."""
    rng = np.random.default_rng(0)
    d, N, eps = 128, 100, 0.05
    lengths = []
    for _ in range(20):
        y = rng.normal(size=d)
        y /= np.linalg.norm(y)
        for _ in range(N):
            y = y + eps * (rng.normal(size=(d, d)) / np.sqrt(d)) @ y
        lengths.append(float(y @ y))
    assert np.mean(lengths) == pytest.approx((1 + eps**2) ** N, rel=0.1)
    assert np.mean(lengths) < 0.01 * (1 + eps) ** (2 * N)
    assert all((1 + 1 / n) ** n < np.e for n in range(1, 10_000))
