"""Hidden tests of topic 7: spectral radius, BPTT Jacobian, condition number, definiteness,
Gram matrices, Newton–Schulz orthogonalisation, sliding-window masks and their density.

Expected values come from the reference (float64 copies of the inputs) or, for Newton–Schulz,
from the polar factor ``U Vᵀ`` of NumPy's SVD computed here. Iterative and ill-conditioned checks
state their loosened tolerance in the description. Inputs for iterative methods are well posed
(condition number ≤ 10), as docs/design/exercise-api.md promises.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.authoring.checks import (
    both,
    expect_array,
    expect_equal,
    expect_float,
    expect_message_names,
    expect_raises,
    expect_rule,
    fail,
)
from autograder.authoring.suite import describe, graded
# The suites' old local names: a Hypothesis test's examples are derived from its source
# (derandomised), so the test bodies keep their text and their examples.
from autograder.authoring.strategies import float64_array as _array, seeded as _rng, seeds

TOPIC = "ex07_matrix_properties"

# ---------------------------------------------------------------- shared strategies and helpers

dims = st.integers(1, 8)
small_dims = st.integers(1, 5)



def _orthonormal(m: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """(m, k) with orthonormal columns, k <= m."""
    Q, R = np.linalg.qr(rng.standard_normal((m, k)))
    return Q * np.sign(np.diag(R))


def _with_singular_values(m: int, n: int, s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random (m, n) matrix whose singular values are ``s`` (length min(m, n))."""
    k = min(m, n)
    return (_orthonormal(m, k, rng) * s) @ _orthonormal(n, k, rng).T


def _well_conditioned(m: int, n: int, rng: np.random.Generator, kappa: float = 10.0) -> np.ndarray:
    """A full-rank (m, n) matrix with condition number <= kappa, at a random scale."""
    k = min(m, n)
    s = np.sort(rng.uniform(1.0 / kappa, 1.0, k))[::-1]
    s[0] = 1.0
    return _with_singular_values(m, n, s, rng) * rng.uniform(0.2, 5.0)


