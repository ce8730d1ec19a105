"""Correct alternative implementations of topic 7: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("spectral_radius", "torch.linalg.eigvals", """
import numpy as np
import torch
def spectral_radius(W):
    W = np.asarray(W)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square, got {W.shape}")
    ev = torch.linalg.eigvals(torch.from_numpy(W.astype(np.float64)))
    return ev.abs().max().item()
"""),
    Variant("spectral_radius", "np.linalg.eig, no input validation beyond NumPy's own", """
import numpy as np
def spectral_radius(W):
    vals, _ = np.linalg.eig(np.asarray(W, dtype=np.float64))
    return float(max(abs(v) for v in vals))
"""),
    Variant("bptt_jacobian", "np.diag matrices and the plain 1 - tanh², a reversed multi_dot", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh)
    A = np.asarray(pre_activations)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"bptt_jacobian: W_hh {W.shape} and pre_activations {A.shape} "
                         "do not fit (d, d) and (T, d)")
    dt = np.result_type(W, A)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    W, A = W.astype(dt), A.astype(dt)
    Js = [np.diag(1 - np.tanh(a) ** 2) @ W for a in A]
    if len(Js) == 1:
        return Js[0]
    return np.linalg.multi_dot(Js[::-1]).astype(dt)
"""),
    Variant("bptt_jacobian", "einsum with the derivative as a row scaling", """
import numpy as np
def bptt_jacobian(W_hh, pre_activations):
    W = np.asarray(W_hh)
    A = np.asarray(pre_activations)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W_hh must be square, got {W.shape}")
    if A.ndim != 2 or A.shape[1] != W.shape[0]:
        raise ValueError(f"pre_activations must be (T, {W.shape[0]}), got {A.shape}")
    dt = np.result_type(W.dtype, A.dtype, np.float32 if W.dtype == np.float32 else np.float64)
    J = np.eye(W.shape[0], dtype=dt)
    for a in A.astype(dt):
        g = 1.0 / np.cosh(a) ** 2
        J = np.einsum("i,ij,jk->ik", g, W.astype(dt), J)
    return J
"""),
    Variant("condition_number",
            "matrix_rank (same max(m, n)·eps·σ_max rule) then np.linalg.cond", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    work = A if A.dtype in (np.float32, np.float64) else A.astype(np.float64)
    eps = np.finfo(A.dtype).eps if A.dtype.kind == "f" else np.finfo(np.float64).eps
    S = np.linalg.svd(work.astype(np.float64), compute_uv=False)
    tol = S.max() * max(A.shape) * eps
    if np.linalg.matrix_rank(work.astype(np.float64), tol=tol) < min(A.shape):
        return float("inf")
    return float(np.linalg.cond(work.astype(np.float64)))
"""),
    Variant("condition_number", "torch.linalg.svdvals in float64", """
import numpy as np
import torch
def condition_number(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"A must be a non-empty matrix, got shape {A.shape}")
    eps = float(np.finfo(A.dtype).eps) if A.dtype.kind == "f" else float(np.finfo(np.float64).eps)
    S = torch.linalg.svdvals(torch.from_numpy(A.astype(np.float64)))
    smax, smin = S[0].item(), S[-1].item()
    return float("inf") if smin <= max(A.shape) * eps * smax else smax / smin
"""),
    Variant("is_positive_definite",
            "torch.linalg.cholesky_ex info flag, relative symmetry test", """
import numpy as np
import torch
def is_positive_definite(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"is_positive_definite: A must be square, got {A.shape}")
    A = A.astype(np.float64)
    if not np.isfinite(A).all():
        return False
    if np.abs(A - A.T).max(initial=0.0) > 1e-10 * np.abs(A).max(initial=0.0):
        return False
    _, info = torch.linalg.cholesky_ex(torch.from_numpy(A))
    return bool(info.item() == 0)
"""),
    Variant("is_positive_definite", "np.allclose with a relative atol, Cholesky on A itself", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("need a square matrix, got shape " + str(A.shape))
    if np.isnan(A).any() or np.isinf(A).any():
        return False
    if not np.allclose(A, A.T, rtol=0.0, atol=1e-10 * np.abs(A).max()):
        return False
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return False
    return True
"""),
    Variant("gram_matrix", "einsum over the feature axis", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X)
    if X.dtype.kind in "iub":
        X = X.astype(np.float64)
    return np.einsum("id,jd->ij", X, X)
"""),
    Variant("gram_matrix", "np.dot with an explicit transpose", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X)
    return np.dot(X, X.T) if X.dtype.kind == "f" else np.dot(X.astype(float), X.astype(float).T)
"""),
    Variant("newton_schulz_orthogonalize",
            "works on the tall orientation, transposes back; X (XᵀX)",
            """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    dt = G.dtype if G.dtype.kind == "f" else np.dtype(np.float64)
    X = G.astype(np.float64)
    wide = X.shape[0] < X.shape[1]
    if wide:
        X = X.T
    nrm = np.linalg.norm(X)
    if nrm == 0.0:
        return np.zeros(G.shape, dtype=dt)
    X = X / nrm
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ (X.T @ X)
    return (X.T if wide else X).astype(dt)
"""),
    Variant("newton_schulz_orthogonalize", "always (X Xᵀ) X, iterated in float32 for float32 input",
            """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    dt = G.dtype if G.dtype.kind == "f" else np.dtype(np.float64)
    X = G.astype(dt)
    if not np.any(X):
        return np.zeros_like(X)
    X = X / np.sqrt(np.sum(X * X))
    for _ in range(n_iter):
        X = (3 * X - (X @ X.T) @ X) / 2
    return X.astype(dt)
"""),
    Variant("sliding_window_mask", "np.tril band: tril(0) minus tril(-window)", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if window < 1:
        raise ValueError(f"sliding_window_mask: window must be at least 1, got {window}")
    ones = np.ones((n, n), dtype=bool)
    low = np.tril(ones) & ~np.tril(ones, -window)
    if causal:
        return low
    return low | low.T
"""),
    Variant("sliding_window_mask", "Python loops filling the mask", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if not window >= 1:
        raise ValueError("window < 1: " + repr(window))
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            m[i, j] = (0 <= i - j < window) if causal else (abs(i - j) < window)
    return m
"""),
    Variant("mask_density", "np.mean of a bool array", """
import numpy as np
def mask_density(mask):
    mask = np.asarray(mask, dtype=bool)
    if mask.size == 0:
        raise ValueError(f"empty mask {mask.shape}")
    return float(mask.mean())
"""),
    Variant("mask_density", "sum over size, returned as a NumPy float", """
import numpy as np
def mask_density(mask):
    m = np.asarray(mask)
    if not m.size:
        raise ValueError("mask has no entries")
    return m.astype(bool).sum() / m.size
"""),
]
