"""Public tests of topic 7: eigenvalues, condition number, definiteness, orthogonality, sparsity."""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import (
    both,
    expect_array,
    expect_equal,
    expect_float,
    expect_raises,
    fail,
)
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import describe, graded

TOPIC = "ex07_matrix_properties"
CAT_DOG = np.array([[0.8, 0.3], [0.6, 0.7]])


def _orthogonal(d: int, seed: int) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return Q


@graded("spectral_radius", "a 90-degree rotation has eigenvalues ±i, so the radius is 1",
        trivial=True)
def test_spectral_radius_rotation(sub, ref):
    expect_float(sub.spectral_radius(np.array([[0.0, -1.0], [1.0, 0.0]])), 1.0)


@graded("spectral_radius", "a triangular matrix's radius is its largest diagonal modulus (0.9)")
def test_spectral_radius_triangular(sub, ref):
    expect_float(sub.spectral_radius(np.array([[0.5, 0.2], [0.0, 0.9]])), 0.9)


@graded("bptt_jacobian", "W_hh = 0.9 Q over 50 linear steps shrinks the gradient to 0.9^50")
def test_bptt_vanishing(sub, ref):
    W = 0.9 * _orthogonal(4, 0)
    J = sub.bptt_jacobian(W, np.zeros((50, 4)))
    expect_array(J, ref.bptt_jacobian(W, np.zeros((50, 4))), what="bptt_jacobian(0.9 Q, zeros)")
    expect_float(float(np.linalg.norm(J, 2)), 0.9 ** 50, rtol=1e-9, what="spectral norm of J")


@graded("bptt_jacobian", "a non-symmetric W_hh and varying pre-activations give J_T ... J_1")
def test_bptt_small(sub, ref):
    W = np.array([[0.5, 1.2], [-0.3, 0.8]])
    A = np.array([[0.1, -0.4], [0.7, 0.2], [-1.0, 0.5]])  # (T=3, d=2)
    expect_array(*both(sub, ref, "bptt_jacobian", W, A), what="bptt_jacobian(W, A)")


@graded("condition_number", "diag(10, 1) has condition number 10")
def test_condition_diag(sub, ref):
    expect_float(sub.condition_number(np.diag([10.0, 1.0])), 10.0)


@graded("condition_number", "the lesson's [[1, 1], [1, 1.0001]] has condition number about 40002")
def test_condition_lesson(sub, ref):
    A = np.array([[1.0, 1.0], [1.0, 1.0001]])
    expect_float(*both(sub, ref, "condition_number", A), rtol=1e-6)


@graded("condition_number", "a rank-1 matrix is singular: inf", trivial=True)
def test_condition_singular(sub, ref):
    got = sub.condition_number(np.array([[1.0, 2.0], [2.0, 4.0]]))
    if type(got) is not float or got != float("inf"):  # exact: inf is not a tolerance question
        shown = repr(got) if type(got) is float else describe(got)
        fail(f"condition_number([[1, 2], [2, 4]]): expected the float inf, got {shown}")


@graded("is_positive_definite", "[[2, 1], [1, 2]] is positive definite, [[1, 2], [2, 1]] is not")
def test_pd_small(sub, ref):
    expect_equal(sub.is_positive_definite(np.array([[2.0, 1.0], [1.0, 2.0]])), True,
                 what="is_positive_definite([[2, 1], [1, 2]])")
    expect_equal(sub.is_positive_definite(np.array([[1.0, 2.0], [2.0, 1.0]])), False,
                 what="is_positive_definite([[1, 2], [2, 1]])")


@graded("is_positive_definite", "a non-symmetric matrix is not positive definite", trivial=True)
def test_pd_nonsymmetric(sub, ref):
    expect_equal(sub.is_positive_definite(np.array([[2.0, 1.0], [0.0, 2.0]])), False,
                 what="is_positive_definite([[2, 1], [0, 2]])")


@graded("gram_matrix", "cat and dog give [[0.73, 0.69], [0.69, 0.85]]")
def test_gram_cat_dog(sub, ref):
    expect_array(sub.gram_matrix(CAT_DOG), np.array([[0.73, 0.69], [0.69, 0.85]]),
                 what="gram_matrix([cat, dog])")


@graded("newton_schulz_orthogonalize", "R(30°)·diag(3, 1) gives back the rotation (within 1e-6)")
def test_newton_schulz_rotation(sub, ref):
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    R = np.array([[c, -s], [s, c]])
    expect_array(sub.newton_schulz_orthogonalize(R @ np.diag([3.0, 1.0])), R, rtol=0.0, atol=1e-6,
                 what="newton_schulz_orthogonalize(R diag(3, 1))")


@graded("newton_schulz_orthogonalize", "a tall 3×2 matrix gets orthonormal columns (within 1e-6)")
def test_newton_schulz_tall(sub, ref):
    G = np.array([[0.8, 0.3], [0.6, 0.7], [0.1, 0.2]])
    U, _, Vt = np.linalg.svd(G, full_matrices=False)
    expect_array(sub.newton_schulz_orthogonalize(G), U @ Vt, rtol=0.0, atol=1e-6,
                 what="newton_schulz_orthogonalize of a 3×2 matrix")


@graded("sliding_window_mask", "n = 5, window 2, causal: each query sees itself and one before")
def test_window_causal(sub, ref):
    expect_array(*both(sub, ref, "sliding_window_mask", 5, 2),
                 what="sliding_window_mask(5, 2)")


@graded("sliding_window_mask", "n = 4, window 2, not causal: a band three wide")
def test_window_band(sub, ref):
    expect_array(*both(sub, ref, "sliding_window_mask", 4, 2, causal=False),
                 what="sliding_window_mask(4, 2, causal=False)")


@graded("mask_density", "the full causal mask of 5 tokens has density 15/25 = 0.6")
def test_density_causal(sub, ref):
    expect_float(sub.mask_density(np.tril(np.ones((5, 5), dtype=bool))), 0.6)


@graded("mask_density", "a causal window of 128 over 1024 tokens has density 0.117")
def test_density_window(sub, ref):
    mask = ref.sliding_window_mask(1024, 128)
    expect_float(sub.mask_density(mask), 122944 / 1024**2)


@graded("sliding_window_mask", "window 0 raises ValueError")
def test_window_zero(sub, ref):
    expect_raises("ValueError", sub.sliding_window_mask, 5, 0, what="window = 0")


add_docstring_tests(globals())