def _polar(G: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(G.astype(np.float64), full_matrices=False)
    return U @ Vt


def _signed_permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.eye(n)[rng.permutation(n)] * rng.choice([-1.0, 1.0], n)


def _spd(n: int, rng: np.random.Generator, kappa: float = 100.0) -> np.ndarray:
    """A symmetric positive definite (n, n) matrix, exactly symmetric."""
    Q = _orthonormal(n, n, rng)
    A = (Q * np.geomspace(1.0, 1.0 / kappa, n)) @ Q.T
    return (A + A.T) / 2.0



def _expect_inf(got: object, what: str) -> None:
    """Exactly +inf (checks.compare would let any number pass against an infinite target)."""
    if type(got) is not float:
        fail(f"{what}: expected a float (inf), got {describe(got)}")
    if got != float("inf"):
        fail(f"{what}: expected inf for a singular matrix, got a finite number"
             if np.isfinite(got) else f"{what}: expected inf, got {got}")


def _bool(sub, A: np.ndarray, expected: bool, what: str) -> None:
    expect_equal(sub.is_positive_definite(A), expected, what=what)


def _polar_check(sub, G: np.ndarray, what: str, atol: float = 1e-6, **kw) -> None:
    expect_array(sub.newton_schulz_orthogonalize(G, **kw), _polar(G), rtol=0.0, atol=atol,
                 dtype="float64", what=what)


# ---------------------------------------------------------------- spectral_radius


@graded("spectral_radius", "random square matrices of several sizes (1 to 16) match")
def test_spectral_radius_random(sub, ref):
    rng = _rng(70)
    for d in (1, 2, 3, 5, 8, 16):
        W = rng.standard_normal((d, d)) / np.sqrt(d)
        expect_float(*both(sub, ref, "spectral_radius", W),
                     what=f"spectral_radius of a generated ({d}, {d}) matrix")


@graded("spectral_radius", "complex eigenvalues count by modulus (a scaled rotation block)")
def test_spectral_radius_complex(sub, ref):
    rng = _rng(71)
    for a, b, other in ((0.6, 0.8, 0.9), (0.3, -1.2, 1.0), (-0.5, 0.5, 0.2)):
        B = np.zeros((3, 3))
        B[:2, :2] = [[a, -b], [b, a]]
        B[2, 2] = other
        P = rng.standard_normal((3, 3)) + 3 * np.eye(3)
        W = P @ B @ np.linalg.inv(P)  # similar to B: eigenvalues a ± ib and `other`
        expect_float(sub.spectral_radius(W), max(np.hypot(a, b), abs(other)), rtol=1e-9,
                     what="spectral_radius of a generated (3, 3) matrix with complex eigenvalues")


@graded("spectral_radius", "a negative dominant eigenvalue counts by its modulus")
def test_spectral_radius_negative(sub, ref):
    rng = _rng(72)
    P = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    W = P @ np.diag([-2.0, 1.0, 0.5, -0.1]) @ np.linalg.inv(P)
    expect_float(sub.spectral_radius(W), 2.0, rtol=1e-9,
                 what="spectral_radius of a generated (4, 4) matrix")
    expect_float(sub.spectral_radius(np.array([[-3.0]])), 3.0, what="spectral_radius([[-3]])")


@graded("spectral_radius", "a non-normal matrix: eigenvalues, not singular values (not the 2-norm)")
def test_spectral_radius_non_normal(sub, ref):
    expect_float(sub.spectral_radius(np.array([[0.5, 10.0], [0.0, 0.5]])), 0.5,
                 what="spectral_radius([[0.5, 10], [0, 0.5]])")
    rng = _rng(73)
    U = np.triu(rng.standard_normal((5, 5)) * 5.0, 1) + np.diag([0.9, -0.3, 0.5, 0.1, -0.7])
    expect_float(sub.spectral_radius(U), 0.9, rtol=1e-9,
                 what="spectral_radius of a generated (5, 5) triangular matrix")


@graded("spectral_radius", "W_hh = λQ (Q orthogonal) has radius λ for λ = 0.9, 1, 1.1")
def test_spectral_radius_scaled_orthogonal(sub, ref):
    rng = _rng(74)
    Q = _orthonormal(6, 6, rng)
    for lam in (0.9, 1.0, 1.1):
        expect_float(sub.spectral_radius(lam * Q), lam, rtol=1e-9,
                     what="spectral_radius of λ times a generated orthogonal (6, 6) matrix")


@graded("spectral_radius", "an integer matrix gives a float")
def test_spectral_radius_int(sub, ref):
    expect_float(sub.spectral_radius(np.array([[2, 1], [1, 2]])), 3.0,
                 what="spectral_radius of int matrix [[2, 1], [1, 2]]")


@graded("spectral_radius", "a float32 matrix gives a float (to float32's precision)")
def test_spectral_radius_float32(sub, ref):
    W = _rng(75).standard_normal((5, 5)).astype(np.float32)
    expect_float(sub.spectral_radius(W), ref.spectral_radius(W.astype(np.float64)),
                 rtol=1.3e-5, atol=1e-5, what="spectral_radius of a generated float32 (5, 5)")


@graded("spectral_radius", "ρ(cW) = |c| ρ(W) and ρ(Wᵀ) = ρ(W) on generated matrices")
@given(seed=seeds, d=dims, c=st.floats(-5.0, 5.0).filter(lambda c: abs(c) > 1e-3))
def test_spectral_radius_property(sub, ref, seed, d, c):
    W = _rng(seed).standard_normal((d, d))
    rho = ref.spectral_radius(W)
    what = f"spectral_radius of a generated ({d}, {d}) matrix"
    expect_float(sub.spectral_radius(W), rho, what=what)
    expect_float(sub.spectral_radius(c * W), abs(c) * rho, rtol=1e-7, what=what + " times c")
    expect_float(sub.spectral_radius(W.T), rho, rtol=1e-7, what=what + ", transposed")


@graded("spectral_radius", "a non-square matrix raises ValueError")
def test_spectral_radius_not_square(sub, ref):
    for shape in ((2, 3), (4, 1)):
        expect_rule("ValueError", sub.spectral_radius, np.ones(shape),
                    what=f"W of shape {shape}")


@graded("spectral_radius", "a large (300, 300) matrix works")
def test_spectral_radius_large(sub, ref):
    W = _rng(77).standard_normal((300, 300)) / np.sqrt(300)
    expect_float(*both(sub, ref, "spectral_radius", W), rtol=1e-9,
                 what="spectral_radius of a generated (300, 300) matrix")


# ---------------------------------------------------------------- bptt_jacobian


@graded("bptt_jacobian", "random non-symmetric W_hh and pre-activations of several shapes match")
def test_bptt_random(sub, ref):
    rng = _rng(80)
    for T, d in ((1, 1), (1, 3), (2, 4), (5, 4), (8, 6), (3, 1), (4, 2)):
        W = rng.standard_normal((d, d)) * 1.2 / np.sqrt(d)
        A = rng.standard_normal((T, d))
        expect_array(*both(sub, ref, "bptt_jacobian", W, A),
                     what=f"bptt_jacobian with W_hh ({d}, {d}) and pre-activations ({T}, {d})")


@graded("bptt_jacobian", "T = 1 gives diag(1 - tanh²(a_1)) W_hh")
def test_bptt_one_step(sub, ref):
    rng = _rng(81)
    W = rng.standard_normal((4, 4))
    a = rng.standard_normal(4) * 1.5
    expect_array(sub.bptt_jacobian(W, a[None, :]), (1.0 - np.tanh(a) ** 2)[:, None] * W,
                 what="bptt_jacobian with T = 1 on a generated (4, 4) W_hh")


@graded("bptt_jacobian",
        "uses W_hh, not its transpose: zero pre-activations give W_hh^T (matrix power)")
def test_bptt_not_transposed(sub, ref):
    W = np.array([[0.5, 1.0, 0.0], [-0.2, 0.3, 0.7], [0.4, 0.0, -0.6]])
    for T in (1, 2, 5):
        expect_array(sub.bptt_jacobian(W, np.zeros((T, 3))), np.linalg.matrix_power(W, T),
                     what=f"bptt_jacobian with zero pre-activations, T = {T}")


@graded("bptt_jacobian", "later steps multiply on the left: J_T ... J_1, not J_1 ... J_T")
def test_bptt_order(sub, ref):
    rng = _rng(82)
    W = rng.standard_normal((3, 3))
    A = np.array([[0.0, 2.0, -1.0], [1.5, 0.0, 0.3], [-0.7, 1.0, 2.5]])
    for T in (2, 3):
        expect_array(*both(sub, ref, "bptt_jacobian", W, A[:T]),
                     what=f"bptt_jacobian with T = {T} on a generated (3, 3) W_hh")


@graded("bptt_jacobian", "the tanh derivative scales rows (diag on the left of W_hh)")
def test_bptt_diag_left(sub, ref):
    W = np.arange(1.0, 10.0).reshape(3, 3) / 10.0
    A = np.array([[0.0, 1.0, 2.0]])
    expect_array(*both(sub, ref, "bptt_jacobian", W, A),
                 what="bptt_jacobian with T = 1 and a (3, 3) W_hh")


@graded("bptt_jacobian", "λQ over 50 steps gives norm 0.9^50, 1 and 1.1^50 ≈ 117.4 (lesson)")
def test_bptt_lesson_norms(sub, ref):
    Q = _orthonormal(5, 5, _rng(83))
    for lam in (0.9, 1.0, 1.1):
        J = _array(sub.bptt_jacobian(lam * Q, np.zeros((50, 5))), (5, 5),
                   "bptt_jacobian(λQ, zeros (50, 5))")
        if not np.isfinite(J).all():  # the 2-norm's SVD would raise on the grader's side
            fail("bptt_jacobian(λQ, zeros (50, 5)) holds NaN or inf")
        expect_float(float(np.linalg.norm(J, 2)), lam ** 50, rtol=1e-9,
                     what="spectral norm of bptt_jacobian(λQ, zeros (50, 5))")


@graded("bptt_jacobian", "saturated pre-activations (|a| up to 30) give tiny numbers, not NaN",
        trivial=True)
def test_bptt_saturated(sub, ref):
    rng = _rng(84)
    W = rng.standard_normal((4, 4))
    A = rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(10.0, 30.0, (3, 4))
    expect_array(*both(sub, ref, "bptt_jacobian", W, A),
                 what="bptt_jacobian on generated saturated pre-activations (3, 4)")


@graded("bptt_jacobian", "float32 in gives float32 out")
def test_bptt_float32(sub, ref):
    rng = _rng(85)
    W = (rng.standard_normal((4, 4)) / 2).astype(np.float32)
    A = rng.standard_normal((5, 4)).astype(np.float32)
    expect_array(sub.bptt_jacobian(W, A),
                 ref.bptt_jacobian(W.astype(np.float64), A.astype(np.float64)),
                 dtype="float32", what="bptt_jacobian on float32 inputs (4, 4), (5, 4)")


# Third review: float16 came back float32 (no test had float16 input).
@graded("bptt_jacobian", "float16 in gives float16 out (to float16 arithmetic's error)")
def test_bptt_float16(sub, ref):
    rng = _rng(86)
    W = (rng.standard_normal((4, 4)) / 2).astype(np.float16)
    A = rng.standard_normal((3, 4)).astype(np.float16)
    expected = ref.bptt_jacobian(W.astype(np.float64), A.astype(np.float64))
    # docs/design/exercise-api.md states no working precision here: three products in float16 are allowed
    expect_array(sub.bptt_jacobian(W, A), expected, dtype="float16", rtol=0,
                 atol=2.0**-5 * float(np.abs(expected).max()),
                 what="bptt_jacobian on float16 inputs (4, 4), (3, 4)")


# Third review: T = 0 refused as a shape mismatch (no test had an empty sequence).
@graded("bptt_jacobian", "no steps (pre_activations of shape (0, d)) give the identity, the empty "
        "product", trivial=True)
def test_bptt_no_steps(sub, ref):
    W = _rng(87).standard_normal((3, 3))
    expect_array(sub.bptt_jacobian(W, np.zeros((0, 3))), np.eye(3),
                 what="bptt_jacobian of a (3, 3) W_hh with pre_activations of shape (0, 3)")
    expect_array(sub.bptt_jacobian(np.array([[2, 1], [0, 1]]), np.zeros((0, 2), dtype=np.int64)),
                 np.eye(2), what="bptt_jacobian of an int (2, 2) W_hh with no steps")


# Third review, second tests: float16 over one step and two, and no steps for d = 1 and 4.
@graded("bptt_jacobian", "float16 over one and two steps (d = 2) gives float16; no steps gives "
        "the identity for d = 1 and d = 4")
def test_bptt_float16_and_no_steps_more(sub, ref):
    rng = _rng(88)
    W = np.array([[0.5, -0.25], [0.75, 0.5]], dtype=np.float16)
    for T in (1, 2):
        A = rng.standard_normal((T, 2)).astype(np.float16)
        expected = ref.bptt_jacobian(W.astype(np.float64), A.astype(np.float64))
        expect_array(sub.bptt_jacobian(W, A), expected, dtype="float16", rtol=0,
                     atol=2.0**-5 * float(np.abs(expected).max()),
                     what=f"bptt_jacobian on float16 inputs (2, 2), ({T}, 2)")
    for d in (1, 4):
        expect_array(sub.bptt_jacobian(rng.standard_normal((d, d)), np.zeros((0, d))), np.eye(d),
                     what=f"bptt_jacobian of a ({d}, {d}) W_hh with no steps")


@graded("bptt_jacobian", "integers give float64")
def test_bptt_int(sub, ref):
    Wi = np.array([[1, 0], [2, -1]])
    Ai = np.array([[0, 1], [1, 0]])
    expect_array(sub.bptt_jacobian(Wi, Ai), ref.bptt_jacobian(Wi.astype(float), Ai.astype(float)),
                 what="bptt_jacobian on int64 inputs (2, 2), (2, 2)")


@graded("bptt_jacobian", "huge pre-activations (|a| up to 1000, float64) give zeros or tiny "
        "numbers, never NaN or inf", trivial=True)
def test_bptt_huge_float64(sub, ref):
    rng = _rng(88)
    W = rng.standard_normal((3, 3))
    A = rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(300.0, 1000.0, (2, 3))
    A[0, 0] = 5.0  # one unsaturated entry
    expect_array(*both(sub, ref, "bptt_jacobian", W, A),
                 what="bptt_jacobian on generated huge pre-activations (2, 3)")


@graded("bptt_jacobian", "huge pre-activations in float32 (|a| from 45 to 100) give tiny "
        "numbers, never NaN or inf", trivial=True)
def test_bptt_huge_float32(sub, ref):
    rng = _rng(89)
    W = rng.standard_normal((3, 3)).astype(np.float32)
    A = (rng.choice([-1.0, 1.0], (1, 3)) * rng.uniform(45.0, 100.0, (1, 3))).astype(np.float32)
    expect_array(sub.bptt_jacobian(W, A),
                 ref.bptt_jacobian(W.astype(np.float64), A.astype(np.float64)),
                 dtype="float32", what="bptt_jacobian on generated huge float32 "
                                       "pre-activations (1, 3)")


@graded("bptt_jacobian", "a large hidden size (d = 300) works")
def test_bptt_large(sub, ref):
    rng = _rng(79)
    W = rng.standard_normal((300, 300)) / np.sqrt(300)
    A = rng.standard_normal((2, 300))
    expect_array(*both(sub, ref, "bptt_jacobian", W, A),
                 what="bptt_jacobian with W_hh (300, 300) and pre-activations (2, 300)")


@graded("bptt_jacobian", "matches the reference on generated shapes and scales")
@given(seed=seeds, T=st.integers(1, 10), d=small_dims, scale=st.floats(0.3, 2.0))
def test_bptt_property(sub, ref, seed, T, d, scale):
    rng = _rng(seed)
    W = scale * rng.standard_normal((d, d)) / np.sqrt(d)
    A = rng.standard_normal((T, d)) * 2.0
    expect_array(sub.bptt_jacobian(W, A), ref.bptt_jacobian(W, A),
                 what=f"bptt_jacobian with W_hh ({d}, {d}) and pre-activations ({T}, {d})")


@graded("bptt_jacobian", "pre-activations that are not (T, d) raise ValueError naming an "
        "offending shape")
def test_bptt_shape_errors(sub, ref):
    rng = _rng(86)
    cases = (((3, 3), (4, 2)), ((3, 3), (4, 4)), ((3, 3), (3,)), ((3, 3), (2, 3, 3)))
    for w_shape, a_shape in cases:
        exc = expect_raises("ValueError", sub.bptt_jacobian, rng.standard_normal(w_shape),
                            rng.standard_normal(a_shape),
                            what=f"W_hh {w_shape} with pre-activations {a_shape}")
        # Either shape is offending where the two do not fit (the exercise API's rule: any
        # of the offending shapes will do).
        expect_message_names(exc, (str(a_shape), str(w_shape)))


# The row's "ValueError when shapes do not match" where NumPy would let the mismatch through:
# a width-1 a_t broadcasts against any d (diag(1 - tanh²) as a column times W_hh), and a
# (T, d') a_t over a 1 × 1 W_hh broadcasts into a (d', 1) product. The other shape-error test's
# mismatches all fail inside NumPy, so a width check of > or < alone passed it (mutation run of
# 2026-12-07). No message is asked for here: that test grades the message.
@graded("bptt_jacobian", "pre-activations of the wrong width raise ValueError also where "
        "broadcasting would let them through ((2, 1) under a (3, 3) W_hh, (1, 4) over (1, 1))")
def test_bptt_width_broadcasts(sub, ref):
    rng = _rng(189)
    for w_shape, a_shape in (((3, 3), (2, 1)), ((2, 2), (1, 1)), ((1, 1), (1, 4)),
                             ((1, 1), (2, 3))):
        expect_raises("ValueError", sub.bptt_jacobian, rng.standard_normal(w_shape),
                      rng.standard_normal(a_shape),
                      what=f"W_hh {w_shape} with pre-activations {a_shape}")


@graded("bptt_jacobian", "a W_hh that is not square 2-D raises ValueError naming its shape")
def test_bptt_w_errors(sub, ref):
    rng = _rng(78)
    cases = (((2, 3), (4, 3)), ((2, 3), (4, 2)), ((3, 2), (4, 3)), ((3,), (4, 3)),
             ((2, 2, 2), (4, 2)))
    for w_shape, a_shape in cases:
        expect_rule("ValueError", sub.bptt_jacobian, rng.standard_normal(w_shape),
                    rng.standard_normal(a_shape),
                    what=f"W_hh {w_shape} with pre-activations {a_shape}", naming=(str(w_shape),))


# ---------------------------------------------------------------- condition_number


@graded("condition_number", "random square, tall and wide full-rank matrices match σ_max/σ_min")
def test_condition_random(sub, ref):
    rng = _rng(90)
    for shape in ((2, 2), (5, 5), (8, 3), (3, 8), (1, 4), (4, 1), (16, 16)):
        A = rng.standard_normal(shape)
        expect_float(*both(sub, ref, "condition_number", A),
                     what=f"condition_number of a generated {shape} matrix")


@graded("condition_number", "a non-normal matrix: singular values, not eigenvalues")
def test_condition_non_normal(sub, ref):
    A = np.array([[1.0, 100.0], [0.0, 1.0]])
    expect_float(*both(sub, ref, "condition_number", A),
                 what="condition_number([[1, 100], [0, 1]])")


@graded("condition_number", "rank-deficient float64 matrices (square, tall, wide) give inf",
        trivial=True)
def test_condition_rank_deficient(sub, ref):
    rng = _rng(91)
    for m, n, r in ((4, 4, 2), (6, 4, 3), (4, 6, 3), (5, 5, 4), (8, 8, 1)):
        A = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
        _expect_inf(sub.condition_number(A),
                    f"condition_number of a generated rank-{r} ({m}, {n}) matrix")
    # A dense repeated row: singular exactly, yet its computed σ_min is rounding (~1e-16·σ_max,
    # never 0), so np.linalg.cond's huge finite number is caught on every BLAS kernel. Its place
    # was test_condition_exactly_singular, where a variant's verdict then followed the kernel
    # (docs/design/measured-facts.md, "The same grades on every BLAS kernel").
    B = _rng(92).standard_normal((4, 4))
    B[3] = B[0]
    _expect_inf(sub.condition_number(B), "condition_number of a generated rank-3 (4, 4) matrix")


@graded("condition_number",
        "exactly singular matrices (zero matrix, repeated row, zero column) give inf",
        trivial=True)
def test_condition_exactly_singular(sub, ref):
    rng = _rng(92)
    # The repeated row repeats a row of a scaled signed permutation: every singular value (and
    # every eigenvalue of BᵀB, which is diagonal) is exact on every BLAS kernel, so each
    # method's verdict here is the method's, not the rounding's.
    B = _signed_permutation(4, rng) * np.array([[3.0], [2.0], [1.5], [0.5]])
    B[3] = B[0]
    C = rng.standard_normal((5, 3))
    C[:, 1] = 0.0
    for A in (np.zeros((3, 3)), B, C, np.zeros((2, 5)), np.array([[0.0]])):
        _expect_inf(sub.condition_number(A),
                    f"condition_number of a generated singular {A.shape} matrix")


@graded("condition_number",
        "the singular threshold uses the input's eps: float32 rank-deficient gives inf",
        trivial=True)
def test_condition_float32_rank_deficient(sub, ref):
    rng = _rng(93)
    for m, n, r in ((4, 4, 2), (6, 4, 3), (4, 6, 3), (5, 5, 4)):
        A = (rng.standard_normal((m, r)) @ rng.standard_normal((r, n))).astype(np.float32)
        _expect_inf(sub.condition_number(A),
                    f"condition_number of a generated float32 rank-{r} ({m}, {n}) matrix")


@graded("condition_number", "threshold max(m, n)·eps·σ_max per dtype (float64, float32, float16)")
def test_condition_threshold_by_dtype(sub, ref):
    rng = _rng(94)
    # (dtype, small singular value, singular at that dtype?) on exactly representable matrices
    cases = ((np.float64, 2.0 ** -40, False), (np.float64, 2.0 ** -55, True),
             (np.float32, 2.0 ** -18, False), (np.float32, 2.0 ** -25, True),
             (np.float16, 2.0 ** -6, False), (np.float16, 2.0 ** -12, True))
    for dtype, small, singular in cases:
        P1, P2 = _signed_permutation(3, rng), _signed_permutation(3, rng)
        A = (P1 @ np.diag([1.0, 0.5, small]) @ P2).astype(dtype)
        what = (f"condition_number of a generated {np.dtype(dtype).name} (3, 3) matrix with a "
                "small singular value")
        if singular:
            _expect_inf(sub.condition_number(A), what)
        else:
            expect_float(sub.condition_number(A), 1.0 / small, what=what)


def _sparse_singular(m: int, n: int, svals: list[float], rng: np.random.Generator,
                     dtype: type) -> np.ndarray:
    """An (m, n) matrix holding one ±σ per row and column, so its singular values are exactly
    ``svals`` (and zeros): each σ at a random row and column of its own."""
    A = np.zeros((m, n))
    rows, cols = rng.permutation(m)[:len(svals)], rng.permutation(n)[:len(svals)]
    A[rows, cols] = np.asarray(svals) * rng.choice([-1.0, 1.0], len(svals))
    return A.astype(dtype)


@graded("condition_number", "tall and wide matrices near the threshold: max(m, n)·eps counts "
        "the long side (float64 and float32)")
def test_condition_threshold_long_side(sub, ref):
    rng = _rng(97)
    for dtype in (np.float64, np.float32):
        eps = float(np.finfo(dtype).eps)
        for shape in ((64, 2), (2, 64)):
            # 8·eps lies between min(m, n)·eps and max(m, n)·eps: singular only by the long side
            A = _sparse_singular(*shape, [1.0, 8 * eps], rng, dtype)
            _expect_inf(sub.condition_number(A),
                        f"condition_number of a generated {np.dtype(dtype).name} {shape} matrix "
                        "with σ_min = 8·eps·σ_max")
        # 96·eps lies above 64·eps (and below m·n·eps = 128·eps): regular
        A = _sparse_singular(64, 2, [1.0, 96 * eps], rng, dtype)
        expect_float(sub.condition_number(A), 1.0 / (96 * eps), rtol=4 * eps,
                     what=f"condition_number of a generated {np.dtype(dtype).name} (64, 2) matrix "
                          "with σ_min = 96·eps·σ_max")


@graded("condition_number", "σ_min exactly at max(m, n)·eps·σ_max is singular (≤, not <): inf in "
        "float64 and float32, square and tall", trivial=True)
def test_condition_threshold_equality(sub, ref):
    rng = _rng(98)
    for dtype in (np.float64, np.float32):
        eps = float(np.finfo(dtype).eps)
        for m, n in ((4, 4), (8, 2)):
            A = _sparse_singular(m, n, [1.0, max(m, n) * eps], rng, dtype)
            _expect_inf(sub.condition_number(A),
                        f"condition_number of a generated {np.dtype(dtype).name} ({m}, {n}) "
                        "matrix with σ_min exactly at the threshold")


@graded("condition_number",
        "ill-conditioned but regular (κ = 1e12) is finite (within 1e-3: ill-posed)")
def test_condition_ill_conditioned(sub, ref):
    rng = _rng(95)
    for shape in ((4, 4), (6, 3)):
        s = np.geomspace(1.0, 1e-12, min(shape))
        A = _with_singular_values(*shape, s, rng)
        expect_float(*both(sub, ref, "condition_number", A), rtol=1e-3,
                     what=f"condition_number of a generated ill-conditioned {shape} matrix")


@graded("condition_number", "float32 input gives κ to float32 accuracy (κ ≤ 10, rtol 1e-5)")
def test_condition_float32(sub, ref):
    rng = _rng(96)
    for shape in ((4, 4), (5, 3)):
        A = _well_conditioned(*shape, rng).astype(np.float32)
        expect_float(sub.condition_number(A), ref.condition_number(A.astype(np.float64)),
                     rtol=1e-5, what=f"condition_number of a generated float32 {shape} matrix")


@graded("condition_number",
        "1×1 and integer matrices: [[5]] is 1, [[-2]] is 1, [[1, 2], [3, 4]] matches")
def test_condition_small_and_int(sub, ref):
    expect_float(sub.condition_number(np.array([[5.0]])), 1.0, what="condition_number([[5]])")
    expect_float(sub.condition_number(np.array([[-2.0]])), 1.0, what="condition_number([[-2]])")
    A = np.array([[1, 2], [3, 4]])
    expect_float(sub.condition_number(A), ref.condition_number(A.astype(float)),
                 what="condition_number of int matrix [[1, 2], [3, 4]]")


@graded("condition_number", "κ(cA) = κ(A), κ(Aᵀ) = κ(A) and κ(Q) = 1 for orthogonal Q")
@given(seed=seeds, m=dims, n=dims, log_c=st.floats(-6.0, 6.0))
def test_condition_property(sub, ref, seed, m, n, log_c):
    rng = _rng(seed)
    A = _well_conditioned(m, n, rng, kappa=50.0)
    kappa = ref.condition_number(A)
    what = f"condition_number of a generated ({m}, {n}) matrix"
    expect_float(sub.condition_number(A), kappa, what=what)
    expect_float(sub.condition_number(10.0 ** log_c * A), kappa, what=what + " times c")
    expect_float(sub.condition_number(A.T), kappa, what=what + ", transposed")
    Q = _orthonormal(max(m, n), min(m, n), rng)
    expect_float(sub.condition_number(Q), 1.0, what=f"condition_number of a generated "
                                                    f"orthonormal {Q.shape} matrix")


# ---------------------------------------------------------------- is_positive_definite


@graded("is_positive_definite",
        "random symmetric positive definite matrices (n = 1 to 10) are True", trivial=True)
def test_pd_random_spd(sub, ref):
    rng = _rng(100)
    for n in (1, 2, 3, 6, 10):
        X = rng.standard_normal((n, n + 2))
        _bool(sub, X @ X.T, True, f"is_positive_definite of a generated ({n}, {n}) Gram matrix")
        _bool(sub, _spd(n, rng, kappa=1e6), True,
              f"is_positive_definite of a generated ill-conditioned ({n}, {n}) SPD matrix")


@graded("is_positive_definite", "symmetric indefinite and negative definite matrices are False",
        trivial=True)
def test_pd_indefinite(sub, ref):
    rng = _rng(101)
    for n in (2, 4, 7):
        Q = _orthonormal(n, n, rng)
        eig = np.linspace(1.0, 2.0, n)
        eig[rng.integers(n)] = -0.01
        A = (Q * eig) @ Q.T
        _bool(sub, (A + A.T) / 2, False,
              f"is_positive_definite of a generated indefinite ({n}, {n}) matrix")
        _bool(sub, -_spd(n, rng), False,
              f"is_positive_definite of a generated negative definite ({n}, {n}) matrix")


@graded("is_positive_definite",
        "non-symmetric matrices are False, even with a definite symmetric part", trivial=True)
def test_pd_nonsymmetric_hidden(sub, ref):
    rng = _rng(102)
    _bool(sub, np.array([[1.0, 3.0], [0.0, 1.0]]), False, "is_positive_definite([[1, 3], [0, 1]])")
    for n in (2, 3, 6):
        S = _spd(n, rng, kappa=2.0) * 5.0
        K = rng.standard_normal((n, n))
        _bool(sub, S + 0.1 * (K - K.T), False,
              f"is_positive_definite of a generated non-symmetric ({n}, {n}) matrix")
        _bool(sub, S + np.triu(rng.uniform(0.1, 1.0, (n, n)), 1), False,
              f"is_positive_definite of a generated upper-perturbed ({n}, {n}) matrix")


@graded("is_positive_definite", "asymmetry within 1e-10·max|A| is symmetric enough, at any scale",
        trivial=True)
def test_pd_nearly_symmetric(sub, ref):
    rng = _rng(103)
    for scale in (1.0, 1e6, 1e-6):
        S = _spd(5, rng, kappa=10.0) * scale
        E = rng.uniform(-1.0, 1.0, (5, 5)) * 1e-12 * np.max(np.abs(S))
        _bool(sub, S + E, True,
              "is_positive_definite of a generated (5, 5) SPD matrix with rounding-level asymmetry")
    # exactly at the bound: max|A − Aᵀ| = 1e-10 = 1e-10 · max|A| counts as symmetric
    _bool(sub, np.array([[1.0, 0.0], [1e-10, 1.0]]), True,
          "is_positive_definite of a (2, 2) matrix whose asymmetry is exactly 1e-10·max|A|")


# guards against demanding exact symmetry (A == Aᵀ): a product Q Λ Qᵀ rounds asymmetrically
@graded("is_positive_definite", "Q Λ Qᵀ computed as a product, not symmetrised (rounding-level "
        "asymmetry), is True for n = 6 and 12", trivial=True)
def test_pd_product_rounding(sub, ref):
    rng = _rng(140)
    for n in (6, 12):
        Q = _orthonormal(n, n, rng)
        A = (Q * np.linspace(1.0, 4.0, n)) @ Q.T * 1e3
        _bool(sub, A, True, f"is_positive_definite of a generated ({n}, {n}) SPD matrix built "
                            "as a product")


@graded("is_positive_definite",
        "asymmetry beyond 1e-10·max|A| is False (relative, not absolute or allclose)",
        trivial=True)
def test_pd_asymmetry_tolerance(sub, ref):
    rng = _rng(104)
    for scale, rel in ((1.0, 1e-7), (1e-6, 1e-8), (1e3, 1e-9)):
        S = _spd(4, rng, kappa=10.0) * scale
        E = np.zeros((4, 4))
        E[0, 2] = rel * np.max(np.abs(S))
        _bool(sub, S + E, False,
              "is_positive_definite of a generated (4, 4) SPD matrix with a small asymmetry")


# guards against np.allclose(A, Aᵀ): its atol 1e-8 and rtol 1e-5 are loose, not 1e-10·max|A|
@graded("is_positive_definite", "an antisymmetric perturbation beyond 1e-10·max|A| in every "
        "entry is False (tiny and large scales)", trivial=True)
def test_pd_antisymmetric_perturbation(sub, ref):
    rng = _rng(141)
    for scale, rel in ((1e-9, 1e-4), (1e2, 1e-8)):
        S = _spd(6, rng, kappa=3.0) * scale
        K = rng.uniform(-1.0, 1.0, (6, 6))
        _bool(sub, S + rel * np.max(np.abs(S)) * (K - K.T) / 2, False,
              "is_positive_definite of a generated (6, 6) SPD matrix with an antisymmetric "
              "perturbation")


@graded("is_positive_definite", "NaN or inf entries give False", trivial=True)
def test_pd_non_finite(sub, ref):
    rng = _rng(105)
    for where, value in (((0, 0), np.inf), ((2, 2), np.nan), ((1, 2), np.nan), ((0, 0), -np.inf),
                         ((1, 1), np.inf)):
        A = _spd(3, rng, kappa=5.0)
        A[where] = value
        A[where[::-1]] = value
        _bool(sub, A, False,
              "is_positive_definite of a generated (3, 3) matrix with a non-finite entry")


# guards against no finiteness check: Cholesky reads one triangle and never sees the other
@graded("is_positive_definite", "a NaN or inf in the upper triangle only gives False "
        "(float64 and float32)", trivial=True)
def test_pd_non_finite_upper(sub, ref):
    rng = _rng(142)
    for (where, value), dtype in ((((0, 3), np.nan), np.float64), (((1, 2), np.inf), np.float32),
                                  (((0, 1), -np.inf), np.float64)):
        A = _spd(4, rng, kappa=3.0).astype(dtype)
        A[where] = value
        _bool(sub, A, False, f"is_positive_definite of a generated {np.dtype(dtype).name} (4, 4) "
                             "matrix with a non-finite entry")


@graded("is_positive_definite",
        "singular PSD Gram matrices (dependent rows) are False: Cholesky fails", trivial=True)
def test_pd_singular_gram(sub, ref):
    X = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]])  # row 4 = row 1 + row 2
    for G in (X @ X.T, 4.0 * (X @ X.T), np.ones((2, 2)), np.array([[4.0, 2.0], [2.0, 1.0]]),
              np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0]])):
        _bool(sub, G, False, f"is_positive_definite of a singular {G.shape} Gram matrix")


