"""Public tests of topic 6 (rotation, RoPE, RMSNorm, LayerNorm, QK-norm) on the lesson's numbers."""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import expect_array, expect_raises, fail
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import describe, graded

TOPIC = "ex06_rotation_norm"
CAT = np.array([0.8, 0.3])
X4 = np.array([1.0, 2.0, 3.0, 4.0])  # the lesson's RMSNorm / LayerNorm example


@graded("rotation_matrix", "a quarter turn takes cat [0.8, 0.3] to [-0.3, 0.8]")
def test_rotation_quarter_turn(sub, ref):
    R = sub.rotation_matrix(np.pi / 2)
    expect_array(R, ref.rotation_matrix(np.pi / 2), what="rotation_matrix(pi/2)")
    expect_array(R @ CAT, np.array([-0.3, 0.8]), what="R @ cat")


@graded("rope_angles", "64 rotary dims give 32 frequencies; pair 0 turns one radian per position")
def test_rope_angles_seed_head(sub, ref):
    pos = np.arange(4)
    got = sub.rope_angles(pos, 64)
    expect_array(got, ref.rope_angles(pos, 64), what="rope_angles(arange(4), 64)")


@graded("apply_rope", "cat at position 1 (d = 2) turns counter-clockwise by one radian")
def test_apply_rope_cat(sub, ref):
    x = CAT[None, :]  # (n=1, d=2)
    got = sub.apply_rope(x, np.array([1]))
    expect_array(got, np.array([[0.8 * np.cos(1) - 0.3 * np.sin(1),
                                 0.3 * np.cos(1) + 0.8 * np.sin(1)]]), what="apply_rope(cat, [1])")


@graded("apply_rope", "half-split pairs: dimension i turns with dimension i + d/2")
def test_apply_rope_half_split(sub, ref):
    x = np.array([[1.0, 0.0, 0.0, 0.0]])  # (n=1, d=4): only dimension 0 is set
    pos = np.array([1])
    got = sub.apply_rope(x, pos)
    expect_array(got, ref.apply_rope(x, pos), what="apply_rope(e_0, [1]) with d = 4")


@graded("apply_rope", "64 of 256 dims rotate, the other 192 pass through; scores depend on m - n")
def test_apply_rope_partial_relative(sub, ref):
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 1, 256))  # (n=1, d_h=256) each
    q7 = sub.apply_rope(q, np.array([7]), 64)
    expect_array(q7, ref.apply_rope(q, np.array([7]), 64), what="apply_rope(q, [7], 64)")
    rotated = {}
    for name, v, p in (("q", q, 5), ("k", k, 3), ("q", q, 12), ("k", k, 10)):
        got = sub.apply_rope(v, np.array([p]), 64)
        expect_array(got, ref.apply_rope(v, np.array([p]), 64),
                     what=f"apply_rope({name}, [{p}], 64)")
        rotated[name, p] = got
    s1 = rotated["q", 5] @ rotated["k", 3].T
    s2 = rotated["q", 12] @ rotated["k", 10].T
    expect_array(s2, s1, what="score at positions (12, 10) vs (5, 3)")


@graded("rms_norm", "[1, 2, 3, 4] becomes [0.365, 0.730, 1.095, 1.461]")
def test_rms_norm_lesson(sub, ref):
    got = sub.rms_norm(X4, np.ones(4), eps=0.0)
    expect_array(got, X4 / np.sqrt(7.5), what="rms_norm([1, 2, 3, 4], ones, eps=0)")


@graded("layer_norm", "[1, 2, 3, 4] becomes [-1.342, -0.447, 0.447, 1.342] (biased variance)")
def test_layer_norm_lesson(sub, ref):
    got = sub.layer_norm(X4, np.ones(4), np.zeros(4), eps=0.0)
    expect_array(got, (X4 - 2.5) / np.sqrt(1.25), what="layer_norm([1, 2, 3, 4], ones, zeros)")


@graded("qk_norm", "queries and keys each get RMSNorm over the head dim, with their own gains")
def test_qk_norm_small(sub, ref):
    rng = np.random.default_rng(1)
    q = 3.0 * rng.standard_normal((2, 3, 8))  # (h, n, d_h)
    k = 0.1 * rng.standard_normal((2, 4, 8))  # (h, n_k, d_h)
    wq, wk = rng.uniform(0.5, 1.5, (2, 8))
    got = sub.qk_norm(q, k, wq, wk)
    if not isinstance(got, list) or len(got) != 2:
        fail(f"qk_norm should return a pair (q_normed, k_normed), got {describe(got)}")
    want_q, want_k = ref.qk_norm(q, k, wq, wk)
    expect_array(got[0], want_q, what="normalised q")
    expect_array(got[1], want_k, what="normalised k")


@graded("rope_angles", "an odd rotary_dim raises ValueError (dimensions rotate in pairs)")
def test_rope_angles_odd(sub, ref):
    expect_raises("ValueError", sub.rope_angles, np.arange(4), 5, what="rotary_dim = 5")



add_docstring_tests(globals())
