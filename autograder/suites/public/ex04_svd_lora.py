"""Public tests of topic 4 (SVD, low rank, LoRA), on the lesson's numbers.

Singular vectors are defined only up to sign, so SVD results are judged by their properties
(orthonormal factors, descending σ, the reconstruction), never entry by entry.
"""

from __future__ import annotations

import numpy as np

from autograder.wire import codec
from autograder.authoring.checks import (
    expect_array,
    expect_equal,
    expect_float,
    expect_raises,
    expect_tensor,
    fail,
)
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import describe, graded

TOPIC = "ex04_svd_lora"

#: the lesson's 3×2 matrix: σ = 5 (direction [1, 1]/√2) and 1 (direction [1, -1]/√2)
W_TOY = np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])
#: the lesson's worked example: singular values [4, 2, 1, 0.5]
S_LESSON = np.array([4.0, 2.0, 1.0, 0.5])


def _lesson_matrix() -> np.ndarray:
    """A 4×4 matrix with singular values [4, 2, 1, 0.5] (fixed orthogonal factors)."""
    rng = np.random.default_rng(4)
    U, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    V, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    return (U * S_LESSON) @ V.T


@graded("truncated_svd", "the lesson's 3x2 matrix: k = 1 keeps sigma = 5 and the rank-1 part")
def test_truncated_svd_toy(sub, ref):
    got = sub.truncated_svd(W_TOY, 1)
    if not isinstance(got, list) or len(got) != 3:
        fail(f"expected a triple (U_k, S_k, Vt_k), got {describe(got)}")
    U_k, S_k, Vt_k = got
    for name, arr, shape in (("U_k", U_k, (3, 1)), ("S_k", S_k, (1,)), ("Vt_k", Vt_k, (1, 2))):
        if not isinstance(arr, np.ndarray) or arr.shape != shape:
            fail(f"{name}: expected shape {shape}, got {describe(arr)}")
    expect_array(S_k, np.array([5.0]), what="S_k")
    expect_array(U_k.T @ U_k, np.eye(1), what="U_k.T @ U_k (orthonormal columns)")
    # signs are free: compare the reconstruction, not the vectors
    expect_array((U_k * S_k) @ Vt_k, np.array([[2.5, 2.5], [2.5, 2.5], [0.0, 0.0]]),
                 what="U_k diag(S_k) Vt_k")


@graded("truncated_svd", "k = 0 raises ValueError")
def test_truncated_svd_k_zero(sub, ref):
    expect_raises("ValueError", sub.truncated_svd, W_TOY, 0, what="k = 0")


@graded("low_rank_approx", "the lesson's 3x2 matrix: the best rank-1 approximation")
def test_low_rank_toy(sub, ref):
    expect_array(sub.low_rank_approx(W_TOY, 1), np.array([[2.5, 2.5], [2.5, 2.5], [0.0, 0.0]]))


@graded("low_rank_approx", "k = min(m, n) gives W back", trivial=True)
def test_low_rank_full(sub, ref):
    W = _lesson_matrix()
    expect_array(sub.low_rank_approx(W, 4), W, rtol=1e-9, atol=1e-12)


@graded("eckart_young_error", "singular values [4, 2, 1, 0.5]: the rank-2 error is sqrt(1.25)")
def test_eckart_young_lesson(sub, ref):
    expect_float(sub.eckart_young_error(_lesson_matrix(), 2), np.sqrt(1.25), rtol=1e-9)


@graded("eckart_young_error", "keeping every singular value leaves an error of 0", trivial=True)
def test_eckart_young_zero(sub, ref):
    expect_float(sub.eckart_young_error(_lesson_matrix(), 4), 0.0, atol=1e-12)


@graded("rank_for_energy", "singular values [4, 2, 1, 0.5]: 90 % of the energy needs k = 2")
def test_rank_for_energy_lesson(sub, ref):
    expect_equal(sub.rank_for_energy(S_LESSON, 0.9), 2)