@graded("is_positive_definite", "edge cases: the zero matrix, [[3]], [[0]], [[-1]], and a "
        "positive definite matrix that is not diagonally dominant")
def test_pd_edge(sub, ref):
    _bool(sub, np.zeros((3, 3)), False, "is_positive_definite(zeros (3, 3))")
    # diagonal 2, every other entry 1.5: eigenvalues 5, 0.5, 0.5, but 2 < 1.5 + 1.5 (a
    # diagonal-dominance shortcut says False; seventh red team)
    _bool(sub, np.full((3, 3), 1.5) + 0.5 * np.eye(3), True,
          "is_positive_definite of a (3, 3) matrix with 2 on the diagonal and 1.5 elsewhere")
    _bool(sub, np.array([[3.0]]), True, "is_positive_definite([[3]])")
    _bool(sub, np.array([[0.0]]), False, "is_positive_definite([[0]])")
    _bool(sub, np.array([[-1.0]]), False, "is_positive_definite([[-1]])")


@graded("is_positive_definite", "float32 matrices work", trivial=True)
def test_pd_float32(sub, ref):
    S = _spd(4, _rng(106), kappa=10.0).astype(np.float32)
    _bool(sub, S, True, "is_positive_definite of a generated float32 (4, 4) SPD matrix")


