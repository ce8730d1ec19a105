"""Plausible wrong implementations of topic 7: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    # ------------------------------------------------------------ spectral_radius
    Variant("spectral_radius", "largest real eigenvalue (no modulus)", """
import numpy as np
def spectral_radius(W):
    return float(np.max(np.linalg.eigvals(np.asarray(W, dtype=float)).real))
"""),
    Variant("spectral_radius",
            "largest |real part| (complex eigenvalues lose their imaginary part)", """
import numpy as np
def spectral_radius(W):
    return float(np.max(np.abs(np.linalg.eigvals(np.asarray(W, dtype=float)).real)))
"""),
    Variant("spectral_radius", "the spectral norm (largest singular value) instead", """
import numpy as np
def spectral_radius(W):
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"not square: {W.shape}")
    return float(np.linalg.norm(W, 2))
"""),
    Variant("spectral_radius", "eigvalsh: assumes a symmetric matrix", """
import numpy as np
def spectral_radius(W):
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"not square: {W.shape}")
    return float(np.max(np.abs(np.linalg.eigvalsh(W))))
"""),
    # ------------------------------------------------------------ bptt_jacobian
    Variant("bptt_jacobian", "W_hh transposed (the row-vector form mixed in)", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh, dtype=float)
    A = np.asarray(pre_activations, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"shapes {W.shape} and {A.shape}")
    J = np.eye(W.shape[0])
    for a in A:
        J = np.diag(1 - np.tanh(a) ** 2) @ W.T @ J
    return J
"""),
    Variant("bptt_jacobian", "product in the wrong order: J_1 ... J_T", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh, dtype=float)
    A = np.asarray(pre_activations, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"shapes {W.shape} and {A.shape}")
    J = np.eye(W.shape[0])
    for a in A:
        J = J @ (np.diag(1 - np.tanh(a) ** 2) @ W)
    return J
"""),
    Variant("bptt_jacobian", "derivative on the wrong side: W_hh diag(1 - tanh²)", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh, dtype=float)
    A = np.asarray(pre_activations, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"shapes {W.shape} and {A.shape}")
    J = np.eye(W.shape[0])
    for a in A:
        J = (W @ np.diag(1 - np.tanh(a) ** 2)) @ J
    return J
"""),
    Variant("bptt_jacobian", "derivative 1 - tanh(a) (square forgotten)", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh, dtype=float)
    A = np.asarray(pre_activations, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"shapes {W.shape} and {A.shape}")
    J = np.eye(W.shape[0])
    for a in A:
        J = np.diag(1 - np.tanh(a)) @ W @ J
    return J
"""),
    Variant("bptt_jacobian", "off by one: the first step skipped", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh, dtype=float)
    A = np.asarray(pre_activations, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"shapes {W.shape} and {A.shape}")
    J = W.copy()
    for a in A[1:]:
        J = np.diag(1 - np.tanh(a) ** 2) @ W @ J
    return J
"""),
    # ------------------------------------------------------------ condition_number
    Variant("condition_number", "np.linalg.cond: a huge finite number instead of inf", """
import numpy as np
def condition_number(A):
    return float(np.linalg.cond(np.asarray(A, dtype=float)))
"""),
    Variant("condition_number", "float64's eps whatever the input dtype", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    S = np.linalg.svd(A.astype(np.float64), compute_uv=False)
    if S[-1] <= max(A.shape) * np.finfo(np.float64).eps * S[0]:
        return float("inf")
    return float(S[0] / S[-1])
"""),
    Variant("condition_number", "ratio of eigenvalue moduli instead of singular values", """
import numpy as np
def condition_number(A):
    A = np.asarray(A, dtype=float)
    if A.shape[0] != A.shape[1]:
        S = np.linalg.svd(A, compute_uv=False)
    else:
        S = np.sort(np.abs(np.linalg.eigvals(A)))[::-1]
    if S[-1] <= max(A.shape) * np.finfo(float).eps * S[0]:
        return float("inf")
    return float(S[0] / S[-1])
"""),
    Variant("condition_number", "singular values from eigvalsh(AᵀA): wide matrices get zeros", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    eps = np.finfo(A.dtype).eps if A.dtype.kind == "f" else np.finfo(float).eps
    A = A.astype(np.float64)
    S = np.sqrt(np.clip(np.linalg.eigvalsh(A.T @ A), 0, None))[::-1]
    if S[-1] <= max(A.shape) * eps * S[0]:
        return float("inf")
    return float(S[0] / S[-1])
""",
            # On a dense singular matrix the smallest eigenvalue of AᵀA is a rounding error of
            # either sign (±1e-15·σ_max²): ≤ 0 gives inf, > 0 a finite √eps-sized σ_min. Which,
            # the BLAS kernel decides (SkylakeX and Haswell differ on the repeated-row matrix).
            # It fails the random, ill-conditioned and transposed tests on every kernel.
            unsettled=("test_condition_rank_deficient",)),
    Variant("condition_number", "a fixed threshold σ_min < 1e-10 σ_max", """
import numpy as np
def condition_number(A):
    S = np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False)
    if S[-1] < 1e-10 * S[0] or S[0] == 0:
        return float("inf")
    return float(S[0] / S[-1])
"""),
    # ------------------------------------------------------------ is_positive_definite
    Variant("is_positive_definite", "Cholesky without a symmetry check (reads one triangle)", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)):
        return False
    try:
        np.linalg.cholesky(A)
        return True
    except np.linalg.LinAlgError:
        return False