@graded("rank_for_energy", "an all-zero S gives 1", trivial=True)
def test_rank_for_energy_zero(sub, ref):
    expect_equal(sub.rank_for_energy(np.zeros(4), 0.9), 1)


@graded("power_iteration", "the lesson's 3x2 matrix: sigma1 = 5 and W v1 = sigma1 u1 (to 1e-6)")
def test_power_iteration_toy(sub, ref):
    got = sub.power_iteration(W_TOY)
    if not isinstance(got, list) or len(got) != 3:
        fail(f"expected a triple (sigma1, u1, v1), got {describe(got)}")
    sigma, u, v = got
    expect_float(sigma, 5.0, rtol=1e-6, atol=1e-6, what="sigma1")
    if not isinstance(u, np.ndarray) or u.shape != (3,):
        fail(f"u1: expected shape (3,), got {describe(u)}")
    if not isinstance(v, np.ndarray) or v.shape != (2,):
        fail(f"v1: expected shape (2,), got {describe(v)}")
    expect_array(np.abs(v), np.full(2, 1 / np.sqrt(2)), rtol=1e-6, atol=1e-6, what="|v1|")
    expect_array(W_TOY @ v, 5.0 * u, rtol=1e-6, atol=1e-6, what="W v1 vs sigma1 u1")


@graded("power_iteration", "a zero matrix gives sigma1 = 0 and unit vectors, not NaN")
def test_power_iteration_zero(sub, ref):
    got = sub.power_iteration(np.zeros((3, 2)))
    if not isinstance(got, list) or len(got) != 3:
        fail(f"expected a triple (sigma1, u1, v1), got {describe(got)}")
    sigma, u, v = got
    expect_float(sigma, 0.0, atol=1e-12, what="sigma1")
    for name, vec, n in (("u1", u, 3), ("v1", v, 2)):
        if not isinstance(vec, np.ndarray) or vec.shape != (n,):
            fail(f"{name}: expected shape ({n},), got {describe(vec)}")
        expect_float(float(np.linalg.norm(vec)), 1.0, rtol=1e-9, what=f"‖{name}‖")


@graded("LoRALinear", "a 16 -> 8 layer with r = 4, alpha = 8: shapes, zero B, scaling 2")
def test_lora_init(sub, ref):
    base = sub.lib("torch.nn.Linear", 16, 8)
    lora = sub.new("LoRALinear", base, 4, 8.0)
    params = lora.parameters()
    for name, shape in (("lora_A", (4, 16)), ("lora_B", (8, 4))):
        if name not in params:
            fail(f"no nn.Parameter named {name}; parameters are {sorted(params)}")
        if params[name].shape != shape:
            fail(f"{name}: expected shape {shape}, got {params[name].describe()}")
    expect_array(params["lora_B"].values, np.zeros((8, 4), np.float32), what="lora_B at creation")
    if not np.any(params["lora_A"].values != 0):
        fail("lora_A is all zeros at creation: it must be random (Gaussian)")
    scaling = lora.attribute("scaling")
    if isinstance(scaling, codec.TensorData) and scaling.shape == () and scaling.values is not None:
        scaling = float(scaling.values)  # a 0-d tensor is fine too
    expect_float(scaling, 2.0, what="scaling = alpha / r")


@graded("LoRALinear", "at creation the layer computes exactly base(x)")
def test_lora_starts_at_base(sub, ref):
    rng = np.random.default_rng(0)
    W0, b0 = rng.standard_normal((8, 16)), rng.standard_normal(8)
    base = sub.lib("torch.nn.Linear", 16, 8).call("double", keep=True)
    base.probe("load_state", {"weight": codec.tensor_spec(W0, "float64"),
                              "bias": codec.tensor_spec(b0, "float64")})
    lora = sub.new("LoRALinear", base, 4, 8.0)
    x = rng.standard_normal((3, 16))
    got = lora(codec.tensor_spec(x, "float64"))
    expect_tensor(got, x @ W0.T + b0, dtype="float64", what="forward(x) at creation vs base(x)")


add_docstring_tests(globals())