@graded("is_positive_definite", "integer matrices work (one positive definite but not "
        "diagonally dominant)")
def test_pd_int(sub, ref):
    _bool(sub, np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 2]]), True,
          "is_positive_definite of int matrix tridiag(-1, 2, -1)")
    _bool(sub, np.full((3, 3), 2) + np.eye(3, dtype=int), True,  # eigenvalues 7, 1, 1; 3 < 2 + 2
          "is_positive_definite of the int matrix with 3 on the diagonal and 2 elsewhere")
    _bool(sub, np.array([[1, 2], [2, 1]]), False, "is_positive_definite of int [[1, 2], [2, 1]]")


@graded("is_positive_definite",
        "matches the sign of the eigenvalues on generated symmetric matrices")
@given(seed=seeds, n=dims, n_neg=st.integers(0, 2), log_scale=st.floats(-3.0, 3.0))
# always one positive definite (6, 6) matrix that is not diagonally dominant: ten draws may
# hold none (seventh red team: a diagonal-dominance shortcut passed)
@example(seed=0, n=6, n_neg=0, log_scale=0.0)
def test_pd_property(sub, ref, seed, n, n_neg, log_scale):
    rng = _rng(seed)
    eig = rng.uniform(0.05, 2.0, n)
    eig[: min(n_neg, n)] *= -1.0
    Q = _orthonormal(n, n, rng)
    A = (Q * eig) @ Q.T * 10.0 ** log_scale
    A = (A + A.T) / 2
    _bool(sub, A, bool(np.all(eig > 0)),
          f"is_positive_definite of a generated symmetric ({n}, {n}) matrix")


