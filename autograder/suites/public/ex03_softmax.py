"""Public tests of topic 3 (softmax: stability, temperature, gradients, streaming), on the
lesson's numbers.

These are the checks `course check 3` runs. The graded suite holds many more (random shapes and
axes, huge and -inf logits, tiny temperatures, float16, blocks of every size) that are not shown;
passing these is a start, not a guarantee.
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import both, expect_array, expect_float, expect_raises
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import graded

TOPIC = "ex03_softmax"
Z = np.array([1.0, 2.0, 3.0])
#: Two rows of logits (the lesson's [2, 1, 0.1] and [1, 2, 3]): softmax runs along each row.
BATCH = np.array([[2.0, 1.0, 0.1],
                  [1.0, 2.0, 3.0]])


def expect_array_or_scalar(got, expected, *, dtype: str = "float64", what: str = "result"):
    """A 0-d result may come back as a 0-d array or as a NumPy scalar (a Python float here)."""
    from autograder.authoring.checks import tolerance

    expected = np.asarray(expected)
    if expected.ndim == 0 and type(got) in (float, int):
        rtol, atol = tolerance(dtype)
        expect_float(float(got), float(expected), rtol=rtol, atol=atol, what=what)
    else:
        expect_array(got, expected, dtype=dtype, what=what)


@graded("softmax", "softmax([1, 2, 3]) is [0.090, 0.245, 0.665]")
def test_softmax_small(sub, ref):
    expect_array(*both(sub, ref, "softmax", Z))


@graded("softmax", "z + 1000 gives the same probabilities as z (no overflow)")
def test_softmax_shift(sub, ref):
    expect_array(sub.softmax(Z + 1000), ref.softmax(Z))


@graded("softmax", "temperature 10 flattens [1, 2, 3] to [0.301, 0.332, 0.367]")
def test_softmax_temperature(sub, ref):
    expect_array(*both(sub, ref, "softmax", Z, temperature=10.0))


@graded("softmax", "[[2, 1, 0.1], [1, 2, 3]] is normalised row by row (default axis=-1)",
        hint=("Reduce along the axis argument, not a fixed one: m = z.max(axis=axis, "
              "keepdims=True) and e.sum(axis=axis, keepdims=True), so the max and the sum "
              "broadcast back over that axis only (a hard-coded -1 or 0 is right for one case "
              "and wrong for the other)."))
def test_softmax_rows(sub, ref):
    expect_array(*both(sub, ref, "softmax", BATCH), what="softmax of a (2, 3) batch, default axis")


@graded("softmax", "axis=0 normalises each column of [[2, 1, 0.1], [1, 2, 3]] instead",
        hint=("Reduce along the axis argument, not a fixed one: m = z.max(axis=axis, "
              "keepdims=True) and e.sum(axis=axis, keepdims=True), so the max and the sum "
              "broadcast back over that axis only (a hard-coded -1 or 0 is right for one case "
              "and wrong for the other)."))
def test_softmax_axis0(sub, ref):
    expect_array(*both(sub, ref, "softmax", BATCH, axis=0),
                 what="softmax of a (2, 3) batch along axis 0")


@graded("softmax", "rows on very different scales: each row is shifted by its own max, "
        "not the global one",
        hint=("Reduce per slice, both the max and the sum: m = z.max(axis=axis, "
              "keepdims=True) and e.sum(axis=axis, keepdims=True). One max over the whole "
              "array shifts the row [0, 1, 2] by the other row's 1002, every exp(z − m) "
              "underflows to 0 and the row comes out 0/0; one sum over the whole array makes "
              "the rows add up to 1 together instead of each."))
def test_softmax_per_row_max(sub, ref):
    z = np.array([[0.0, 1.0, 2.0],
                  [1000.0, 1001.0, 1002.0]])
    expect_array(*both(sub, ref, "softmax", z),
                 what="softmax of [[0, 1, 2], [1000, 1001, 1002]] (default axis)")
    expect_array(*both(sub, ref, "softmax", z.T, axis=0),
                 what="softmax of [[0, 1000], [1, 1001], [2, 1002]] along axis 0")


@graded("softmax", "a fully masked row (all -inf) gives zeros, not NaN; the other row is fine",
        hint=("In an all -inf row the max is -inf and -inf − (-inf) is NaN: shift such a row "
              "by 0 instead (np.where(m == -np.inf, 0, m)), so every exp is 0, and divide by "
              "a sum of 0 as if it were 1."))
def test_softmax_fully_masked_row(sub, ref):
    z = np.array([[0.0, -np.inf],
                  [-np.inf, -np.inf]])
    expect_array(sub.softmax(z), np.array([[1.0, 0.0], [0.0, 0.0]]),
                 what="softmax of [[0, -inf], [-inf, -inf]]")
    expect_array(sub.softmax(np.full(3, -np.inf)), np.zeros(3),
                 what="softmax of [-inf, -inf, -inf]")


@graded("softmax", "float32 logits give float32 probabilities (not float64)",
        hint=("Keep the input's float dtype: np.asarray(z, dtype=float) turns float32 into "
              "float64 (np.exp and the division keep float32 as it is). If the message is "
              "about values, not the dtype, the mistake is the one the tests above name."))
def test_softmax_float32(sub, ref):
    z = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.1]], dtype=np.float32)
    expect_array(sub.softmax(z), ref.softmax(z.astype(np.float64)), dtype="float32",
                 what="softmax of float32 [[1, 2, 3], [2, 1, 0.1]]")


@graded("logsumexp", "logsumexp([0, 1000]) is 1000, not inf")
def test_logsumexp_large(sub, ref):
    z = np.array([0.0, 1000.0])
    expect_array_or_scalar(sub.logsumexp(z), ref.logsumexp(z))


@graded("log_softmax", "log_softmax([0, 1000]) is [-1000, 0], not [-inf, 0]")
def test_log_softmax_far_apart(sub, ref):
    z = np.array([0.0, 1000.0])
    expect_array(sub.log_softmax(z), np.array([-1000.0, 0.0]))


@graded("softmax_jacobian", "p = [0.5, 0.5] gives [[0.25, -0.25], [-0.25, 0.25]]")
def test_jacobian_half(sub, ref):
    expect_array(sub.softmax_jacobian(np.array([0.5, 0.5])),
                 np.array([[0.25, -0.25], [-0.25, 0.25]]))


@graded("online_softmax", "blocks of 2 over [2, 1, 5, -inf, 3] equal softmax")
def test_online_softmax_blocks(sub, ref):
    z = np.array([2.0, 1.0, 5.0, -np.inf, 3.0])
    expect_array(sub.online_softmax(z, 2), ref.softmax(z))


@graded("online_softmax", "block_size 0 raises ValueError")
def test_online_softmax_zero_block(sub, ref):
    expect_raises("ValueError", sub.online_softmax, Z, 0, what="block_size 0")


@graded("online_attention", "the toy query attends almost only to k2: [0, 1]")
def test_online_attention_toy(sub, ref):
    q1 = np.array([3.0, -3.0])
    K = np.array([[-3.0, 3.0], [1.0, 1.0]])
    V = np.eye(2)
    expect_array(sub.online_attention(q1, K, V, 1), ref.softmax(K @ q1 / np.sqrt(2)) @ V)


@graded("online_attention", "random q, K (10, 4), V (10, 3) in blocks of 3 equal softmax(qKᵀ/√d)V")
def test_online_attention_random(sub, ref):
    rng = np.random.default_rng(0)
    q, K, V = rng.normal(size=4), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
    expect_array(sub.online_attention(q, K, V, 3), ref.softmax(K @ q / 2.0) @ V)


add_docstring_tests(globals())
