"""Alternative correct implementations of topic 4: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("truncated_svd", "eigh of the smaller Gram matrix (scaled first), the other side "
            "from W v / sigma, completed to an orthonormal basis where sigma is 0", """
def truncated_svd(W, k):
    W = np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"W must be 2-D, got shape {W.shape}")
    m, n = W.shape
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= min(m, n):
        raise ValueError(f"k={k!r} is outside [1, {min(m, n)}] for W of shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.dtype(np.float64)
    A = W.astype(np.float64)
    if not np.isfinite(A).all():
        raise ValueError("W holds NaN or inf")
    tall = m >= n
    if not tall:
        A = A.T  # work on the tall side: A (p, q) with p >= q
    peak = np.abs(A).max() or 1.0
    B = A / peak
    lam, V = np.linalg.eigh(B.T @ B)  # ascending
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
    S = np.sqrt(np.clip(lam, 0.0, None))
    U = B @ V
    norms = np.linalg.norm(U, axis=0)
    good = norms > 1e-10 * max(norms.max(initial=0.0), 1e-300)
    U[:, good] /= norms[good]
    S = np.where(good, norms, 0.0)  # sigma from ‖B v‖: more accurate than sqrt(lambda)
    if not good.all():  # complete the zero-sigma columns to an orthonormal set
        Q, _ = np.linalg.qr(np.concatenate([U[:, good], np.eye(A.shape[0])], axis=1))
        U[:, ~good] = Q[:, good.sum():good.sum() + (~good).sum()]
    order = np.argsort(-S, kind="stable")
    U, S, V = U[:, order], S[order] * peak, V[:, order]
    if not tall:
        U, V = V, U
    return U.astype(dt), S.astype(dt), V.T.astype(dt)
"""),
    Variant("truncated_svd", "torch.linalg.svd on a float64 tensor", """
def truncated_svd(W, k):
    W = np.asarray(W)
    if (W.ndim != 2 or isinstance(k, bool) or not isinstance(k, (int, np.integer))
            or not 1 <= k <= min(W.shape)):
        raise ValueError(f"need 1 <= k <= min(m, n) for W of shape {W.shape}, got {k}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.dtype(np.float64)
    U, S, Vh = torch.linalg.svd(torch.from_numpy(W.astype(np.float64)), full_matrices=False)
    return (U[:, :k].numpy().astype(dt), S[:k].numpy().astype(dt), Vh[:k].numpy().astype(dt))
"""),
    Variant("low_rank_approx", "project onto the top right singular vectors: W V_k V_kᵀ", """
def low_rank_approx(W, k):
    _, _, Vt_k = truncated_svd(W, k)
    W = np.asarray(W)
    W = W.astype(Vt_k.dtype) if W.dtype != Vt_k.dtype else W
    return (W @ Vt_k.T) @ Vt_k
"""),
    Variant("low_rank_approx", "U_k @ np.diag(S_k) @ Vt_k, straight from np.linalg.svd", """
def low_rank_approx(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"k={k} out of range for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.dtype(np.float64)
    U, S, Vt = np.linalg.svd(W.astype(np.float64), full_matrices=False)
    return (U[:, :k] @ np.diag(S[:k]) @ Vt[:k]).astype(dt)
"""),
    Variant("eckart_young_error", "the Frobenius norm of the residual W − W_k (scaled)", """
def eckart_young_error(W, k):
    W = np.asarray(W, dtype=np.float64)
    if (W.ndim != 2 or isinstance(k, bool) or not isinstance(k, (int, np.integer))
            or not 1 <= k <= min(W.shape)):
        raise ValueError(f"k={k} out of range for W of shape {W.shape}")
    peak = np.abs(W).max()
    if peak == 0:
        return 0.0
    B = W / peak
    U, S, Vt = np.linalg.svd(B, full_matrices=False)
    R = B - (U[:, :k] * S[:k]) @ Vt[:k]
    return float(peak * np.linalg.norm(R))
"""),
    Variant("eckart_young_error", "np.linalg.norm of the dropped singular values, scaled", """
def eckart_young_error(W, k):
    W = np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"W must be 2-D, got shape {W.shape}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= min(W.shape):
        raise ValueError(f"k must be an integer in [1, {min(W.shape)}], got {k!r}")
    S = np.linalg.svd(W.astype(np.float64), compute_uv=False)
    tail = S[k:]
    if tail.size == 0 or tail[0] == 0:
        return 0.0
    return float(tail[0] * np.linalg.norm(tail / tail[0]))
"""),
    Variant("rank_for_energy", "cumsum of scaled squares against its own last entry, "
            "searchsorted", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"S must be a non-empty 1-D array, got shape {s.shape}")
    if not (0 < energy <= 1):
        raise ValueError(f"energy must be in (0, 1], got {energy}")
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("S must hold finite, non-negative values")
    if s.max() == 0:
        return 1
    if energy == 1:
        return int(np.flatnonzero(s)[-1]) + 1  # every nonzero σ, however small its square
    c = np.cumsum((s / s.max()) ** 2)
    return min(int(np.searchsorted(c, energy * c[-1], side="left")) + 1, s.size)
"""),
    Variant("rank_for_energy", "a plain loop over the singular values", """
def rank_for_energy(S, energy=0.9):
    s = [float(x) for x in np.asarray(S).ravel()]
    if np.asarray(S).ndim != 1 or not s:
        raise ValueError(f"S must be a non-empty 1-D array, got shape {np.shape(S)}")
    if not 0.0 < energy <= 1.0:
        raise ValueError(f"energy {energy} not in (0, 1]")
    if any(not np.isfinite(x) or x < 0 for x in s):
        raise ValueError("S must hold finite, non-negative values")
    peak = max(s)
    if peak == 0:
        return 1
    if energy == 1.0:
        return max(i for i, x in enumerate(s) if x != 0) + 1
    sq = [(x / peak) ** 2 for x in s]
    total = sum(sq)
    run = 0.0
    for i, q in enumerate(sq):
        run += q
        if run >= energy * total or all(t == 0 for t in sq[i + 1:]):
            return i + 1
    return len(s)
"""),
    Variant("power_iteration", "iterate with the Gram matrix WᵀW formed once (scaled first)", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"W must be a non-empty 2-D matrix, got shape {A.shape}")
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    if A.dtype.kind not in "biuf" or not np.isfinite(A.astype(np.float64)).all():
        raise ValueError(f"W must be real and finite, got dtype {A.dtype}")
    dt = A.dtype if np.issubdtype(A.dtype, np.floating) else np.dtype(np.float64)
    A = A.astype(np.float64)
    m, n = A.shape
    peak = np.abs(A).max()
    if peak == 0:
        u, v = np.zeros(m, dt), np.zeros(n, dt)
        u[0] = v[0] = 1
        return 0.0, u, v
    A = A / peak
    G = A.T @ A
    v = np.random.default_rng(seed).normal(size=n)
    v /= np.linalg.norm(v)
    for _ in range(n_iter):
        v = G @ v
        v /= np.linalg.norm(v)
    u = A @ v
    s = np.linalg.norm(u)
    return float(s * peak), (u / s).astype(dt), v.astype(dt)
"""),
    Variant("power_iteration", "torch tensors, iterating on the smaller Gram matrix, u first", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"W must be a non-empty 2-D matrix, got shape {A.shape}")
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    if A.dtype.kind not in "biuf" or not np.isfinite(A.astype(np.float64)).all():
        raise ValueError(f"W must be real and finite, got dtype {A.dtype}")
    A0 = A
    dt = A0.dtype if np.issubdtype(A0.dtype, np.floating) else np.dtype(np.float64)
    A = torch.from_numpy(A0.astype(np.float64))
    m, n = A.shape
    peak = A.abs().max()
    if peak == 0:
        u, v = np.zeros(m, dt), np.zeros(n, dt)
        u[0] = v[0] = 1
        return 0.0, u, v
    A = A / peak
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(m, generator=g, dtype=torch.float64)
    u = u / u.norm()
    for _ in range(n_iter):
        u = A @ (A.T @ u)
        u = u / u.norm()
    v = A.T @ u
    s = v.norm()
    v = v / s
    u = A @ v
    u = u / u.norm()
    return float(s * peak), u.numpy().astype(dt), v.numpy().astype(dt)
"""),
    Variant("LoRALinear", "PEFT-style uniform (Kaiming) A, F.linear forward through B A, "
            "deep-copied merge, a base copied at creation", """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        import copy
        import math
        lo, hi = 1, min(base.in_features, base.out_features)
        if isinstance(r, bool) or not isinstance(r, int) or not lo <= r <= hi:
            raise ValueError(f"rank {r} outside [{lo}, {hi}]")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
                or not math.isfinite(alpha):
            raise ValueError(f"alpha must be a finite real number, got {alpha!r}")
        self.base = copy.deepcopy(base).requires_grad_(False)
        self.r, self.alpha, self.scaling = r, alpha, alpha / r
        w = base.weight
        f = {"device": w.device, "dtype": w.dtype}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **f))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **f))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x):
        if x.shape[-1] != self.base.in_features:
            raise ValueError(f"x of shape {tuple(x.shape)} needs {self.base.in_features} features")
        delta = torch.nn.functional.linear(torch.nn.functional.linear(x, self.lora_A), self.lora_B)
        return self.base(x) + delta * self.scaling

    def merged(self):
        import copy
        out = copy.deepcopy(self.base)
        with torch.no_grad():
            out.weight.add_(self.scaling * (self.lora_B @ self.lora_A))
        return out
"""),
    Variant("eckart_young_error", "docs/design/exercise-api.md's formula as written: squares sigma without scaling "
            "(overflows only past 1e154, which the syllabus does not ask about)", """
def eckart_young_error(W, k):
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    S = np.linalg.svd(W, compute_uv=False)
    return float(np.sqrt(np.sum(S[k:] ** 2)))
"""),
    Variant("rank_for_energy", "docs/design/exercise-api.md's formula as written: cumulative sums of sigma squared "
            "without scaling (overflows only past 1e154)", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not 0 < energy <= 1:
        raise ValueError(f"bad S of shape {s.shape} or energy {energy}")
    c = np.cumsum(s ** 2)
    if c[-1] == 0:
        return 1
    return int(np.argmax(c >= energy * c[-1])) + 1
"""),
    Variant("power_iteration", "unscaled norms (tiny matrices would underflow and huge ones "
            "overflow past 1e±150, which the syllabus does not ask about)", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W)
    dt = A.dtype if np.issubdtype(A.dtype, np.floating) else np.dtype(np.float64)
    A = A.astype(np.float64)
    m, n = A.shape
    if not A.any():
        u = np.zeros(m, dt); v = np.zeros(n, dt); u[0] = v[0] = 1.0
        return 0.0, u, v
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    with np.errstate(all="ignore"):
        for _ in range(n_iter):
            u = A @ v
            u /= np.linalg.norm(u)
            v = A.T @ u
            v /= np.linalg.norm(v)
        u = A @ v
        s = np.linalg.norm(u)
        return float(s), (u / s).astype(dt), v.astype(dt)
"""),
    Variant("truncated_svd", "np.linalg.svd then slicing, checking only the range of k (the "
            "row's one error)", """
import numpy as np
def truncated_svd(W, k):
    W = np.asarray(W)
    if not 1 <= k <= min(W.shape[-2:]):
        raise ValueError(f"k = {k} outside [1, {min(W.shape[-2:])}] for W of shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.dtype(np.float64)
    # LAPACK has no float16: decompose in float32, hand back float16
    U, S, Vt = np.linalg.svd(W.astype(np.float32 if dt == np.float16 else dt),
                             full_matrices=False)
    return U[..., :, :k].astype(dt), S[..., :k].astype(dt), Vt[..., :k, :].astype(dt)
"""),
    Variant("LoRALinear", "natural code: only the row's range check on r (2.0 or True fail in "
            "torch.randn with TypeError), randn / r, the merge in the weights' dtype", """
class LoRALinear(torch.nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        if not 1 <= r <= min(base.in_features, base.out_features):
            raise ValueError(f"r = {r} must lie in [1, "
                             f"{min(base.in_features, base.out_features)}]")
        self.base = base
        base.requires_grad_(False)
        self.scaling = alpha / r
        w = base.weight
        self.lora_A = torch.nn.Parameter(
            torch.randn(r, base.in_features, dtype=w.dtype, device=w.device) / r)
        self.lora_B = torch.nn.Parameter(
            torch.zeros(base.out_features, r, dtype=w.dtype, device=w.device))

    def forward(self, x):
        return self.base(x) + self.scaling * ((x @ self.lora_A.T) @ self.lora_B.T)

    def merged(self):
        w = self.base.weight
        out = torch.nn.Linear(self.base.in_features, self.base.out_features,
                              bias=self.base.bias is not None, device=w.device, dtype=w.dtype)
        with torch.no_grad():
            out.weight.copy_(w + self.scaling * (self.lora_B @ self.lora_A))
            if self.base.bias is not None:
                out.bias.copy_(self.base.bias)
        return out
"""),
]
