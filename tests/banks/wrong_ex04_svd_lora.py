"""Plausible wrong implementations of topic 4: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    # ------------------------------------------------------------------ truncated_svd
    Variant("truncated_svd", "keeps the k smallest singular triplets (ascending order)", """
def truncated_svd(W, k):
    W = np.asarray(W)
    W = W if np.issubdtype(W.dtype, np.floating) else W.astype(np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    U, S, Vt = np.linalg.svd(W, full_matrices=False)
    return U[:, ::-1][:, :k], S[::-1][:k], Vt[::-1][:k]
""", also=("low_rank_approx",)),
    Variant("truncated_svd", "U and V from two separate eigh calls: the signs of u_i and v_i "
            "do not match", """
def truncated_svd(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    A = W.astype(np.float64)
    lu, U = np.linalg.eigh(A @ A.T)
    lv, V = np.linalg.eigh(A.T @ A)
    U, V = U[:, ::-1][:, :k], V[:, ::-1][:, :k]
    S = np.sqrt(np.clip(lv[::-1][:k], 0, None))
    return U.astype(dt), S.astype(dt), V.T.astype(dt)
""", also=("low_rank_approx",)),
    Variant("truncated_svd", "returns the eigenvalues σ² of WᵀW instead of σ", """
def truncated_svd(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    U, S, Vt = np.linalg.svd(W.astype(np.float64), full_matrices=False)
    return U[:, :k].astype(dt), (S[:k] ** 2).astype(dt), Vt[:k].astype(dt)
""", also=("low_rank_approx",)),
    Variant("truncated_svd", "returns V (n, k) instead of Vt (k, n)", """
def truncated_svd(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    U, S, Vt = np.linalg.svd(W.astype(np.float64), full_matrices=False)
    return U[:, :k].astype(dt), S[:k].astype(dt), Vt[:k].T.astype(dt)
""", also=("low_rank_approx",)),
    Variant("truncated_svd", "no check of k: k = 0 or k > min(m, n) silently slices", """
def truncated_svd(W, k):
    W = np.asarray(W)
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    work = W.astype(np.float32) if dt == np.float16 else W.astype(dt)
    U, S, Vt = np.linalg.svd(work, full_matrices=False)
    return U[:, :k].astype(dt), S[:k].astype(dt), Vt[:k].astype(dt)
""", also=("low_rank_approx",)),
    Variant("truncated_svd", "always returns float64, whatever W's dtype", """
def truncated_svd(W, k):
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    U, S, Vt = np.linalg.svd(W, full_matrices=False)
    return U[:, :k], S[:k], Vt[:k]
""", also=("low_rank_approx",)),
    # ------------------------------------------------------------------ low_rank_approx
    Variant("low_rank_approx", "forgets the singular values: U_k @ Vt_k", """
def low_rank_approx(W, k):
    U_k, S_k, Vt_k = truncated_svd(W, k)
    return U_k @ Vt_k
"""),
    Variant("low_rank_approx", "returns the residual W − W_k", """
def low_rank_approx(W, k):
    U_k, S_k, Vt_k = truncated_svd(W, k)
    W = np.asarray(W)
    return W.astype(U_k.dtype) - (U_k * S_k) @ Vt_k
"""),
    Variant("low_rank_approx", "off by one: keeps k + 1 triplets", """
def low_rank_approx(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    U, S, Vt = np.linalg.svd(W.astype(np.float64), full_matrices=False)
    return ((U[:, :k + 1] * S[:k + 1]) @ Vt[:k + 1]).astype(dt)
"""),
    Variant("low_rank_approx", "keeps the k smallest triplets", """
def low_rank_approx(W, k):
    W = np.asarray(W)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    dt = W.dtype if np.issubdtype(W.dtype, np.floating) else np.float64
    U, S, Vt = np.linalg.svd(W.astype(np.float64), full_matrices=False)
    return ((U[:, -k:] * S[-k:]) @ Vt[-k:]).astype(dt)
"""),
    # ------------------------------------------------------------------ eckart_young_error
    Variant("eckart_young_error", "off by one: drops sigma_(k+1) as well", """
def eckart_young_error(W, k):
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    S = np.linalg.svd(W, compute_uv=False)
    return float(np.sqrt(np.sum(S[k + 1:] ** 2)))
"""),
    Variant("eckart_young_error", "forgets the square root", """
def eckart_young_error(W, k):
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    S = np.linalg.svd(W, compute_uv=False)
    return float(np.sum(S[k:] ** 2))
"""),
    Variant("eckart_young_error", "sums sigma instead of sigma squared", """
def eckart_young_error(W, k):
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not 1 <= k <= min(W.shape):
        raise ValueError(f"bad k={k} for shape {W.shape}")
    S = np.linalg.svd(W, compute_uv=False)
    return float(np.sum(S[k:]))
"""),
    Variant("eckart_young_error", "no check of k", """
def eckart_young_error(W, k):
    S = np.linalg.svd(np.asarray(W, dtype=np.float64), compute_uv=False)
    peak = S.max() if S.size else 0.0
    if peak == 0.0 or S[k:].size == 0:
        return 0.0
    return float(peak * np.sqrt(np.sum((S[k:] / peak) ** 2)))
"""),
    # ------------------------------------------------------------------ rank_for_energy
    Variant("rank_for_energy", "the energy of sigma, not of sigma squared", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not 0 < energy <= 1:
        raise ValueError(f"bad S of shape {s.shape} or energy {energy}")
    if s.max() == 0:
        return 1
    c = np.cumsum(s / s.max())
    return int(np.argmax(c >= energy * c[-1])) + 1
"""),
    Variant("rank_for_energy", "strict > instead of >=", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not 0 < energy <= 1:
        raise ValueError(f"bad S of shape {s.shape} or energy {energy}")
    if s.max() == 0:
        return 1
    c = np.cumsum((s / s.max()) ** 2)
    hit = c > energy * c[-1]
    return int(np.argmax(hit)) + 1 if hit.any() else int(s.size)
"""),
    Variant("rank_for_energy", "returns the 0-based index instead of the count", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not 0 < energy <= 1:
        raise ValueError(f"bad S of shape {s.shape} or energy {energy}")
    if s.max() == 0:
        return 1
    c = np.cumsum((s / s.max()) ** 2)
    return int(np.argmax(c >= energy * c[-1]))
"""),
    Variant("rank_for_energy", "no check of energy or of an empty S", """
def rank_for_energy(S, energy=0.9):
    s = np.asarray(S, dtype=np.float64)
    if s.size == 0:
        return 1
    if s.max() == 0:
        return 1
    c = np.cumsum((s / s.max()) ** 2)
    return int(np.argmax(c >= energy * c[-1])) + 1
"""),
    # ------------------------------------------------------------------ power_iteration
    Variant("power_iteration", "returns sigma squared (the eigenvalue of WᵀW)", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W, dtype=np.float64)
    m, n = A.shape
    if not A.any():
        u = np.zeros(m); v = np.zeros(n); u[0] = v[0] = 1.0
        return 0.0, u, v
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    for _ in range(n_iter):
        w = A.T @ (A @ v)
        lam = np.linalg.norm(w)
        v = w / lam
    u = A @ v
    u /= np.linalg.norm(u)
    return float(lam), u, v
"""),
    Variant("power_iteration", "never normalises inside the loop: overflows", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W, dtype=np.float64)
    m, n = A.shape
    v = np.random.default_rng(seed).standard_normal(n)
    for _ in range(n_iter):
        v = A.T @ (A @ v)
    v = v / np.linalg.norm(v)
    u = A @ v
    s = np.linalg.norm(u)
    return float(s), u / s, v
"""),
    Variant("power_iteration", "eigen power iteration on a square W (finds |λ|, not σ)", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W, dtype=np.float64)
    m, n = A.shape
    if not A.any():
        u = np.zeros(m); v = np.zeros(n); u[0] = v[0] = 1.0
        return 0.0, u, v
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    if m == n:
        for _ in range(n_iter):
            v = A @ v
            v /= np.linalg.norm(v)
        lam = float(v @ A @ v)
        return abs(lam), np.sign(lam) * v if lam else v, v
    for _ in range(n_iter):
        v = A.T @ (A @ v)
        v /= np.linalg.norm(v)
    u = A @ v
    s = np.linalg.norm(u)
    return float(s), u / s, v
"""),
    Variant("power_iteration", "a zero matrix divides by zero and returns NaN vectors", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W, dtype=np.float64)
    m, n = A.shape
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(n_iter):
            v = A.T @ (A @ v)
            v /= np.linalg.norm(v)
        u = A @ v
        s = np.linalg.norm(u)
        return float(s), u / s, v
"""),
    Variant("power_iteration", "calls np.linalg.svd instead of iterating", """
def power_iteration(W, n_iter=200, seed=0):
    A = np.asarray(W)
    dt = A.dtype if np.issubdtype(A.dtype, np.floating) else np.dtype(np.float64)
    U, S, Vt = np.linalg.svd(A.astype(np.float64))
    return float(S[0]), U[:, 0].astype(dt), Vt[0].astype(dt)
"""),
    # ------------------------------------------------------------------ LoRALinear
    Variant("LoRALinear", "initialisation swapped: B random and A zero", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        with torch.no_grad():
            self.lora_B.normal_()
            self.lora_A.zero_()
"""),
    Variant("LoRALinear", "both A and B random: the layer does not start at the base model", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        with torch.no_grad():
            self.lora_B.normal_()
"""),
    Variant("LoRALinear", "scaling = alpha instead of alpha / r", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        self.scaling = float(alpha)
"""),
    Variant("LoRALinear", "scaling = r / alpha", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        self.scaling = r / alpha
"""),
    Variant("LoRALinear", "forgets to freeze the base", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        for p in self.base.parameters():
            p.requires_grad_(True)
"""),
    Variant("LoRALinear", "merged() adds the update into the base in place and returns it", """
class LoRALinear(LoRALinear):
    def merged(self):
        with torch.no_grad():
            self.base.weight += self.scaling * (self.lora_B @ self.lora_A)
        return self.base
"""),
    Variant("LoRALinear", "merged() forgets the scaling", """
class LoRALinear(LoRALinear):
    def merged(self):
        import copy
        out = copy.deepcopy(self.base)
        with torch.no_grad():
            out.weight += self.lora_B @ self.lora_A
        return out
"""),
    Variant("LoRALinear", "merged() adds (B A)ᵀ: right only when it is square and symmetric", """
class LoRALinear(LoRALinear):
    def merged(self):
        import copy
        out = copy.deepcopy(self.base)
        with torch.no_grad():
            delta = self.scaling * (self.lora_B @ self.lora_A)
            out.weight += delta.T if delta.shape[0] == delta.shape[1] else delta
        return out
"""),
    Variant("LoRALinear", "A and B created in float32 on the default device, ignoring base", """
class LoRALinear(LoRALinear):
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        self.lora_A = nn.Parameter(torch.randn(self.r, self.in_features) / self.r)
        self.lora_B = nn.Parameter(torch.zeros(self.out_features, self.r))

    def forward(self, x):
        update = (x.float() @ self.lora_A.T) @ self.lora_B.T
        return self.base(x) + self.scaling * update.to(x.dtype)
"""),
    Variant("LoRALinear", "no check of r", """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.in_features, self.out_features = base.in_features, base.out_features
        self.r, self.scaling = r, alpha / r if r else 0.0
        f = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.randn(max(r, 0), self.in_features, **f))
        self.lora_B = nn.Parameter(torch.zeros(self.out_features, max(r, 0), **f))

    def forward(self, x):
        return self.base(x) + self.scaling * (x @ self.lora_A.T) @ self.lora_B.T

    def merged(self):
        import copy
        out = copy.deepcopy(self.base)
        with torch.no_grad():
            out.weight += self.scaling * (self.lora_B @ self.lora_A)
        return out
"""),
    Variant("LoRALinear", "forward adds the update without the scaling", """
class LoRALinear(LoRALinear):
    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.T) @ self.lora_B.T
"""),
]