@graded("is_positive_definite", "a non-square matrix raises ValueError naming its shape")
def test_pd_not_square(sub, ref):
    for shape in ((2, 3), (4, 1)):
        expect_rule("ValueError", sub.is_positive_definite, np.ones(shape),
                    what=f"A of shape {shape}", naming=(str(shape),))


@graded("is_positive_definite", "a non-square float32 or integer matrix, even one holding an "
        "identity block, raises ValueError naming its shape")
def test_pd_not_square_other(sub, ref):
    for A in (np.eye(3, 5, dtype=np.float32), np.eye(6, 2, dtype=np.int64),
              np.ones((1, 3), dtype=np.float32)):
        expect_rule("ValueError", sub.is_positive_definite, A,
                    what=f"a {A.dtype} A of shape {A.shape}", naming=(str(A.shape),))


@graded("is_positive_definite", "1-D and 3-D input raise ValueError naming the shape")
def test_pd_bad_rank(sub, ref):
    for shape in ((4,), (2, 2, 2)):
        expect_rule("ValueError", sub.is_positive_definite, np.ones(shape),
                    what=f"A of shape {shape}", naming=(str(shape),))


# Not graded: bool matrices. docs/design/exercise-api.md promotes integer inputs only, and natural A - A.T code
# raises TypeError on bool arrays.


