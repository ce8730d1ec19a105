"""Hidden tests of topic 3 (softmax: stability, temperature, gradients, streaming).

Random logits of several shapes and axes, adversarial ones (z + 1000, 1e308, all -inf slices,
temperatures from 1e-300 to 1e300, float16 near 65504), every error rule of
docs/design/exercise-api.md, dtype rules
and hypothesis properties (shift invariance, online == offline for every block size). Messages
describe generated inputs by shape only.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.authoring.checks import both, expect_array, expect_raises, expect_rule
from autograder.authoring.suite import graded
from autograder.driver.errors import StudentException
from autograder.suites.public.ex03_softmax import expect_array_or_scalar

TOPIC = "ex03_softmax"
INF = np.inf

# ------------------------------------------------------------------ shared strategies

SEEDS = st.integers(0, 2**16)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)
#: Logits: finite floats of moderate size, sometimes with -inf entries (masked positions).
LOGITS = st.floats(-30, 30, allow_nan=False, allow_infinity=False)
MASKED_LOGITS = st.one_of(LOGITS, LOGITS, LOGITS, st.just(-INF))
#: A constant added to every logit: the answer must not change (softmax) or shift (logsumexp).
SHIFTS = st.sampled_from([-1000.0, -50.0, 0.0, 100.0, 1000.0, 1e4])


def logit_arrays(elements: st.SearchStrategy = LOGITS) -> st.SearchStrategy[np.ndarray]:
    return SHAPES.flatmap(lambda s: hnp.arrays(np.float64, s, elements=elements))


def _axis_choices(ndim: int) -> st.SearchStrategy[int]:
    return st.integers(-ndim, ndim - 1)


def _random_logits(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 3.0):
    return rng.normal(size=shape) * scale


# ------------------------------------------------------------------ softmax


@graded("softmax", "random logits of shapes (5,), (3, 7), (2, 3, 4) along the last axis",
        hint=("Reduce along the axis argument, not a fixed one: m = z.max(axis=axis, "
              "keepdims=True) and e.sum(axis=axis, keepdims=True), so the max and the sum "
              "broadcast back over that axis only (a hard-coded -1 or 0 is right for one case "
              "and wrong for the other)."))
def test_softmax_random(sub, ref):
    rng = np.random.default_rng(2101)
    for shape in [(5,), (3, 7), (2, 3, 4), (1, 1)]:
        z = _random_logits(rng, shape)
        expect_array(*both(sub, ref, "softmax", z), what=f"softmax of shape {shape}")


@graded("softmax", "other axes: axis=0, axis=1 and axis=-2 of a (3, 4, 5) array",
        hint=("Reduce along the axis argument, not a fixed one: m = z.max(axis=axis, "
              "keepdims=True) and e.sum(axis=axis, keepdims=True), so the max and the sum "
              "broadcast back over that axis only (a hard-coded -1 or 0 is right for one case "
              "and wrong for the other)."))
def test_softmax_axes(sub, ref):
    rng = np.random.default_rng(2102)
    z = _random_logits(rng, (3, 4, 5))
    for axis in (0, 1, -2):
        expect_array(*both(sub, ref, "softmax", z, axis=axis),
                     what=f"softmax of shape (3, 4, 5) along axis {axis}")
    w = _random_logits(rng, (4, 6))
    expect_array(*both(sub, ref, "softmax", w, axis=0),
                 what="softmax of shape (4, 6) along axis 0")


@graded("softmax", "huge logits (±1e4, 1e308, rows on very different scales) do not overflow")
def test_softmax_huge(sub, ref):
    cases = [
        np.array([1000.0, 1001.0, 1002.0]),
        np.array([[0.0, 1.0, 2.0], [5000.0, 5001.0, 4990.0], [-8000.0, -7999.0, -8000.5]]),
        np.array([1e308, -1e308, 0.0, 1e308]),
        np.array([[1e4, -1e4], [3.0, 3.0]]),
    ]
    for z in cases:
        expect_array(*both(sub, ref, "softmax", z),
                     what=f"softmax of huge logits, shape {z.shape}")


@graded("softmax", "shift invariance: softmax(z + c) = softmax(z), c in [-1000, 1e4] (hypothesis)")
@given(z=logit_arrays(), c=SHIFTS)
def test_softmax_shift_property(sub, ref, z, c):
    expect_array(sub.softmax(z + c), ref.softmax(z + c),
                 what=f"softmax of generated logits of shape {z.shape} plus a constant")


@graded("softmax", "temperatures 0.5, 2.5 and 100 on random logits, along any axis")
def test_softmax_temperature(sub, ref):
    rng = np.random.default_rng(2103)
    z = _random_logits(rng, (3, 6))
    for T in (0.5, 2.5, 100.0):
        for axis in (-1, 0):
            expect_array(*both(sub, ref, "softmax", z, axis=axis, temperature=T),
                         what=f"softmax of shape (3, 6) along axis {axis} with temperature {T}")


@graded("softmax", "small temperatures (1e-3, 1e-300) give the argmax without overflow or NaN")
def test_softmax_small_temperature(sub, ref):
    rng = np.random.default_rng(2104)
    z = _random_logits(rng, (4, 5))
    for T in (1e-3, 1e-300):
        expect_array(*both(sub, ref, "softmax", z, temperature=T),
                     what=f"softmax of shape (4, 5) with temperature {T:g}")
    big = np.array([1e4, 1e4 - 1.0, 0.0])
    expect_array(*both(sub, ref, "softmax", big, temperature=1e-3),
                 what="softmax of logits near 1e4 with temperature 0.001")
    # z/T itself overflows here: shift by the max first, then divide.
    huge = _random_logits(rng, (3, 4), scale=1e306)
    expect_array(*both(sub, ref, "softmax", huge, temperature=1e-3),
                 what="softmax of logits near 1e306 with temperature 0.001")


# Issue 36, relative tolerance in tiny tails: probabilities of 1e-13 … 1e-304 are tiny but not
# zero, and an absolute tolerance (1e-7) would pass a softmax that flushes them to 0 (exp in
# float32, a clipped exponent). Each entry is held to the dtype's relative tolerance alone.
@graded("softmax", "tiny but nonzero probabilities (1e-13 … 1e-304) are right to the dtype's "
        "relative tolerance, not flushed to zero")
def test_softmax_tiny_tail_relative(sub, ref):
    z = np.array([[0.0, -30.0, -300.0, -700.0], [-1.0, -1.0, -650.0, -80.0]])
    expect_array(*both(sub, ref, "softmax", z), rtol=1e-12, atol=0.0,
                 what="softmax of shape (2, 4) with tails down to 1e-304 (relative tolerance)")
    z32 = np.array([0.0, -20.0, -60.0, -85.0], dtype=np.float32)
    expect_array(sub.softmax(z32), ref.softmax(z32.astype(np.float64)), dtype="float32",
                 rtol=1e-5, atol=0.0,
                 what="float32 softmax of shape (4,) with tails down to 1e-37 (relative tolerance)")


# Guards against dividing by T before subtracting the max, in other dtypes and shapes than the
# test above: in float32, z/T passes float32's 3.4e38 at logits of 100 and T = 1e-37; in float64,
# logits near 1e5 and T = 1e-304 pass 1.8e308. Shifted first, (z - m)/T <= 0 cannot overflow.
@graded("softmax", "tiny temperatures where z/T overflows: float32 (3, 6) along axis 0 with "
        "T = 1e-37, float64 (5,) with T = 1e-304, give the argmax")
def test_softmax_tiny_temperature_overflow(sub, ref):
    rng = np.random.default_rng(2108)
    z32 = _random_logits(rng, (3, 6), scale=100.0).astype(np.float32)
    expect_array(sub.softmax(z32, axis=0, temperature=1e-37),
                 ref.softmax(z32.astype(np.float64), axis=0, temperature=1e-37), dtype="float32",
                 what="softmax of float32 logits, shape (3, 6), along axis 0, temperature 1e-37")
    z64 = np.array([1e5, -3e5, 2e5, 0.5, 2e5 - 1.0])
    expect_array(*both(sub, ref, "softmax", z64, temperature=1e-304),
                 what="softmax of logits near 1e5, shape (5,), temperature 1e-304")


@graded("softmax", "large temperatures (1e6, 1e300) give the uniform distribution")
def test_softmax_large_temperature(sub, ref):
    rng = np.random.default_rng(2105)
    z = _random_logits(rng, (2, 7))
    for T in (1e6, 1e300):
        expect_array(*both(sub, ref, "softmax", z, temperature=T),
                     what=f"softmax of shape (2, 7) with temperature {T:g}")


@graded("softmax", "temperature 0, negative, inf or NaN raises ValueError")
def test_softmax_bad_temperature(sub, ref):
    z = np.array([1.0, 2.0, 3.0])
    for T in (0.0, -1.0, INF, -INF, float("nan")):
        expect_rule("ValueError", sub.softmax, z, temperature=T, what=f"temperature {T}")


# Guards against a missing temperature check, with other bad values (tiny and large negatives,
# an integer 0) on a batched input along another axis than the test above.
@graded("softmax", "a temperature that is not > 0 (-2.5, -1e-300, the integer 0) raises "
        "ValueError for a (2, 4) input along axis 0 too")
def test_softmax_bad_temperature_batched(sub, ref):
    z = _random_logits(np.random.default_rng(2109), (2, 4))
    for T in (-2.5, -1e-300, 0):
        expect_rule("ValueError", sub.softmax, z, axis=0, temperature=T,
                    what=f"temperature {T} on logits of shape (2, 4)")


@graded("softmax", "extremes together: logits 1600 apart at temperatures 100 and 400 (float64), "
        "300 apart at 50 (float32), along either axis")
def test_softmax_huge_spread_large_temperature(sub, ref):
    # Each extreme alone is tested above. Together, exp(z - max) underflows to 0 long before
    # exp((z - max)/T) does: softmax(z) ** (1/T), renormalised, loses every entry but the max.
    z64 = np.array([[800.0, -800.0, 0.0, 300.0], [-800.0, 800.0, 790.0, -5.0]])
    z32 = np.array([[150.0, -150.0, 0.0], [-150.0, 150.0, 149.0]], dtype=np.float32)
    for z, T, axis in ((z64, 100.0, -1), (z64, 400.0, 0), (z32, 50.0, -1), (z32, 50.0, 0)):
        expected = ref.softmax(z.astype(np.float64) / T, axis=axis)
        expect_array(sub.softmax(z, axis=axis, temperature=T), expected, dtype=str(z.dtype),
                     what=f"softmax of {z.dtype} logits {z.shape} with a wide spread, "
                          f"temperature {T:g}, axis {axis}")


@graded("softmax", "extremes together in float16: logits ±30000 at temperature 20000 (computed "
        "in float32, T divides before exp)")
def test_softmax_huge_spread_float16(sub, ref):
    z = np.array([[30000.0, -30000.0, 0.0], [-30000.0, -29000.0, 30000.0]], dtype=np.float16)
    for T in (2e4, 6e3):
        expected = ref.softmax(z.astype(np.float64) / T)
        expect_array(sub.softmax(z, temperature=T), expected, dtype="float16",
                     what=f"softmax of float16 logits (2, 3) with a wide spread, temperature {T:g}")


@graded("softmax", "a non-finite temperature (inf, -inf, NaN) raises ValueError for float32 "
        "logits along axis 0 too")
def test_softmax_nonfinite_temperature_batched(sub, ref):
    z = _random_logits(np.random.default_rng(2110), (3, 2)).astype(np.float32)
    for T in (INF, -INF, float("nan")):
        expect_rule("ValueError", sub.softmax, z, axis=0, temperature=T,
                    what=f"temperature {T} on float32 logits of shape (3, 2)")


@graded("softmax", "-inf logits get probability 0 and an all -inf row gives zeros, not NaN")
def test_softmax_masked(sub, ref):
    z = np.array([[0.0, -INF, 1.0, -INF],
                  [-INF, -INF, -INF, -INF],
                  [-INF, 2.0, -INF, -INF],
                  [3.0, 1.0, 2.0, 0.5]])
    expect_array(*both(sub, ref, "softmax", z), what="softmax of masked logits, shape (4, 4)")
    expect_array(*both(sub, ref, "softmax", z, axis=0),
                 what="softmax of masked logits, shape (4, 4), along axis 0")
    expect_array(*both(sub, ref, "softmax", z, temperature=0.25),
                 what="softmax of masked logits, shape (4, 4), temperature 0.25")
    allinf = np.full((2, 3), -INF)
    expect_array(sub.softmax(allinf), np.zeros((2, 3)), what="softmax of an all -inf (2, 3)")


@graded("softmax", "float32 logits give float32 (T = 1 and 0.1)")
def test_softmax_dtypes(sub, ref):
    rng = np.random.default_rng(2106)
    z = (_random_logits(rng, (3, 8)) + 50).astype(np.float32)
    expect_array(sub.softmax(z), ref.softmax(z.astype(np.float64)), dtype="float32",
                 what="softmax of float32 logits, shape (3, 8)")
    expect_array(sub.softmax(z, temperature=0.1),
                 ref.softmax(z.astype(np.float64), temperature=0.1), dtype="float32",
                 what="softmax of float32 logits, shape (3, 8), temperature 0.1")


@graded("softmax", "integer logits give float64")
def test_softmax_integer(sub, ref):
    zi = np.array([[1, 2, 3], [-5, 0, 5]])
    expect_array(*both(sub, ref, "softmax", zi), what="softmax of int64 logits, shape (2, 3)")


@graded("softmax", "float16 is computed in float32 and returned as float16 (T = 1 and 0.2)")
def test_softmax_float16(sub, ref):
    # Exponents rounded to float16 (3 digits) put some probabilities off by more than 1e-3.
    rng = np.random.default_rng(2107)
    for scale, T in [(3.0, 1.0), (1.0, 0.2)]:
        z = _random_logits(rng, (8, 64), scale=scale).astype(np.float16)
        expect_array(sub.softmax(z, temperature=T),
                     ref.softmax(z.astype(np.float64), temperature=T), dtype="float16",
                     what=f"softmax of float16 logits, shape (8, 64), temperature {T}")


@graded("softmax", "float16 logits near 65504 and a small temperature: no overflow, no NaN")
def test_softmax_float16_extremes(sub, ref):
    z = np.array([[60000.0, 65000.0, -65000.0], [1000.0, 999.0, 998.0], [0.0, -INF, 0.5]],
                 dtype=np.float16)
    expect_array(sub.softmax(z), ref.softmax(z.astype(np.float64)), dtype="float16",
                 what="softmax of float16 logits near the float16 maximum")
    expect_array(sub.softmax(z, temperature=0.01),
                 ref.softmax(z.astype(np.float64), temperature=0.01), dtype="float16",
                 what="softmax of float16 logits with temperature 0.01")


# Guards against computing float16 in float16, in two ways the test above does not use: a row
# whose sum of exponentials passes float16's 65504 (inf in float16: every probability 0), and
# T = 1e-8, which float16 rounds to 0 (0/0 at the max: NaN). In float32 both are fine.
@graded("softmax", "float16 computed in float32: a row of 70 000 equal logits (sum of "
        "exponentials past 65504) and temperature 1e-8 (0 in float16)")
def test_softmax_float16_range(sub, ref):
    flat = np.zeros((1, 70_000), dtype=np.float16)
    expect_array(sub.softmax(flat), ref.softmax(flat.astype(np.float64)), dtype="float16",
                 what="softmax of float16 logits, shape (1, 70000)")
    z = _random_logits(np.random.default_rng(2110), (4, 6)).astype(np.float16)
    expect_array(sub.softmax(z, temperature=1e-8),
                 ref.softmax(z.astype(np.float64), temperature=1e-8), dtype="float16",
                 what="softmax of float16 logits, shape (4, 6), temperature 1e-8")


@graded("softmax", "random shapes, axes, temperatures and -inf masks (hypothesis)")
@given(z=logit_arrays(MASKED_LOGITS), data=st.data(),
       T=st.sampled_from([0.05, 0.3, 1.0, 1.0, 4.0, 1000.0]))
def test_softmax_property(sub, ref, z, data, T):
    axis = data.draw(_axis_choices(z.ndim))
    expect_array(sub.softmax(z, axis=axis, temperature=T),
                 ref.softmax(z, axis=axis, temperature=T),
                 what=f"softmax of generated logits of shape {z.shape}")


# ------------------------------------------------------------------ logsumexp


@graded("logsumexp", "random logits of shapes (3, 7) and (2, 3, 4) along every axis")
def test_logsumexp_random(sub, ref):
    rng = np.random.default_rng(2201)
    for shape in [(3, 7), (2, 3, 4)]:
        z = _random_logits(rng, shape)
        for axis in range(-len(shape), len(shape)):
            expect_array(*both(sub, ref, "logsumexp", z, axis=axis),
                         what=f"logsumexp of shape {shape} along axis {axis}")


@graded("logsumexp", "keepdims=True keeps the reduced axis with length 1")
def test_logsumexp_keepdims(sub, ref):
    rng = np.random.default_rng(2202)
    z = _random_logits(rng, (2, 3, 4))
    for axis in (-1, 0, 1):
        expect_array(*both(sub, ref, "logsumexp", z, axis=axis, keepdims=True),
                     what=f"logsumexp of shape (2, 3, 4) along axis {axis}, keepdims=True")
        expect_array(*both(sub, ref, "logsumexp", z, axis=axis, keepdims=False),
                     what=f"logsumexp of shape (2, 3, 4) along axis {axis}, keepdims=False")


@graded("logsumexp", "a 1-D input reduces to a single number (0-d array or scalar)")
def test_logsumexp_1d(sub, ref):
    rng = np.random.default_rng(2203)
    for n in (1, 2, 50):
        z = _random_logits(rng, (n,))
        expect_array_or_scalar(sub.logsumexp(z), ref.logsumexp(z),
                               what=f"logsumexp of shape ({n},)")


@graded("logsumexp", "huge and very negative logits (±1000, 1e308) stay finite")
def test_logsumexp_extremes(sub, ref):
    cases = [np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1000.0, -1000.0]]),
             np.array([[1e308, 1e308], [-1e308, 0.0]]),
             np.array([[0.0, 1.0], [2000.0, 2001.0], [-2000.0, -1999.0]])]
    for z in cases:
        expect_array(*both(sub, ref, "logsumexp", z),
                     what=f"logsumexp of extreme logits, shape {z.shape}")


# Guards against shifting by the global max instead of each slice's: slices on very different
# scales along axis 0 and in a 3-D input with keepdims (the other slices underflow to -inf).
@graded("logsumexp", "slices on very different scales (±800) along axis 0 and along the last "
        "axis of a (2, 2, 3) input with keepdims=True stay finite")
def test_logsumexp_slice_scales(sub, ref):
    rng = np.random.default_rng(2205)
    cols = _random_logits(rng, (4, 3)) + np.array([800.0, -800.0, 0.0])
    expect_array(*both(sub, ref, "logsumexp", cols, axis=0),
                 what="logsumexp of logits of shape (4, 3) along axis 0")
    cube = _random_logits(rng, (2, 2, 3)) + np.array([[[-900.0]], [[700.0]]])
    expect_array(*both(sub, ref, "logsumexp", cube, axis=-1, keepdims=True),
                 what="logsumexp of logits of shape (2, 2, 3) along axis -1, keepdims=True")


@graded("logsumexp", "an all -inf slice gives -inf (not NaN); -inf entries add nothing")
def test_logsumexp_masked(sub, ref):
    z = np.array([[0.0, -INF, 1.0], [-INF, -INF, -INF], [-INF, 2.0, -INF]])
    expect_array(*both(sub, ref, "logsumexp", z), what="logsumexp of masked logits (3, 3)")
    expect_array(*both(sub, ref, "logsumexp", z, axis=0, keepdims=True),
                 what="logsumexp of masked logits (3, 3) along axis 0, keepdims=True")
    expect_array_or_scalar(sub.logsumexp(np.full(4, -INF)), ref.logsumexp(np.full(4, -INF)),
                           what="logsumexp of an all -inf (4,)")


def _logsumexp_dtype_case(sub, ref, dtype: str) -> None:
    z = _random_logits(np.random.default_rng(2204), (3, 16)).astype(dtype)
    expect_array(sub.logsumexp(z), ref.logsumexp(z.astype(np.float64)), dtype=dtype,
                 what=f"logsumexp of {dtype} logits, shape (3, 16)")


@graded("logsumexp", "float32 logits stay float32")
def test_logsumexp_float32(sub, ref):
    _logsumexp_dtype_case(sub, ref, "float32")


@graded("logsumexp", "float16 logits stay float16 (computed in float32)")
def test_logsumexp_float16(sub, ref):
    _logsumexp_dtype_case(sub, ref, "float16")


# Not graded: a float16 row of 70 000 logits, whose sum of exponentials passes float16's
# 65504. docs/design/exercise-api.md's logsumexp row says "stable" and states no working precision (softmax's
# does), so a sum in float16 that overflows to inf is float16 arithmetic, not a mistake (fifth
# review). log_softmax's row asks for finite results for finite logits: graded there.


@graded("logsumexp", "integer logits give float64")
def test_logsumexp_integer(sub, ref):
    zi = np.array([[1, 2, 3], [100, 0, -100]])
    expect_array(*both(sub, ref, "logsumexp", zi), what="logsumexp of int64 logits (2, 3)")


@graded("logsumexp", "logsumexp(z + c) = logsumexp(z) + c, random shapes and axes (hypothesis)")
@given(z=logit_arrays(MASKED_LOGITS), data=st.data(), c=SHIFTS, keepdims=st.booleans())
def test_logsumexp_property(sub, ref, z, data, c, keepdims):
    axis = data.draw(_axis_choices(z.ndim))
    expect_array_or_scalar(sub.logsumexp(z + c, axis=axis, keepdims=keepdims),
                           ref.logsumexp(z + c, axis=axis, keepdims=keepdims),
                           what=f"logsumexp of generated logits of shape {z.shape}")


# ------------------------------------------------------------------ log_softmax


@graded("log_softmax", "random logits of shapes (6,), (3, 7), (2, 3, 4) along the last axis")
def test_log_softmax_random(sub, ref):
    rng = np.random.default_rng(2301)
    for shape in [(6,), (3, 7), (2, 3, 4), (1, 1)]:
        z = _random_logits(rng, shape)
        expect_array(*both(sub, ref, "log_softmax", z), what=f"log_softmax of shape {shape}")


@graded("log_softmax", "other axes of square and cubic inputs (4, 4) and (3, 3, 3)")
def test_log_softmax_axes(sub, ref):
    rng = np.random.default_rng(2302)
    for shape in [(4, 4), (3, 3, 3)]:
        z = _random_logits(rng, shape)
        for axis in range(-len(shape), len(shape)):
            expect_array(*both(sub, ref, "log_softmax", z, axis=axis),
                         what=f"log_softmax of shape {shape} along axis {axis}")


@graded("log_softmax", "far-apart logits stay finite: [0, 1000] → [−1000, 0], ±1e4")
def test_log_softmax_far_apart(sub, ref):
    cases = [np.array([0.0, 1000.0]), np.array([-1e4, 0.0, 1e4]),
             np.array([[0.0, -800.0, 5.0], [700.0, 0.0, -700.0]])]
    for z in cases:
        expect_array(*both(sub, ref, "log_softmax", z),
                     what=f"log_softmax of far-apart logits, shape {z.shape}")


@graded("log_softmax", "huge logits (1000 + z, 1e308) stay finite (no inf, no NaN) and correct "
        "to atol 8·eps·max|z| (loosened: scaled to the inputs)")
def test_log_softmax_huge(sub, ref):
    # z − logsumexp(z) and (z − m) − log Σ exp(z − m) differ by rounding of order eps·max|z|:
    # near 1e308 logsumexp rounds to the max, so the first gives 0 where the second gives −log 2.
    # Both are right in floating point; an overflow (inf, NaN) still fails, since compare()
    # never lets a finite tolerance excuse a non-finite value.
    rng = np.random.default_rng(2303)
    z = _random_logits(rng, (3, 5)) + 1000
    w = np.array([1e308, 1e308, 0.0])
    for x in (z, w):
        atol = max(1e-7, 8 * np.finfo(np.float64).eps * float(np.max(np.abs(x))))
        expect_array(*both(sub, ref, "log_softmax", x), atol=atol,
                     what=f"log_softmax of huge logits, shape {x.shape} "
                          "(atol scaled to the logits' magnitude)")


@graded("log_softmax", "-inf logits give -inf and an all -inf row gives -inf, never NaN")
def test_log_softmax_masked(sub, ref):
    z = np.array([[0.0, -INF, 1.0], [-INF, -INF, -INF], [-INF, 2.0, -INF]])
    expect_array(*both(sub, ref, "log_softmax", z), what="log_softmax of masked (3, 3)")
    expect_array(*both(sub, ref, "log_softmax", z, axis=0),
                 what="log_softmax of masked (3, 3) along axis 0")


#: Tolerance, relative to an output's largest magnitude, of a function docs/design/exercise-api.md gives no float16
#: working precision: computed in float16 arithmetic, a few float16 steps (2^-10 each) of it.
F16_ARITHMETIC = 8 * 2.0**-10


def _log_softmax_dtype_case(sub, ref, dtype: str) -> None:
    z = _random_logits(np.random.default_rng(2304), (3, 16)).astype(dtype)
    expected = ref.log_softmax(z.astype(np.float64))
    # float16: docs/design/exercise-api.md's log_softmax row states no working precision (softmax's does)
    atol = F16_ARITHMETIC * float(np.abs(expected).max()) if dtype == "float16" else None
    expect_array(sub.log_softmax(z), expected, dtype=dtype, atol=atol,
                 what=f"log_softmax of {dtype} logits, shape (3, 16)")


@graded("log_softmax", "float32 logits stay float32")
def test_log_softmax_float32(sub, ref):
    _log_softmax_dtype_case(sub, ref, "float32")


@graded("log_softmax", "float16 logits stay float16, to float16 arithmetic's error")
def test_log_softmax_float16(sub, ref):
    _log_softmax_dtype_case(sub, ref, "float16")


@graded("log_softmax", "float16: a row of 70 000 logits, whose sum of exponentials passes "
        "float16's 65504, gives finite log-probabilities (finite logits)")
def test_log_softmax_float16_long_row(sub, ref):
    z = np.zeros((2, 70_000), dtype=np.float16)
    z[1, ::2] = -3.0
    expect_array(sub.log_softmax(z), ref.log_softmax(z.astype(np.float64)), dtype="float16",
                 what="log_softmax of float16 logits, shape (2, 70000)")


# Not graded: z - max rounded to float16. docs/design/exercise-api.md's log_softmax row states no working
# precision (only softmax's does), so float16 arithmetic is correct there.


@graded("log_softmax", "integer logits give float64")
def test_log_softmax_integer(sub, ref):
    zi = np.array([[1, 2, 3], [100, 0, -100]])
    expect_array(*both(sub, ref, "log_softmax", zi),
                 what="log_softmax of int64 logits (2, 3)")


@graded("log_softmax", "shift-invariant and equal to z − logsumexp(z) (hypothesis)")
@given(z=logit_arrays(MASKED_LOGITS), data=st.data(), c=SHIFTS)
def test_log_softmax_property(sub, ref, z, data, c):
    axis = data.draw(_axis_choices(z.ndim))
    expect_array(sub.log_softmax(z + c, axis=axis), ref.log_softmax(z + c, axis=axis),
                 what=f"log_softmax of generated logits of shape {z.shape}")


# ------------------------------------------------------------------ softmax_jacobian


@graded("softmax_jacobian", "p = softmax of random logits, N = 1, 2, 5, 17")
def test_jacobian_random(sub, ref):
    rng = np.random.default_rng(2401)
    for n in (1, 2, 5, 17):
        p = ref.softmax(_random_logits(rng, (n,)))
        expect_array(*both(sub, ref, "softmax_jacobian", p),
                     what=f"softmax_jacobian of p of shape ({n},)")


@graded("softmax_jacobian", "uniform p gives I/N − 1/N² (symmetric, rows sum to 0)")
def test_jacobian_uniform(sub, ref):
    for n in (3, 8):
        p = np.full(n, 1.0 / n)
        expect_array(sub.softmax_jacobian(p), np.eye(n) / n - 1.0 / n**2,
                     what=f"softmax_jacobian of a uniform p of shape ({n},)")


@graded("softmax_jacobian", "one dominant logit: the Jacobian vanishes")
def test_jacobian_dominant(sub, ref):
    p = ref.softmax(np.array([0.0, 12.0, 1.0, -3.0]))
    expect_array(*both(sub, ref, "softmax_jacobian", p),
                 what="softmax_jacobian of a nearly one-hot p of shape (4,)")
    onehot = np.array([0.0, 1.0, 0.0])
    expect_array(sub.softmax_jacobian(onehot), np.zeros((3, 3)),
                 what="softmax_jacobian of a one-hot p of shape (3,)")


@graded("softmax_jacobian", "diag(p) − p pᵀ, not p pᵀ − diag(p) nor diag(p) − p (non-uniform p)")
def test_jacobian_formula(sub, ref):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    expect_array(sub.softmax_jacobian(p), np.diag(p) - np.outer(p, p),
                 what="softmax_jacobian of p of shape (4,)")


@graded("softmax_jacobian", "J @ dz matches a central finite difference of softmax (rtol 1e-4)")
def test_jacobian_finite_difference(sub, ref):
    rng = np.random.default_rng(2402)
    z = _random_logits(rng, (6,))
    dz = rng.normal(size=6) * 1e-6
    J = sub.softmax_jacobian(ref.softmax(z))
    expect_array(J, ref.softmax_jacobian(ref.softmax(z)), what="softmax_jacobian of shape (6,)")
    fd = (ref.softmax(z + dz) - ref.softmax(z - dz)) / 2
    expect_array(J @ dz, fd, rtol=1e-4, atol=1e-12,
                 what="J @ dz vs a central difference (loosened: finite differences)")


@graded("softmax_jacobian", "float32 p gives float32")
def test_jacobian_dtypes(sub, ref):
    rng = np.random.default_rng(2403)
    p = ref.softmax(_random_logits(rng, (7,))).astype(np.float32)
    expect_array(sub.softmax_jacobian(p), ref.softmax_jacobian(p.astype(np.float64)),
                 dtype="float32", what="softmax_jacobian of a float32 p of shape (7,)")


# Guards against always returning float64: float16 (dyadic p, so every entry is exact in
# float16) and float32 for a one-entry p.
@graded("softmax_jacobian", "float16 p (4,) gives float16 and float32 p (1,) gives float32")
def test_jacobian_float16(sub, ref):
    p16 = np.array([0.5, 0.25, 0.125, 0.125], dtype=np.float16)
    expect_array(sub.softmax_jacobian(p16), ref.softmax_jacobian(p16.astype(np.float64)),
                 dtype="float16", what="softmax_jacobian of a float16 p of shape (4,)")
    p32 = np.array([1.0], dtype=np.float32)
    expect_array(sub.softmax_jacobian(p32), np.zeros((1, 1)), dtype="float32",
                 what="softmax_jacobian of a float32 p of shape (1,)")


@graded("softmax_jacobian", "integer p gives float64", trivial=True)
def test_jacobian_integer(sub, ref):
    pi = np.array([0, 1, 0])
    expect_array(*both(sub, ref, "softmax_jacobian", pi),
                 what="softmax_jacobian of an int64 p of shape (3,)")


@graded("softmax_jacobian", "p that is not 1-D (0-d, (1, N), (N, N), (2, 3, 4)) raises ValueError "
        "naming its shape")
def test_jacobian_not_1d(sub, ref):
    for shape in [(), (1, 4), (3, 3), (2, 3, 4)]:
        p = np.full(shape, 0.25)
        expect_rule("ValueError", sub.softmax_jacobian, p, what=f"p of shape {shape}",
                    naming=(str(shape),))


# Guards against a missing shape check: a batch of probability rows (b, N) and a column (N, 1),
# which np.diag would quietly read as a matrix.
@graded("softmax_jacobian", "a batch of probability vectors (2, 5) or a column (4, 1) raises "
        "ValueError naming its shape")
def test_jacobian_batched_p(sub, ref):
    rng = np.random.default_rng(2404)
    for shape in [(2, 5), (4, 1)]:
        p = ref.softmax(_random_logits(rng, shape), axis=0 if shape[1] == 1 else -1)
        expect_rule("ValueError", sub.softmax_jacobian, p, what=f"p of shape {shape}",
                    naming=(str(shape),))


@graded("softmax_jacobian", "symmetric with zero row sums for random probability vectors "
        "(hypothesis)")
@given(z=st.integers(1, 12).flatmap(lambda n: hnp.arrays(np.float64, n, elements=LOGITS)))
def test_jacobian_property(sub, ref, z):
    p = ref.softmax(z)
    J = sub.softmax_jacobian(p)
    expect_array(J, ref.softmax_jacobian(p), what=f"softmax_jacobian of p of shape {p.shape}")
    expect_array(J - J.T, np.zeros_like(J), what="J − Jᵀ")
    expect_array(J.sum(axis=1), np.zeros(len(p)), atol=1e-12, what="the row sums of J")


# ------------------------------------------------------------------ online_softmax


@graded("online_softmax", "random z of lengths 1, 7, 64 and 100 with block sizes 1, 3, n, n + 5")
def test_online_softmax_random(sub, ref):
    rng = np.random.default_rng(2501)
    for n in (1, 7, 64, 100):
        z = _random_logits(rng, (n,))
        for block in sorted({1, 3, n, n + 5}):
            expect_array(sub.online_softmax(z, block), ref.softmax(z),
                         what=f"online_softmax of shape ({n},) in blocks of {block}")


@graded("online_softmax", "a running max that grows in every block (increasing logits)")
def test_online_softmax_increasing(sub, ref):
    for z in (np.arange(20) * 0.7, np.arange(30) * 40.0, np.linspace(-5, 5, 17)):
        for block in (1, 3, 4):
            expect_array(sub.online_softmax(z, block), ref.softmax(z),
                         what=f"online_softmax of increasing logits, shape {z.shape}, "
                              f"blocks of {block}")


@graded("online_softmax", "the max is in the first block (decreasing logits)")
def test_online_softmax_decreasing(sub, ref):
    for z in (-np.arange(20) * 0.7, np.linspace(5, -5, 17)):
        for block in (2, 5):
            expect_array(sub.online_softmax(z, block), ref.softmax(z),
                         what=f"online_softmax of decreasing logits, shape {z.shape}, "
                              f"blocks of {block}")


@graded("online_softmax", "huge logits (z + 1000, ±1e4 jumps) do not overflow")
def test_online_softmax_huge(sub, ref):
    rng = np.random.default_rng(2502)
    z = _random_logits(rng, (13,)) + 1000
    expect_array(sub.online_softmax(z, 4), ref.softmax(z), what="online_softmax of z + 1000 (13,)")
    w = np.array([0.0, 1.0, -1e4, 2.0, 1e4, 1e4 - 1.0, 3.0])
    for block in (1, 2, 3):
        expect_array(sub.online_softmax(w, block), ref.softmax(w),
                     what=f"online_softmax of logits with ±1e4 jumps (7,), blocks of {block}")


# Fifth review: a max taken over the block alone (not the running one) was caught by the
# ±1e4 jumps only.
@graded("online_softmax", "logits that fall by more than 709 from one block to the next: the "
        "running max keeps the larger")
def test_online_softmax_falling(sub, ref):
    w = np.array([800.0, 0.0, -5.0, 790.0, 1.0])
    for block in (1, 2):
        expect_array(sub.online_softmax(w, block), ref.softmax(w),
                     what=f"online_softmax of logits falling by 800 (5,), blocks of {block}")


@graded("online_softmax", "-inf entries, a leading all -inf block, and an all -inf z (zeros)")
def test_online_softmax_masked(sub, ref):
    z = np.array([-INF, -INF, 1.0, 2.0, -INF, 0.5, -INF])
    for block in (1, 2, 3, 7):
        expect_array(sub.online_softmax(z, block), ref.softmax(z),
                     what=f"online_softmax of masked logits (7,), blocks of {block}")
    for block in (1, 2, 5):
        expect_array(sub.online_softmax(np.full(5, -INF), block), np.zeros(5),
                     what=f"online_softmax of an all -inf (5,), blocks of {block}")


@graded("online_softmax", "float32 logits give float32")
def test_online_softmax_float32(sub, ref):
    rng = np.random.default_rng(2503)
    z = _random_logits(rng, (50,)).astype(np.float32)
    for block in (1, 8):
        expect_array(sub.online_softmax(z, block), ref.softmax(z.astype(np.float64)),
                     dtype="float32", what=f"online_softmax of float32 (50,), blocks of {block}")


@graded("online_softmax", "block_size < 1 (0, -1, -5) raises ValueError naming the value")
def test_online_softmax_bad_block(sub, ref):
    z = np.array([1.0, 2.0, 3.0])
    for block in (0, -1, -5):
        expect_rule("ValueError", sub.online_softmax, z, block,
                    what=f"block_size {block}", naming=(str(block),))


#: float16 logits of both signs: z − max rounded to float16 (and exp and the division in
#: float16) puts some probabilities 2 float16 steps off; computed in float32 they stay within 1.
MIXED_SIGN_FLOAT16 = [np.array(v, dtype=np.float16) for v in
                      ([1.693359375, -1.6259765625, -2.3671875, -0.8349609375],
                       [1.81640625, -1.0869140625, -2.9921875, -2.283203125])]


@graded("online_softmax", "float16 logits give float16, computed in float32 (not in float16)")
def test_online_softmax_float16(sub, ref):
    rng = np.random.default_rng(2504)
    z = _random_logits(rng, (40,), scale=4.0).astype(np.float16)
    for block in (1, 7):
        expect_array(sub.online_softmax(z, block), ref.softmax(z.astype(np.float64)),
                     dtype="float16", what=f"online_softmax of float16 (40,), blocks of {block}")
    for z in MIXED_SIGN_FLOAT16:
        for block in (1, 4):
            expect_array(sub.online_softmax(z, block), ref.softmax(z.astype(np.float64)),
                         dtype="float16",
                         what=f"online_softmax of float16 logits of both signs (4,), blocks of "
                              f"{block}")


@graded("online_softmax", "integer logits give float64")
def test_online_softmax_integer(sub, ref):
    z = np.array([3, -1, 4, 1, -5, 9, 2])
    for block in (2, 7):
        expect_array(sub.online_softmax(z, block), ref.softmax(z),
                     what=f"online_softmax of int64 (7,), blocks of {block}")


@graded("online_softmax", "equals softmax(z) for random z and every block size (hypothesis)")
@given(z=st.integers(1, 40).flatmap(
           lambda n: hnp.arrays(np.float64, n, elements=MASKED_LOGITS)),
       block=st.integers(1, 45), c=SHIFTS)
def test_online_softmax_property(sub, ref, z, block, c):
    expect_array(sub.online_softmax(z + c, block), ref.softmax(z + c),
                 what=f"online_softmax of generated logits of shape {z.shape}")


# ------------------------------------------------------------------ online_attention


def _attention(ref, q, K, V):
    return ref.softmax(K @ q / np.sqrt(q.shape[0])) @ V


@graded("online_attention", "random q (d,), K (n, d), V (n, d_v) for several n, d, d_v, blocks")
def test_online_attention_random(sub, ref):
    rng = np.random.default_rng(2601)
    for n, d, d_v in [(10, 4, 3), (17, 8, 8), (5, 1, 6), (64, 16, 2)]:
        q, K, V = rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=(n, d_v))
        for block in sorted({1, 3, n, n + 4}):
            expect_array(*both(sub, ref, "online_attention", q, K, V, block),
                         what=f"online_attention with K {K.shape}, V {V.shape}, blocks of {block}")


@graded("online_attention", "a single key (n = 1) returns its value")
def test_online_attention_single_key(sub, ref):
    rng = np.random.default_rng(2602)
    q, K, V = rng.normal(size=3), rng.normal(size=(1, 3)), rng.normal(size=(1, 5))
    for block in (1, 4):
        expect_array(sub.online_attention(q, K, V, block), V[0],
                     what=f"online_attention with K (1, 3), V (1, 5), blocks of {block}")


@graded("online_attention", "scores that grow block after block (rescaling acc and l)")
def test_online_attention_increasing(sub, ref):
    rng = np.random.default_rng(2603)
    d = 4
    q = rng.normal(size=d)
    K = np.outer(np.linspace(-3, 3, 24), q / np.linalg.norm(q)) + 0.1 * rng.normal(size=(24, d))
    V = rng.normal(size=(24, 3))
    for block in (1, 2, 5, 8):
        expect_array(sub.online_attention(q, K, V, block), _attention(ref, q, K, V),
                     what=f"online_attention with increasing scores, K (24, 4), blocks of {block}")
    for block in (2, 5):
        expect_array(sub.online_attention(q, K[::-1], V[::-1], block),
                     _attention(ref, q, K[::-1], V[::-1]),
                     what=f"online_attention with decreasing scores, K (24, 4), blocks of {block}")


@graded("online_attention", "large scores (q and K scaled by 30) do not overflow")
def test_online_attention_large(sub, ref):
    rng = np.random.default_rng(2604)
    q, K, V = rng.normal(size=8) * 30, rng.normal(size=(20, 8)) * 30, rng.normal(size=(20, 4))
    for block in (1, 3, 20):
        expect_array(sub.online_attention(q, K, V, block), _attention(ref, q, K, V),
                     what=f"online_attention with large scores, K (20, 8), blocks of {block}")


@graded("online_attention", "the scale is 1/√d (d = 9, 16), not 1/d or none")
def test_online_attention_scale(sub, ref):
    rng = np.random.default_rng(2605)
    for d in (9, 16):
        q, K, V = rng.normal(size=d), rng.normal(size=(6, d)), rng.normal(size=(6, 2))
        expect_array(sub.online_attention(q, K, V, 2), _attention(ref, q, K, V),
                     what=f"online_attention with K (6, {d}), blocks of 2")


@graded("online_attention", "float32 inputs give float32")
def test_online_attention_float32(sub, ref):
    rng = np.random.default_rng(2606)
    q, K, V = (rng.normal(size=s).astype(np.float32) for s in [(8,), (30, 8), (30, 5)])
    for block in (1, 7):
        expect_array(sub.online_attention(q, K, V, block),
                     _attention(ref, q.astype(np.float64), K.astype(np.float64),
                                V.astype(np.float64)),
                     dtype="float32",
                     what=f"online_attention of float32 K (30, 8), blocks of {block}")


# Not graded: block_size < 1 for online_attention. docs/design/exercise-api.md lists that error for
# online_softmax only; natural range(0, n, -2) code returns a result, and a while loop with a
# block of 0 never ends.


@graded("online_attention", "no keys (n = 0): zeros (d_v,) or a ValueError, never NaN",
        trivial=True)
def test_online_attention_no_keys(sub, ref):
    # The weighted sum over no keys is empty: 0, the answer natural code reaches only if it does
    # not divide the empty accumulator by l = 0. docs/design/exercise-api.md names no error, yet an empty K may
    # count as bad input, so a ValueError is accepted too; a NaN (0/0) never is.
    for d, d_v, block in ((3, 2, 1), (4, 5, 8)):
        q, K, V = np.linspace(-1.0, 1.0, d), np.zeros((0, d)), np.zeros((0, d_v))
        what = f"online_attention with K (0, {d}), V (0, {d_v}), blocks of {block}"
        try:
            got = sub.online_attention(q, K, V, block)
        except StudentException as exc:
            if exc.remote.is_a("ValueError"):
                continue
            raise  # another error fails as any raising call does
        expect_array(got, np.zeros(d_v), what=what)


@graded("online_attention", "no keys in float32 (K (0, 2)), blocks of 3: float32 zeros or a "
        "ValueError, never NaN", trivial=True)
def test_online_attention_no_keys_float32(sub, ref):
    q, K, V = np.ones(2, np.float32), np.zeros((0, 2), np.float32), np.zeros((0, 3), np.float32)
    what = "online_attention with float32 K (0, 2), V (0, 3), blocks of 3"
    try:
        got = sub.online_attention(q, K, V, 3)
    except StudentException as exc:
        if not exc.remote.is_a("ValueError"):
            raise  # another error fails as any raising call does
        return
    expect_array(got, np.zeros(3, np.float32), what=what)


@graded("online_attention", "q and K of different widths raise ValueError")
def test_online_attention_shapes(sub, ref):
    # docs/design/exercise-api.md's row names no error. Natural code's q·K products raise NumPy's ValueError for
    # different widths (its message names sizes, not shapes); K and V of different lengths
    # are not graded: a loop over K's blocks never reads a longer V's last rows.
    for qs, ks, vs in [((3,), (4, 2), (4, 5)), ((2,), (4, 3), (4, 5))]:
        for block in (1, 2, 4):
            expect_raises("ValueError", sub.online_attention, np.ones(qs), np.ones(ks),
                          np.ones(vs), block, what=f"q {qs}, K {ks}, V {vs}")


@graded("online_attention", "wide inputs: d = 300 and n = 300 keys (sizes compared with ==, not "
        "'is')")
def test_online_attention_wide(sub, ref):
    rng = np.random.default_rng(2607)
    q, K, V = rng.normal(size=300), rng.normal(size=(300, 300)), rng.normal(size=(300, 2))
    expect_array(sub.online_attention(q, K, V, 128), _attention(ref, q, K, V),
                 what="online_attention with K (300, 300), V (300, 2), blocks of 128")


@graded("online_attention", "every score far below 0 (about -2000): the running max starts at "
        "-inf, not 0")
def test_online_attention_negative_scores(sub, ref):
    rng = np.random.default_rng(2608)
    q = np.array([40.0, 40.0])
    K = -50.0 + rng.normal(size=(6, 2))
    V = rng.normal(size=(6, 3))
    for block in (1, 4):
        expect_array(sub.online_attention(q, K, V, block), _attention(ref, q, K, V),
                     what=f"online_attention with scores near -2000, K (6, 2), blocks of {block}")


# Third review: an online_attention that returned its float32 working dtype for float16
# inputs (one test saw it).
@graded("online_attention", "float16 in gives float16 out also for one key and for d_v = 1")
def test_online_attention_float16_small(sub, ref):
    rng = np.random.default_rng(2612)
    for n, d, d_v, block in ((1, 4, 3, 1), (6, 2, 1, 4)):
        q, K, V = (rng.normal(size=s).astype(np.float16) for s in [(d,), (n, d), (n, d_v)])
        expected = _attention(ref, q.astype(np.float64), K.astype(np.float64),
                              V.astype(np.float64))
        expect_array(sub.online_attention(q, K, V, block), expected, dtype="float16",
                     atol=F16_ARITHMETIC * float(np.abs(expected).max()),
                     what=f"online_attention of float16 K ({n}, {d}), V ({n}, {d_v}), "
                          f"blocks of {block}")


@graded("online_attention", "float16 inputs give float16, to float16 arithmetic's error")
def test_online_attention_float16(sub, ref):
    # docs/design/exercise-api.md states no working precision for online_attention: float16 arithmetic (30 keys,
    # d = 8) is correct, so the tolerance is a few float16 steps of the largest output
    rng = np.random.default_rng(2609)
    q, K, V = (rng.normal(size=s).astype(np.float16) for s in [(8,), (30, 8), (30, 5)])
    q = (q * 3).astype(np.float16)
    expected = _attention(ref, q.astype(np.float64), K.astype(np.float64), V.astype(np.float64))
    atol = F16_ARITHMETIC * float(np.abs(expected).max())
    for block in (1, 7):
        expect_array(sub.online_attention(q, K, V, block), expected, dtype="float16", atol=atol,
                     what=f"online_attention of float16 K (30, 8), blocks of {block}")


@graded("online_attention", "integer inputs give float64")
def test_online_attention_integer(sub, ref):
    q, K = np.array([1, -2, 0]), np.array([[1, 0, 2], [0, 1, -1], [3, 1, 0], [-1, -1, 1]])
    V = np.array([[1, 2], [3, 4], [5, 6], [7, 8]])
    for block in (1, 3):
        expect_array(sub.online_attention(q, K, V, block), _attention(ref, q, K, V),
                     what=f"online_attention of int64 K (4, 3), blocks of {block}")


@graded("online_attention", "equals softmax(q Kᵀ/√d) V for random shapes and blocks (hypothesis)")
@given(n=st.integers(1, 24), d=st.integers(1, 8), d_v=st.integers(1, 6), block=st.integers(1, 30),
       scale=st.sampled_from([0.1, 1.0, 5.0]), seed=SEEDS)
def test_online_attention_property(sub, ref, n, d, d_v, block, scale, seed):
    rng = np.random.default_rng(seed)
    q, K, V = rng.normal(size=d) * scale, rng.normal(size=(n, d)) * scale, rng.normal(size=(n, d_v))
    expect_array(sub.online_attention(q, K, V, block), _attention(ref, q, K, V),
                 what=f"online_attention of generated q {q.shape}, K {K.shape}, V {V.shape}")
