"""Correct alternative implementations of topic 7: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("spectral_radius", "torch.linalg.eigvals", """
import numpy as np
import torch
def spectral_radius(W):
    W = np.asarray(W)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.size == 0:
        raise ValueError(f"W must be a non-empty square matrix, got {W.shape}")
    work = W.astype(np.complex128 if np.iscomplexobj(W) else np.float64)
    if not np.isfinite(work).all():
        raise ValueError(f"W of shape {W.shape} is not finite")
    ev = torch.linalg.eigvals(torch.from_numpy(work))
    return ev.abs().max().item()
"""),
    Variant("spectral_radius", "np.linalg.eig (eigenvectors computed, then dropped), a Python max", """
import numpy as np
def spectral_radius(W):
    W = np.asarray(W)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or not W.size:
        raise ValueError("spectral_radius needs a non-empty (d, d) matrix, got " + str(W.shape))
    vals, _ = np.linalg.eig(W.astype(complex if np.iscomplexobj(W) else float))
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
    work = np.float32 if dt == np.float16 else dt
    W, A = W.astype(work), A.astype(work)
    Js = [np.diag(1 - np.tanh(a) ** 2) @ W for a in A]
    if not Js:
        return np.eye(W.shape[0], dtype=dt)
    if len(Js) == 1:
        return Js[0].astype(dt)
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
    out = np.result_type(W.dtype, A.dtype)
    out = out if out.kind == "f" else np.dtype(np.float64)
    dt = np.float32 if out == np.float16 else out
    J = np.eye(W.shape[0], dtype=dt)
    for a in A.astype(dt):
        with np.errstate(over="ignore"):
            g = 1.0 / np.cosh(a) ** 2
        J = np.einsum("i,ij,jk->ik", g, W.astype(dt), J)
    return J.astype(out)
"""),
    Variant("condition_number",
            "matrix_rank (same max(m, n)·eps·σ_max rule) then np.linalg.cond", """
import numpy as np
def condition_number(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"condition_number: A must be a non-empty matrix, got {A.shape}")
    work = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)
    if not np.isfinite(work).all():
        raise ValueError(f"condition_number: A {A.shape} holds NaN or inf")
    eps = np.finfo(A.dtype).eps if A.dtype.kind in "fc" else np.finfo(np.float64).eps
    S = np.linalg.svd(work, compute_uv=False)
    tol = S.max() * max(A.shape) * eps
    if np.linalg.matrix_rank(work, tol=tol) < min(A.shape):
        return float("inf")
    return float(np.linalg.cond(work))
"""),
    Variant("condition_number", "torch.linalg.svdvals in float64", """
import numpy as np
import torch
def condition_number(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"A must be a non-empty matrix, got shape {A.shape}")
    eps = float(np.finfo(A.dtype).eps) if A.dtype.kind in "fc" else float(np.finfo(np.float64).eps)
    work = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)
    if not np.isfinite(work).all():
        raise ValueError(f"A of shape {A.shape} holds NaN or inf")
    S = torch.linalg.svdvals(torch.from_numpy(work))
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
    if np.iscomplexobj(A):
        raise ValueError(f"is_positive_definite: A must be real, got {A.dtype}")
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
    if np.iscomplexobj(A):
        raise ValueError("complex matrices are not allowed")
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("need a square matrix, got shape " + str(A.shape))
    if np.isnan(A).any() or np.isinf(A).any():
        return False
    if not np.allclose(A, A.T, rtol=0.0, atol=1e-10 * np.abs(A).max(initial=0.0)):
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
    if X.ndim < 2:
        raise ValueError(f"gram_matrix: X must be (n, d), got {X.shape}")
    if X.dtype.kind in "iub":
        X = X.astype(np.float64)
    return np.einsum("...id,...jd->...ij", X, X)
"""),
    Variant("gram_matrix", "np.matmul with np.moveaxis for the transpose", """
import numpy as np
def gram_matrix(X):
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError("X needs at least 2 dimensions, got shape " + str(X.shape))
    X = X if X.dtype.kind == "f" else X.astype(float)
    return np.matmul(X, np.moveaxis(X, -1, -2))
"""),
    Variant("newton_schulz_orthogonalize",
            "works on the tall orientation, transposes back; X (XᵀX)",
            """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    if G.ndim != 2:
        raise ValueError(f"G must be 2-D, got {G.shape}")
    if type(n_iter) is bool or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    dt = G.dtype if G.dtype.kind == "f" else np.dtype(np.float64)
    X = G.astype(np.float64)
    if not np.isfinite(X).all():
        raise ValueError("G is not finite")
    wide = X.shape[0] < X.shape[1]
    if wide:
        X = X.T
    big = np.abs(X).max(initial=0.0)
    if big == 0.0:
        return np.zeros(G.shape, dtype=dt)
    X = X / big
    X = X / np.linalg.norm(X)
    for _ in range(n_iter):
        X = 1.5 * X - 0.5 * X @ (X.T @ X)
    return (X.T if wide else X).astype(dt)
"""),
    Variant("newton_schulz_orthogonalize",
            "(X Xᵀ) X, or X (Xᵀ X) when tall, iterated in float32 for float32 input", """
import numpy as np
def newton_schulz_orthogonalize(G, n_iter=30):
    G = np.asarray(G)
    if G.ndim != 2 or isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
        raise ValueError(f"need a 2-D G and an integer n_iter >= 0, got G {G.shape}, "
                         f"n_iter {n_iter!r}")
    dt = G.dtype if G.dtype.kind == "f" else np.dtype(np.float64)
    X = G.astype(dt)
    if not np.all(np.isfinite(X)):
        raise ValueError("G holds NaN or inf")
    if not np.any(X):
        return np.zeros_like(X)
    X = X / np.max(np.abs(X))
    X = X / np.sqrt(np.sum(X * X))
    for _ in range(n_iter):
        if X.shape[0] > X.shape[1]:
            X = (3 * X - X @ (X.T @ X)) / 2
        else:
            X = (3 * X - (X @ X.T) @ X) / 2
    return X.astype(dt)
"""),
    Variant("sliding_window_mask", "np.tril band: tril(0) minus tril(-window)", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    for name, v, low in (("n", n, 0), ("window", window, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"sliding_window_mask: {name} must be an integer >= {low}, got {v}")
    ones = np.ones((n, n), dtype=bool)
    low = np.tril(ones) & ~np.tril(ones, -window)
    if causal:
        return low
    return low | low.T
"""),
    Variant("sliding_window_mask", "Python loops filling the mask", """
import numpy as np
def sliding_window_mask(n, window, causal=True):
    if type(window) is not int or not window >= 1:
        raise ValueError("window must be an int >= 1: " + repr(window))
    if type(n) is not int or n < 0:
        raise ValueError("n must be an int >= 0: " + repr(n))
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
    Variant("is_positive_definite", "only integers promoted (bool matrices, which the row "
            "does not name, fail in A - A.T), symmetry then Cholesky", """
import numpy as np
def is_positive_definite(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"is_positive_definite needs a square matrix, got shape {A.shape}")
    if np.issubdtype(A.dtype, np.integer):
        A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        return False
    if np.abs(A - A.T).max(initial=0.0) > 1e-10 * np.abs(A).max(initial=0.0):
        return False
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return False
    return True
"""),
]