@graded("is_positive_definite", "extreme scales keep the verdict: entries near float64's limit "
        "(8e307) or tiny (1e-300)")
def test_pd_extreme_scales(sub, ref):
    A = np.array([[8e307, 5e307], [5e307, 8e307]])  # eigenvalues 1.3e308 and 3e307
    _bool(sub, A, True, "is_positive_definite of a (2, 2) SPD matrix with entries near 1e308")
    _bool(sub, np.array([[5e307, 8e307], [8e307, 5e307]]), False,
          "is_positive_definite of an indefinite (2, 2) matrix with entries near 1e308")
    S = _spd(4, _rng(107), kappa=10.0)
    _bool(sub, S * 1e-300, True, "is_positive_definite of a generated (4, 4) SPD matrix "
                                 "scaled by 1e-300")


@graded("is_positive_definite", "a large (300, 300) SPD matrix is True", trivial=True)
def test_pd_large(sub, ref):
    X = _rng(108).standard_normal((300, 310))
    _bool(sub, X @ X.T / 310.0 + np.eye(300), True,
          "is_positive_definite of a generated (300, 300) SPD matrix")


# ---------------------------------------------------------------- gram_matrix


@graded("gram_matrix", "random (n, d) matrices of several shapes give X Xᵀ of shape (n, n)")
def test_gram_random(sub, ref):
    rng = _rng(110)
    for shape in ((3, 5), (5, 3), (1, 4), (4, 1), (1, 1), (16, 64)):
        X = rng.standard_normal(shape)
        expect_array(*both(sub, ref, "gram_matrix", X),
                     what=f"gram_matrix of a generated {shape} matrix")


@graded("gram_matrix", "a square non-symmetric X gives X Xᵀ, not Xᵀ X")
def test_gram_square(sub, ref):
    X = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [4.0, 0.0, 1.0]])
    X[0, 1] = 5.0
    expect_array(*both(sub, ref, "gram_matrix", X), what="gram_matrix of a (3, 3) matrix")


@graded("gram_matrix", "orthonormal rows give the identity", trivial=True)
def test_gram_orthonormal(sub, ref):
    Q = _orthonormal(6, 3, _rng(111)).T  # (3, 6) orthonormal rows
    expect_array(sub.gram_matrix(Q), np.eye(3), what="gram_matrix of generated orthonormal rows")


@graded("gram_matrix", "float32 in gives float32 out")
def test_gram_float32(sub, ref):
    X = _rng(112).standard_normal((4, 7)).astype(np.float32)
    expect_array(sub.gram_matrix(X), ref.gram_matrix(X.astype(np.float64)), dtype="float32",
                 what="gram_matrix of a generated float32 (4, 7) matrix")


# guards against always computing in float64: float inputs keep their dtype
@graded("gram_matrix", "float16 in gives float16 out, and float32 for a tall X (values exact in "
        "float16)")
def test_gram_float16(sub, ref):
    rng = _rng(143)
    for shape, dtype in (((3, 6), "float16"), ((9, 2), "float32")):
        X = (rng.integers(-8, 9, shape) / 4.0).astype(dtype)  # quarters: every sum exact
        expect_array(sub.gram_matrix(X), ref.gram_matrix(X.astype(np.float64)), dtype=dtype,
                     what=f"gram_matrix of a generated {dtype} {shape} matrix")


@graded("gram_matrix", "integer input is promoted to float64")
def test_gram_int(sub, ref):
    X = np.array([[1, 2, 3], [4, 5, 6]])
    expect_array(sub.gram_matrix(X), ref.gram_matrix(X.astype(np.float64)),
                 what="gram_matrix of int matrix (2, 3)")


# Third review: X Xᵀ in X's integer dtype (one test saw it).
@graded("gram_matrix", "int32 and uint8 input, and a single row, are promoted to float64")
def test_gram_int_more(sub, ref):
    for X in (np.array([[1, -2], [3, 4], [0, 5]], dtype=np.int32),
              np.array([[200, 100, 7]], dtype=np.uint8)):
        expect_array(sub.gram_matrix(X), ref.gram_matrix(X.astype(np.float64)),
                     what=f"gram_matrix of a {X.dtype} matrix {X.shape}")


@graded("gram_matrix", "is symmetric with squared row norms on the diagonal (generated shapes)")
@given(seed=seeds, n=dims, d=dims)
def test_gram_property(sub, ref, seed, n, d):
    X = _rng(seed).standard_normal((n, d))
    G = sub.gram_matrix(X)
    expect_array(G, ref.gram_matrix(X), what=f"gram_matrix of a generated ({n}, {d}) matrix")
    expect_array(G.T, G, what=f"gram_matrix of a generated ({n}, {d}) matrix, transposed")
    expect_array(np.diag(G), np.sum(X * X, axis=1),
                 what=f"diagonal of gram_matrix of a generated ({n}, {d}) matrix")


# ---------------------------------------------------------------- newton_schulz_orthogonalize


@graded("newton_schulz_orthogonalize", "square G (κ ≤ 10) converges to U Vᵀ (within 1e-6)")
def test_ns_square(sub, ref):
    rng = _rng(120)
    for n in (2, 5, 16):
        G = _well_conditioned(n, n, rng)
        _polar_check(sub, G, f"newton_schulz_orthogonalize of a generated ({n}, {n}) matrix")


@graded("newton_schulz_orthogonalize", "tall G (κ ≤ 10) converges to U Vᵀ (within 1e-6)")
def test_ns_tall(sub, ref):
    rng = _rng(121)
    for shape in ((8, 3), (32, 8), (5, 1), (3, 2)):
        G = _well_conditioned(*shape, rng)
        _polar_check(sub, G, f"newton_schulz_orthogonalize of a generated {shape} matrix")


@graded("newton_schulz_orthogonalize", "wide G (κ ≤ 10) converges to U Vᵀ (within 1e-6)")
def test_ns_wide(sub, ref):
    rng = _rng(122)
    for shape in ((3, 8), (8, 32), (1, 5), (2, 3)):
        G = _well_conditioned(*shape, rng)
        _polar_check(sub, G, f"newton_schulz_orthogonalize of a generated {shape} matrix")


