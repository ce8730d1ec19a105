"""Public tests of topic 2 (projections, shapes, the matmuls of a transformer), on the lesson's
numbers.

These are the checks `course check 2` runs. The graded suite holds many more (random shapes,
batches, dtypes, errors) that are not shown; passing these is a start, not a guarantee.
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import both, expect_array, expect_equal, expect_raises, fail
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import describe, graded

TOPIC = "ex02_projections"

# The toy example: two tokens and the query/key projections of the lesson.
X = np.array([[1.0, 0.0, 2.0, -1.0],    # x1
              [0.0, 1.0, 1.0, 1.0]])    # x2
W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0], [0.0, 1.0]])
W_K = np.array([[0.0, 1.0], [1.0, 0.0], [-1.0, 1.0], [1.0, 0.0]])
W_V = np.eye(4)[:, :3]
# Seed 003's down projection, written for row vectors: (3,) @ (3, 2) -> (2,).
W_DOWN = np.array([[0.4, 0.3], [0.5, 0.1], [0.2, 0.6]])
V_3D = np.array([0.51, 0.29, 0.55])

MATMUL_FIELDS = ["name", "a_shape", "b_shape", "out_shape", "flops"]


@graded("linear", "projecting [0.51, 0.29, 0.55] down to 2-D gives [0.459, 0.512]")
def test_linear_down(sub, ref):
    expect_array(sub.linear(V_3D, W_DOWN), np.array([0.459, 0.512]))


@graded("linear", "x (2, 4) times W (3, 2) raises ValueError")
def test_linear_mismatch(sub, ref):
    expect_raises("ValueError", sub.linear, X, W_DOWN, what="x (2, 4) and W (3, 2)")


@graded("project_qkv", "the toy example: q1 = [3, -3] and k2 = [1, 1]")
def test_project_qkv_toy(sub, ref):
    out = sub.project_qkv(X, W_Q, W_K, W_V)
    if not isinstance(out, list) or len(out) != 3:
        fail(f"expected a tuple (Q, K, V), got {describe(out)}")
    Q, K, V = out
    expect_array(Q, np.array([[3.0, -3.0], [1.0, 1.0]]), what="Q")
    expect_array(K, np.array([[-3.0, 3.0], [1.0, 1.0]]), what="K")
    expect_array(V, X[:, :3], what="V")


@graded("attention_scores", "the toy score grid: score(q1, k2) = 0/√2 = 0")
def test_attention_scores_toy(sub, ref):
    Q = np.array([[3.0, -3.0], [1.0, 1.0]])
    K = np.array([[-3.0, 3.0], [1.0, 1.0]])
    expect_array(sub.attention_scores(Q, K), np.array([[-18.0, 0.0], [0.0, 2.0]]) / np.sqrt(2))


@graded("compose", "down then up (3 → 2 → 3) is one 3×3 matrix of rank 2")
def test_compose_down_up(sub, ref):
    M = sub.compose(W_DOWN, W_DOWN.T)
    expect_array(M, W_DOWN @ W_DOWN.T)
    if np.linalg.matrix_rank(M) != 2:
        fail("the composed 3×3 matrix should have rank 2: the lost dimension stays lost")


@graded("compose", "matrices that do not chain raise ValueError")
def test_compose_mismatch(sub, ref):
    expect_raises("ValueError", sub.compose, W_DOWN, W_DOWN, what="W (3, 2) then W (3, 2)")


@graded("gelu", "exact GELU of [-1, 0, 1, 2] is [-0.1587, 0, 0.8413, 1.9545]")
def test_gelu_exact(sub, ref):
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    expect_array(*both(sub, ref, "gelu", x))


@graded("gelu", "the tanh approximation of [-1, 0, 1, 2], and an unknown name raises ValueError")
def test_gelu_tanh(sub, ref):
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    expect_array(*both(sub, ref, "gelu", x, approximate="tanh"))
    expect_raises("ValueError", sub.gelu, x, approximate="fast", what='approximate="fast"')


@graded("feed_forward", "with identity weights and zero biases the block is just GELU")
def test_feed_forward_identity(sub, ref):
    cat_dog = np.array([[0.8, 0.3], [0.6, 0.7]])
    eye, zeros = np.eye(2), np.zeros(2)
    expect_array(sub.feed_forward(cat_dog, eye, zeros, eye, zeros), ref.gelu(cat_dog))


@graded("feed_forward", "a (5, 8) input through d_ff = 32 and back gives (5, 8)")
def test_feed_forward_shape(sub, ref):
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(5, 8))
    W1, b1 = rng.normal(size=(8, 32)) * 0.3, rng.normal(size=32)
    W2, b2 = rng.normal(size=(32, 8)) * 0.3, rng.normal(size=8)
    expect_array(*both(sub, ref, "feed_forward", Xr, W1, b1, W2, b2))


# The docstring's order (data flow: out_proj after aggregate); docs/design/exercise-api.md's
# sentence can also be
# read with out_proj listed beside the other (n, d)×(d, d) projections. Both are accepted.
ORDERS = (
    ["embed", "q_proj", "k_proj", "v_proj", "scores", "aggregate", "out_proj", "ffn_up",
     "ffn_down", "unembed"],
    ["embed", "q_proj", "k_proj", "v_proj", "out_proj", "scores", "aggregate", "ffn_up",
     "ffn_down", "unembed"],
)


def matmul_table(sub, *config):
    """``transformer_matmuls(*config)`` read back with each Matmul's field names.

    The wire format sends tuples as lists, so a trusted probe in the worker turns each NamedTuple
    into ``{"type": ..., "fields": {...}}``; errors are reported as the function's own.
    """
    return sub.probe("with_fields", TOPIC, "transformer_matmuls", *config)


def check_matmuls(got, want, what):
    """``got``: the probe's reading of a list[Matmul]; ``want``: the reference list."""
    if not isinstance(got, list) or len(got) != len(want):
        fail(f"{what}: expected a list of {len(want)} Matmul, got {describe(got)}")
    rows = []
    for i, g in enumerate(got):
        if not isinstance(g, dict) or list(g.get("fields", {})) != MATMUL_FIELDS:
            fail(f"{what}: entry {i} should be a Matmul NamedTuple with fields "
                 f"{', '.join(MATMUL_FIELDS)}; got {describe(g)}")
        rows.append(g["fields"])
    names = [r["name"] for r in rows]
    if names not in ORDERS:
        fail(f"{what}: the products should be listed as {', '.join(ORDERS[0])}; got {names}")
    by_name = {r["name"]: r for r in rows}
    for w in want:
        g = by_name[w.name]
        for field in ("a_shape", "b_shape", "out_shape"):
            shape = g[field]
            if not isinstance(shape, list) or not all(type(s) is int for s in shape):
                fail(f"{what}: {w.name}.{field} should be a tuple of ints, got {describe(shape)}")
            expect_equal(shape, list(getattr(w, field)), what=f"{what}: {w.name}.{field}")
        expect_equal(g["flops"], w.flops, what=f"{what}: {w.name}.flops")


@graded("transformer_matmuls", "GPT-2 small: ten Matmul rows with the lesson's shapes and FLOPs")
def test_transformer_matmuls_gpt2(sub, ref):
    got = matmul_table(sub, 768, 12, 3072, 50257, 1024)
    check_matmuls(got, ref.transformer_matmuls(768, 12, 3072, 50257, 1024), "GPT-2 small")


@graded("transformer_matmuls", "d_model 768 with 5 heads raises ValueError")
def test_transformer_matmuls_heads(sub, ref):
    expect_raises("ValueError", sub.transformer_matmuls, 768, 5, 3072, 50257, 1024,
                  what="d_model 768, n_heads 5")


add_docstring_tests(globals())