"""),
    Variant("is_positive_definite", "all eigenvalues positive, symmetry not required", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)):
        return False
    return bool(np.all(np.linalg.eigvals(A).real > 0))
"""),
    Variant("is_positive_definite", "exact symmetry required (A == Aᵀ)", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)) or not np.array_equal(A, A.T):
        return False
    try:
        np.linalg.cholesky(A)
        return True
    except np.linalg.LinAlgError:
        return False
"""),
    Variant("is_positive_definite", "np.allclose(A, Aᵀ): a loose symmetry test", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)) or not np.allclose(A, A.T):
        return False
    try:
        np.linalg.cholesky((A + A.T) / 2)
        return True
    except np.linalg.LinAlgError:
        return False
"""),
    Variant("is_positive_definite", "absolute symmetry tolerance 1e-10 (not relative)", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)) or np.max(np.abs(A - A.T)) > 1e-10:
        return False
    try:
        np.linalg.cholesky((A + A.T) / 2)
        return True
    except np.linalg.LinAlgError:
        return False
"""),
    Variant("is_positive_definite", "eigenvalues >= 0: semi-definite accepted", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if not np.all(np.isfinite(A)) or np.max(np.abs(A - A.T)) > 1e-10 * np.max(np.abs(A)):
        return False
    return bool(np.all(np.linalg.eigvalsh((A + A.T) / 2) >= -1e-12))
"""),
    Variant("is_positive_definite", "no check for NaN or inf before Cholesky", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"not square: {A.shape}")
    if np.max(np.abs(A - A.T)) > 1e-10 * np.max(np.abs(A)):
        return False
    try:
        np.linalg.cholesky(A)
        return True
    except np.linalg.LinAlgError:
        return False
"""),
    # ------------------------------------------------------------ gram_matrix
    Variant("gram_matrix", "Xᵀ X (the (d, d) covariance-like product)", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X)
    if X.dtype.kind != "f":
        X = X.astype(np.float64)
    return X.T @ X
"""),
    Variant("gram_matrix", "cosine similarities (rows normalised first)", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X, dtype=np.float64)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    return Xn @ Xn.T
"""),
    Variant("gram_matrix", "always float64 (float32 not kept)", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X, dtype=np.float64)
    return X @ X.T
"""),
    Variant("gram_matrix", "scaled by 1/d (a mean of products, not the dot products)", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X)
    if X.dtype.kind != "f":
        X = X.astype(np.float64)
    return X @ X.T / X.shape[-1]