@graded("newton_schulz_orthogonalize",
        "scale invariant: 1e-12·G, 1e12·G, 1e-100·G and 1e100·G give G's result (within 1e-6)")
def test_ns_scale_invariant(sub, ref):
    rng = _rng(123)
    for shape in ((4, 4), (6, 3), (3, 6)):
        G = _well_conditioned(*shape, rng)
        # at 1e±100 the squares in ‖c·G‖_F (1e±200) are still normal floats: only a scaling
        # step that squares the scale (c² G, norm of c⁴) under- or overflows there
        for c in (1e-12, 1e12, 1e-100, 1e100):
            _polar_check(sub, c * G,
                         f"newton_schulz_orthogonalize of a scaled generated {shape} matrix")


@graded("newton_schulz_orthogonalize", "G = 0 gives zeros (square, tall, wide), not NaN",
        trivial=True)
def test_ns_zero(sub, ref):
    for shape in ((3, 3), (5, 2), (2, 5)):
        expect_array(sub.newton_schulz_orthogonalize(np.zeros(shape)), np.zeros(shape),
                     what=f"newton_schulz_orthogonalize(zeros {shape})")


@graded("newton_schulz_orthogonalize", "G = 0 in float32 gives float32 zeros, also after a "
        "single step", trivial=True)
def test_ns_zero_float32(sub, ref):
    for shape, n_iter in (((4, 4), 30), ((2, 6), 1), ((5, 3), 30)):
        G = np.zeros(shape, dtype=np.float32)
        expect_array(sub.newton_schulz_orthogonalize(G, n_iter=n_iter),
                     np.zeros(shape, dtype=np.float32),
                     what=f"newton_schulz_orthogonalize(float32 zeros {shape}, n_iter={n_iter})")


def _ns_steps(sub, ref, G: np.ndarray, n_iters: tuple, what) -> None:
    """The submission after each of ``n_iters`` steps equals the reference's (``what(n)``)."""
    for n_iter in n_iters:
        expect_array(*both(sub, ref, "newton_schulz_orthogonalize", G, n_iter=n_iter),
                     what=what(n_iter))


@graded("newton_schulz_orthogonalize", "n_iter is honoured: X0 = G/‖G‖_F, then the cubic step")
def test_ns_n_iter(sub, ref):
    rng = _rng(124)
    for shape in ((4, 4), (6, 3), (3, 5)):
        G = _well_conditioned(*shape, rng)
        _ns_steps(sub, ref, G, (0, 1, 3, 8), lambda n_iter: f"newton_schulz_orthogonalize with "
                  f"a small n_iter of a generated {shape} matrix")


# Third review: X0 = G/‖G‖_F skipped when ‖G‖_F < 1 (only the 1e-12 scale saw it).
@graded("newton_schulz_orthogonalize", "X0 = G/‖G‖_F also when ‖G‖_F < 1 (0.3 and 0.02): small "
        "n_iter")
def test_ns_n_iter_small_norm(sub, ref):
    rng = _rng(128)
    for shape, norm in (((4, 4), 0.3), ((5, 3), 0.02)):
        G = _well_conditioned(*shape, rng)
        G = G * (norm / np.linalg.norm(G))
        _ns_steps(sub, ref, G, (0, 2), lambda n_iter: f"newton_schulz_orthogonalize with "
                  f"n_iter = {n_iter} of a generated {shape} matrix of small norm")


# Third review: a default of 10 steps, not 30, still far from U Vᵀ at κ = 10 (one test).
@graded("newton_schulz_orthogonalize", "the default n_iter = 30 reaches U Vᵀ for tall and wide G "
        "with κ = 10 exactly (within 1e-6)")
def test_ns_default_iterations(sub, ref):
    rng = _rng(129)
    for m, n in ((24, 16), (16, 24)):
        # fifteen singular values of 1 and one of 0.1: ‖G‖_F = 4, so σ_min starts at 0.025
        s = np.array([1.0] * 15 + [0.1])
        G = _with_singular_values(m, n, s, rng)
        _polar_check(sub, G, f"newton_schulz_orthogonalize of a generated {(m, n)} matrix, κ = 10")


# Third review: iterating in float64 and returning float64 for float32 (one test).
@graded("newton_schulz_orthogonalize", "float32 stays float32 for a wide G and for G = I")
def test_ns_float32_more(sub, ref):
    G = _well_conditioned(3, 7, _rng(130)).astype(np.float32)
    expect_array(sub.newton_schulz_orthogonalize(G), _polar(G), dtype="float32",
                 what="newton_schulz_orthogonalize of a generated float32 (3, 7) matrix")
    expect_array(sub.newton_schulz_orthogonalize(np.eye(3, dtype=np.float32)), np.eye(3),
                 dtype="float32", what="newton_schulz_orthogonalize of a float32 identity (3, 3)")


@graded("newton_schulz_orthogonalize",
        "symmetric positive definite G gives I, negative definite -I")
def test_ns_spd(sub, ref):
    S = _spd(5, _rng(125), kappa=8.0) * 3.0
    _polar_check(sub, S, "newton_schulz_orthogonalize of a generated SPD (5, 5) matrix")
    expect_array(sub.newton_schulz_orthogonalize(-S), -np.eye(5), rtol=0.0, atol=1e-6,
                 what="newton_schulz_orthogonalize of a generated negative definite (5, 5)")


@graded("newton_schulz_orthogonalize", "an orthogonal G is a fixed point (within 1e-6)",
        trivial=True)
def test_ns_fixed_point(sub, ref):
    rng = _rng(126)
    for shape in ((5, 5), (7, 3)):
        Q = _orthonormal(shape[0], shape[1], rng)
        expect_array(sub.newton_schulz_orthogonalize(Q), Q, rtol=0.0, atol=1e-6,
                     what=f"newton_schulz_orthogonalize of a generated orthonormal {shape} matrix")


@graded("newton_schulz_orthogonalize", "float32 in gives float32 out (to float32 accuracy)")
def test_ns_float32(sub, ref):
    G = _well_conditioned(6, 4, _rng(127)).astype(np.float32)
    expect_array(sub.newton_schulz_orthogonalize(G), _polar(G), dtype="float32",
                 what="newton_schulz_orthogonalize of a generated float32 (6, 4) matrix")


@graded("newton_schulz_orthogonalize", "an integer G gives float64")
def test_ns_int(sub, ref):
    Gi = np.array([[3, 1], [1, 2], [0, 1]])
    _polar_check(sub, Gi, "newton_schulz_orthogonalize of int matrix (3, 2)")


# guards against always forming X Xᵀ: for this G that (m, m) product needs 8 GiB, more than a
# worker may hold, while Xᵀ X is (4, 4)
@graded("newton_schulz_orthogonalize", "a very tall (32768, 4) G converges to U Vᵀ (within "
        "1e-6): its Gram product must be formed on the smaller side")
def test_ns_very_tall(sub, ref):
    G = _well_conditioned(32768, 4, _rng(144))
    _polar_check(sub, G, "newton_schulz_orthogonalize of a generated (32768, 4) matrix")


@graded("newton_schulz_orthogonalize",
        "gives orthonormal columns (tall) or rows (wide), within 1e-6")
@given(seed=seeds, m=dims, n=dims)
def test_ns_property(sub, ref, seed, m, n):
    rng = _rng(seed)
    G = _well_conditioned(m, n, rng)
    what = f"newton_schulz_orthogonalize of a generated ({m}, {n}) matrix"
    X = _array(sub.newton_schulz_orthogonalize(G), (m, n), what)
    gram = X.T @ X if m >= n else X @ X.T
    expect_array(gram, np.eye(min(m, n)), rtol=0.0, atol=1e-6, what=what + ": orthonormality")
    expect_array(X, _polar(G), rtol=0.0, atol=1e-6, what=what)