"""),
    # ------------------------------------------------------------ newton_schulz_orthogonalize
    Variant("newton_schulz_orthogonalize", "no initial scaling: diverges once ‖G‖₂ > √3", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    X = np.asarray(G, dtype=np.float64)
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X.astype(G.dtype if np.asarray(G).dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize",
            "Muon's eps: G / (‖G‖_F + 1e-7) is not scale invariant", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    X = G.astype(np.float64)
    X = X / (np.linalg.norm(X) + 1e-7)
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X.astype(G.dtype if G.dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize",
            "Muon's quintic (3.4445, -4.7750, 2.0315): only near U Vᵀ", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    X = G.astype(np.float64)
    nrm = np.linalg.norm(X)
    if nrm == 0:
        return np.zeros(G.shape, G.dtype if G.dtype.kind == "f" else np.float64)
    X = X / nrm
    a, b, c = 3.4445, -4.7750, 2.0315
    for _ in range(n_iter):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.astype(G.dtype if G.dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize", "G = 0 divides by zero (NaN)", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    X = G.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        X = X / np.linalg.norm(X)
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X.astype(G.dtype if G.dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize", "n_iter ignored (always 30 steps)", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    X = G.astype(np.float64)
    nrm = np.linalg.norm(X)
    if nrm == 0:
        return np.zeros(G.shape, G.dtype if G.dtype.kind == "f" else np.float64)
    X = X / nrm
    for _ in range(30):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X.astype(G.dtype if G.dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize",
            "scaled by the largest entry, not the Frobenius norm", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    X = G.astype(np.float64)
    peak = np.max(np.abs(X))
    if peak == 0:
        return np.zeros(G.shape, G.dtype if G.dtype.kind == "f" else np.float64)
    X = X / peak / np.sqrt(min(X.shape))
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X.astype(G.dtype if G.dtype.kind == "f" else np.float64)
"""),
    Variant("newton_schulz_orthogonalize",
            "always (X Xᵀ) X: a tall G builds the (m, m) Gram product, the larger side", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    if G.ndim != 2 or isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
        raise ValueError(f"need a 2-D G and an integer n_iter >= 0, got G {G.shape}")
    dt = G.dtype if G.dtype.kind == "f" else np.dtype(np.float64)
    X = G.astype(np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"G {G.shape} holds NaN or inf")
    peak = np.max(np.abs(X), initial=0.0)
    if peak == 0.0:
        return np.zeros(G.shape, dtype=dt)
    X = X / peak
    X = X / np.linalg.norm(X)
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * ((X @ X.T) @ X)
    return X.astype(dt)
"""),
    Variant("newton_schulz_orthogonalize", "always returns float64", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    X = np.asarray(G, dtype=np.float64)
    nrm = np.linalg.norm(X)
    if nrm == 0:
        return np.zeros(X.shape)
    X = X / nrm
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ X.T @ X
    return X
"""),
    # ------------------------------------------------------------ sliding_window_mask
    Variant("sliding_window_mask", "off by one: i - j <= window", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    if causal:
        return (i - j >= 0) & (i - j <= window)
    return np.abs(i - j) <= window
"""),
    Variant("sliding_window_mask", "transposed: queries see future keys (upper triangle)", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    if causal:
        return (j - i >= 0) & (j - i < window)
    return np.abs(i - j) < window
"""),
    Variant("sliding_window_mask", "causal flag ignored", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    off = np.arange(n)[:, None] - np.arange(n)[None, :]
    return (off >= 0) & (off < window)
"""),
    Variant("sliding_window_mask", "returns 0/1 integers instead of bools", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    off = np.arange(n)[:, None] - np.arange(n)[None, :]
    m = (off >= 0) & (off < window) if causal else np.abs(off) < window
    return m.astype(np.int64)
"""),
    Variant("sliding_window_mask", "window 0 not rejected (an all-False mask)", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    off = np.arange(n)[:, None] - np.arange(n)[None, :]
    return (off >= 0) & (off < window) if causal else np.abs(off) < window
"""),
    Variant("sliding_window_mask", "non-causal band only half as wide: |i - j| < window / 2", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    off = np.arange(n)[:, None] - np.arange(n)[None, :]
    return (off >= 0) & (off < window) if causal else np.abs(off) < (window + 1) // 2
"""),
    # ------------------------------------------------------------ mask_density
    Variant("mask_density", "assumes a square (n, n) mask", """
import numpy as np
def mask_density(mask):
    mask = np.asarray(mask)
    if mask.size == 0:
        raise ValueError("empty mask")
    return float(np.count_nonzero(mask) / mask.shape[-1] ** 2)
"""),
    Variant("mask_density", "counts the masked-out entries (1 - density)", """
import numpy as np
def mask_density(mask):
    mask = np.asarray(mask)
    if mask.size == 0:
        raise ValueError("empty mask")
    return float(np.count_nonzero(~mask.astype(bool)) / mask.size)
"""),
    Variant("mask_density", "no empty check: NaN for an empty mask", """
import numpy as np
def mask_density(mask):
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.mean(np.asarray(mask, dtype=float)))
"""),
    Variant("mask_density", "integer division", """
import numpy as np
def mask_density(mask):
    mask = np.asarray(mask)
    if mask.size == 0:
        raise ValueError("empty mask")
    return int(np.count_nonzero(mask)) // int(mask.size)
"""),
    Variant("condition_number", "the threshold counts the short side: min(m, n)·eps·σ_max", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    dt = A.dtype if A.dtype.kind == "f" else np.dtype(np.float64)
    S = np.linalg.svd(A.astype(np.float32 if dt == np.float16 else dt), compute_uv=False)
    if S[-1] <= min(A.shape) * np.finfo(dt).eps * S[0]:
        return float("inf")
    return float(S[0] / S[-1])
"""),
    Variant("condition_number", "a strict < at the threshold: σ_min exactly at it, and the zero "
            "matrix (0/0), come out finite or NaN", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    dt = A.dtype if A.dtype.kind == "f" else np.dtype(np.float64)
    S = np.linalg.svd(A.astype(np.float32 if dt == np.float16 else dt), compute_uv=False)
    if S[-1] < max(A.shape) * np.finfo(dt).eps * S[0]:
        return float("inf")
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(S[0] / S[-1])
"""),
    # seventh red team: a sufficient condition (Gershgorin) taken for the definition
    Variant("is_positive_definite", "diagonal dominance instead of Cholesky: a symmetric "
            "matrix with a positive diagonal at least its row's other entries' sum", """
_pd_reference = is_positive_definite
def is_positive_definite(A):
    _pd_reference(A)  # its checks raise where the exercise says
    A = np.asarray(A, dtype=float)
    d = np.abs(np.diag(A))
    return bool(np.allclose(A, A.T) and np.all(np.diag(A) > 0)
                and np.all(d >= np.abs(A).sum(axis=1) - d))
"""),
]