# ---------------------------------------------------------------- sliding_window_mask


@graded("newton_schulz_orthogonalize",
        "forms the Gram product on the smaller side: a wide (8, 1024) or tall (1024, 8) G never "
        "holds a (1024, 1024) array (peak memory measured in the worker)", advisory=True)
def test_ns_smaller_side_memory(sub, ref):
    rng = _rng(128)
    big = 1024 * 1024 * 8  # bytes of the (1024, 1024) float64 Gram product on the wrong side
    for shape, side in (((8, 1024), "X Xᵀ (8, 8)"), ((1024, 8), "Xᵀ X (8, 8)")):
        G = _well_conditioned(*shape, rng)
        what = f"newton_schulz_orthogonalize of a generated {shape} matrix"
        out = sub.probe("peak_memory", TOPIC, "newton_schulz_orthogonalize", G, n_iter=3)
        if not isinstance(out, dict) or "peak_bytes" not in out:
            fail(f"could not measure the memory of {what} (got {describe(out)})")
        expect_array(out["result"], ref.newton_schulz_orthogonalize(G, n_iter=3),
                     what=what + " with n_iter = 3")
        if out["peak_bytes"] > big // 4:
            advice = f"form {side}, the smaller side, not the (1024, 1024) one (8 MiB)"
            fail(f"{what} held {out['peak_bytes'] / 2**20:.1f} MiB at once: {advice}",
                 f"{what} held more than 2 MiB at once: {advice}")



@graded("sliding_window_mask", "causal windows of several sizes: 0 ≤ i − j < window")
def test_window_causal_hidden(sub, ref):
    for n, w in ((1, 1), (6, 3), (10, 4), (33, 7), (64, 16), (7, 2)):
        expect_array(*both(sub, ref, "sliding_window_mask", n, w),
                     what=f"sliding_window_mask({n}, {w})")


@graded("sliding_window_mask", "non-causal windows of several sizes: |i − j| < window")
def test_window_band_hidden(sub, ref):
    for n, w in ((1, 1), (6, 3), (10, 4), (33, 7), (64, 16), (7, 2)):
        expect_array(*both(sub, ref, "sliding_window_mask", n, w, causal=False),
                     what=f"sliding_window_mask({n}, {w}, causal=False)")


@graded("sliding_window_mask", "rows are queries: query i sees keys j ≤ i (lower triangle)")
def test_window_orientation(sub, ref):
    got = sub.sliding_window_mask(4, 3, causal=True)
    expect_array(got, ref.sliding_window_mask(4, 3, causal=True),
                 what="sliding_window_mask(4, 3, causal=True)")


@graded("sliding_window_mask", "causal is the default")
def test_window_default_causal(sub, ref):
    expect_array(sub.sliding_window_mask(6, 3), ref.sliding_window_mask(6, 3, causal=True),
                 what="sliding_window_mask(6, 3)")


@graded("sliding_window_mask", "window ≥ n gives the full causal mask, or all True when not causal")
def test_window_large(sub, ref):
    for n, w in ((5, 5), (5, 8), (9, 1000), (1, 3)):
        expect_array(sub.sliding_window_mask(n, w), np.tril(np.ones((n, n), dtype=bool)),
                     what=f"sliding_window_mask({n}, {w})")
        expect_array(sub.sliding_window_mask(n, w, causal=False), np.ones((n, n), dtype=bool),
                     what=f"sliding_window_mask({n}, {w}, causal=False)")


@graded("sliding_window_mask", "window 1 lets each token see only itself (the identity)",
        trivial=True)
def test_window_one(sub, ref):
    for n in (1, 4, 9):
        for causal in (True, False):
            expect_array(sub.sliding_window_mask(n, 1, causal=causal), np.eye(n, dtype=bool),
                         what=f"sliding_window_mask({n}, 1, causal={causal})")


@graded("sliding_window_mask", "matches the reference for generated n, window and causality")
@given(n=st.integers(1, 40), window=st.integers(1, 45), causal=st.booleans())
def test_window_property(sub, ref, n, window, causal):
    expect_array(sub.sliding_window_mask(n, window, causal=causal),
                 ref.sliding_window_mask(n, window, causal=causal),
                 what=f"sliding_window_mask with n = {n}")


@graded("sliding_window_mask", "window < 1 raises ValueError naming the window")
def test_window_errors(sub, ref):
    for w in (0, -2):
        for causal in (True, False):
            expect_rule("ValueError", sub.sliding_window_mask, 6, w, causal=causal,
                        what=f"window = {w}, causal={causal}", naming=(str(w),))


@graded("sliding_window_mask", "n = 0 gives an empty (0, 0) bool mask", trivial=True)
def test_window_empty(sub, ref):
    for causal in (True, False):
        expect_array(sub.sliding_window_mask(0, 3, causal=causal), np.zeros((0, 0), dtype=bool),
                     what=f"sliding_window_mask(0, 3, causal={causal})")


# ---------------------------------------------------------------- mask_density


@graded("mask_density", "random masks of several shapes (1-D, batched 3-D, 1×1)")
def test_density_random(sub, ref):
    rng = _rng(130)
    for shape in ((7,), (5, 9), (2, 3, 4), (1, 1), (4, 16, 16)):
        mask = rng.random(shape) < rng.uniform(0.1, 0.9)
        expect_float(sub.mask_density(mask), np.count_nonzero(mask) / mask.size,
                     what=f"mask_density of a generated {shape} mask")


@graded("mask_density", "all True gives 1.0 and all False gives 0.0", trivial=True)
def test_density_extremes(sub, ref):
    for shape in ((3, 3), (1,), (2, 5, 4)):
        expect_float(sub.mask_density(np.ones(shape, dtype=bool)), 1.0,
                     what=f"mask_density(all True {shape})")
        expect_float(sub.mask_density(np.zeros(shape, dtype=bool)), 0.0,
                     what=f"mask_density(all False {shape})")


@graded("mask_density", "sliding-window masks (causal and not) have the counted density")
def test_density_windows(sub, ref):
    for n, w, causal in ((64, 8, True), (64, 8, False), (100, 100, True), (37, 5, False)):
        mask = ref.sliding_window_mask(n, w, causal=causal)
        expect_float(*both(sub, ref, "mask_density", mask),
                     what=f"mask_density of a ({n}, {n}) sliding-window mask")


@graded("mask_density", "a non-square mask counts every entry")
def test_density_non_square(sub, ref):
    mask = np.zeros((3, 8), dtype=bool)
    mask[:, :2] = True
    mask[0, 5] = True
    expect_float(sub.mask_density(mask), 7 / 24, what="mask_density of a (3, 8) mask")


@graded("mask_density", "matches the count of True entries on generated masks")
@given(seed=seeds, shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       p=st.floats(0.0, 1.0))
def test_density_property(sub, ref, seed, shape, p):
    mask = _rng(seed).random(tuple(shape)) < p
    expect_float(sub.mask_density(mask), np.count_nonzero(mask) / mask.size,
                 what=f"mask_density of a generated {tuple(shape)} mask")


# guards against returning NaN (the mean of nothing) for an empty mask
@graded("mask_density", "an empty batch of masks ((2, 0, 5), (0, 4, 4)) raises ValueError")
def test_density_empty_batched(sub, ref):
    for shape in ((2, 0, 5), (0, 4, 4)):
        expect_rule("ValueError", sub.mask_density, np.zeros(shape, dtype=bool),
                    what=f"an empty mask of shape {shape}")


@graded("mask_density", "an empty mask raises ValueError")
def test_density_empty(sub, ref):
    for shape in ((0, 0), (0,), (3, 0)):
        expect_rule("ValueError", sub.mask_density, np.zeros(shape, dtype=bool),
                    what=f"an empty mask of shape {shape}")
