"""Topic 4 — SVD, low rank and LoRA.

You build the singular value decomposition toolkit that explains low-rank adaptation: the
truncated SVD ``W ≈ U_k Σ_k V_kᵀ``, the best rank-k approximation and its Eckart–Young–Mirsky
error, how many singular values hold a given share of the energy, the top singular triplet by
power iteration (matrix products only, no SVD routine), and a ``LoRALinear`` layer that freezes
an ``nn.Linear`` and learns the low-rank update ``(alpha / r) · B A`` beside it, then merges it
back into one plain layer for inference.

Lesson: docs/lessons/04-svd-lora.md
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = [
    "LoRALinear",
    "eckart_young_error",
    "low_rank_approx",
    "power_iteration",
    "rank_for_energy",
    "truncated_svd",
]


def truncated_svd(W: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep the k largest singular triplets of ``W = U Σ Vᵀ``.

    Args:
        W: matrix of shape ``(m, n)``, real, finite. Integer (and bool) input is promoted to
            float64; float input keeps its dtype (float16 is decomposed in float32, since
            LAPACK has no half precision, and the factors are returned in float16).
        k: number of triplets to keep, a Python or NumPy integer with ``1 <= k <= min(m, n)``.

    Returns:
        ``(U_k, S_k, Vt_k)``: ``U_k (m, k)`` with orthonormal columns, ``S_k (k,)`` the singular
        values in descending order (non-negative), ``Vt_k (k, n)`` with orthonormal rows, all in
        W's float dtype. Singular vectors are defined only up to a sign per triplet (up to a
        rotation inside a repeated singular value): compare ``U_k diag(S_k) Vt_k``, not the
        vectors themselves.

    Raises:
        ValueError: if W is not 2-D (the message names its shape), holds NaN or inf, or k is
            not an integer with ``1 <= k <= min(m, n)`` (a float such as ``2.0`` and a bool are
            rejected).

    Source:
        Eckart & Young 1936, "The approximation of one matrix by another of lower rank";
        lesson section "The singular value decomposition".

    Example:
        A 3×2 matrix with singular values 5 and 1, as in the lesson's spectrum figure:

        >>> W = np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])
        >>> U_k, S_k, Vt_k = truncated_svd(W, 1)
        >>> U_k.shape, S_k.shape, Vt_k.shape
        ((3, 1), (1,), (1, 2))
        >>> S_k.round(6)
        array([5.])
        >>> ((U_k * S_k) @ Vt_k).round(6)  # the rank-1 part: the "both coordinates" direction
        array([[2.5, 2.5],
               [2.5, 2.5],
               [0. , 0. ]])
    """
    ### BEGIN SOLUTION
    W = np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"truncated_svd: W must be a 2-D matrix (m, n), got shape {W.shape}")
    m, n = W.shape
    is_int = isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
    if not is_int or not 1 <= k <= min(m, n):
        raise ValueError(f"truncated_svd: k must be an integer with 1 <= k <= min(m, n) = "
                         f"{min(m, n)} for W of shape {W.shape}, got k={k!r}")
    if not np.issubdtype(W.dtype, np.inexact):
        W = W.astype(np.float64)  # integers and bools: the course promotes them to float64
    if not np.all(np.isfinite(W)):
        raise ValueError(f"truncated_svd: W of shape {W.shape} holds NaN or inf")
    out_dtype = W.dtype
    # LAPACK has no float16: decompose in float32, hand back float16
    work = W.astype(np.float32) if W.dtype == np.float16 else W
    U, S, Vt = np.linalg.svd(work, full_matrices=False)  # (m, r), (r,), (r, n), r = min(m, n)
    # LAPACK already sorts S in descending order; copies so the full factors can be freed
    U_k = U[:, :k].astype(out_dtype, copy=True)  # (m, k)
    S_k = S[:k].astype(out_dtype, copy=True)  # (k,)
    Vt_k = Vt[:k, :].astype(out_dtype, copy=True)  # (k, n)
    return U_k, S_k, Vt_k
    ### END SOLUTION


def low_rank_approx(W: np.ndarray, k: int) -> np.ndarray:
    """The best rank-k approximation ``W_k = Σ_{i<=k} σ_i u_i v_iᵀ`` of ``W``.

    By the Eckart–Young–Mirsky theorem no matrix of rank at most k is closer to W in the
    Frobenius norm (or the spectral norm). ``W_k`` is unique when ``σ_k > σ_{k+1}``.

    Args:
        W: matrix of shape ``(m, n)``; dtype rules as in ``truncated_svd``.
        k: target rank, an integer with ``1 <= k <= min(m, n)``.

    Returns:
        ``W_k`` of shape ``(m, n)`` in W's float dtype (integers give float64); its rank is at
        most k, and ``k = min(m, n)`` reproduces W up to rounding.

    Raises:
        ValueError: as ``truncated_svd`` (W not 2-D or not finite, k out of range).

    Source:
        Eckart & Young 1936; lesson section "Eckart–Young–Mirsky".

    Example:
        >>> W = np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])
        >>> low_rank_approx(W, 1).round(6)
        array([[2.5, 2.5],
               [2.5, 2.5],
               [0. , 0. ]])
        >>> np.allclose(low_rank_approx(W, 2), W)  # k = min(m, n) keeps everything
        True
    """
    ### BEGIN SOLUTION
    U_k, S_k, Vt_k = truncated_svd(W, k)  # (m, k), (k,), (k, n)
    # scale the columns of U_k by σ instead of building diag(S_k): O(mk) rather than a k×k matmul
    return (U_k * S_k) @ Vt_k  # (m, n)
    ### END SOLUTION


def eckart_young_error(W: np.ndarray, k: int) -> float:
    """Frobenius error of the best rank-k approximation: ``√(Σ_{i>k} σ_i²)``.

    This equals ``‖W − W_k‖_F`` for ``W_k = low_rank_approx(W, k)`` (up to rounding), but is
    computed from the singular values alone, without forming ``W_k``.

    Args:
        W: matrix of shape ``(m, n)``, real, finite; integers are promoted to float64.
        k: an integer with ``1 <= k <= min(m, n)`` (the same range as ``truncated_svd``).

    Returns:
        The error as a Python float ``>= 0``; ``k = min(m, n)`` drops nothing and gives exactly
        0.0. The tail is summed after dividing by its largest value, so singular values near
        1e±200 neither overflow nor underflow when squared.

    Raises:
        ValueError: if W is not 2-D (the message names its shape) or not finite, or k is not
            an integer in ``[1, min(m, n)]`` (a float such as ``2.0`` and a bool are rejected).

    Source:
        Eckart & Young 1936 (Mirsky 1960 for every unitarily invariant norm); lesson section
        "Eckart–Young–Mirsky".

    Example:
        Singular values 5 and 1: keeping only σ1 leaves an error of σ2 = 1.

        >>> W = np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])
        >>> round(eckart_young_error(W, 1), 6)
        1.0
        >>> eckart_young_error(W, 2)
        0.0
    """
    ### BEGIN SOLUTION
    W = np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"eckart_young_error: W must be a 2-D matrix (m, n), got shape {W.shape}")
    is_int = isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))
    if not is_int or not 1 <= k <= min(W.shape):
        raise ValueError(f"eckart_young_error: k must be an integer with 1 <= k <= min(m, n) = "
                         f"{min(W.shape)} for W of shape {W.shape}, got k={k!r}")
    if not np.issubdtype(W.dtype, np.inexact):
        W = W.astype(np.float64)
    if not np.all(np.isfinite(W)):
        raise ValueError(f"eckart_young_error: W of shape {W.shape} holds NaN or inf")
    # only the singular values are needed; float64 so the returned float is as exact as it can be
    work = W.astype(np.complex128 if np.iscomplexobj(W) else np.float64)
    S = np.linalg.svd(work, compute_uv=False)  # (min(m, n),), descending
    tail = S[k:]  # the singular values the rank-k approximation throws away
    peak = tail.max() if tail.size else 0.0
    if peak == 0.0:
        return 0.0
    # divide by the largest dropped σ before squaring: no overflow or underflow in σ²
    return float(peak * np.sqrt(np.sum((tail / peak) ** 2)))
    ### END SOLUTION


def rank_for_energy(S: np.ndarray, energy: float = 0.9) -> int:
    """Smallest k whose leading singular values hold a share ``energy`` of ``Σ σ_i²``.

    Returns the smallest ``k >= 1`` with ``Σ_{i<=k} σ_i² >= energy · Σ_i σ_i²``, taking S in
    the order given (descending, as every SVD routine returns it).

    Rounding: a running sum ``cumsum(σ²)`` can end a few ulps away from the total, and small
    σ² vanish when added to a large partial sum, so comparing it with ``energy · total`` is
    fragile at ``energy = 1``. This function tests the equivalent condition on what is left
    out, ``Σ_{i>k} σ_i² <= (1 − energy) · Σ σ_i²``, with the tails summed from the small end
    (``1 − energy`` is exact for ``energy`` in [0.5, 1]). ``energy = 1`` is decided exactly:
    it asks for every nonzero singular value, so the answer is the position of the last nonzero
    σ (the number of nonzero singular values when S is sorted); an all-zero S gives 1.

    Args:
        S: singular values, shape ``(r,)``, non-negative and finite, descending; any real
            dtype (the sums are done in float64 after dividing by ``max(S)``).
        energy: the share to keep, a real number with ``0 < energy <= 1`` (0.9 = 90 %).

    Returns:
        k as a Python int, ``1 <= k <= r``.

    Raises:
        ValueError: if S is not 1-D or is empty (the message names its shape), holds a
            negative, NaN or inf value, or if energy is not in ``(0, 1]``.

    Source:
        Eckart & Young 1936 (the tail of σ² is the squared error of the rank-k approximation);
        lesson section "How many singular values to keep".

    Example:
        σ = [5, 1]: σ1² = 25 holds 25/26 ≈ 96 % of the energy.

        >>> rank_for_energy(np.array([5.0, 1.0]), energy=0.9)
        1
        >>> rank_for_energy(np.array([5.0, 1.0]), energy=0.97)
        2
        >>> rank_for_energy(np.array([5.0, 1.0, 0.0]), energy=1.0)  # every nonzero σ
        2
        >>> rank_for_energy(np.zeros(4))
        1
    """
    ### BEGIN SOLUTION
    S = np.asarray(S)
    if S.ndim != 1 or S.size == 0:
        raise ValueError(f"rank_for_energy: S must be a non-empty 1-D array, got shape {S.shape}")
    if not (np.issubdtype(S.dtype, np.integer) or np.issubdtype(S.dtype, np.floating)):
        raise ValueError(f"rank_for_energy: S must hold real numbers, got dtype {S.dtype}")
    s = S.astype(np.float64)  # (r,)
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError("rank_for_energy: singular values must be finite and non-negative, "
                         f"got min {s.min()!r}, max {s.max()!r}")
    energy = float(energy)
    if not 0.0 < energy <= 1.0:  # also rejects NaN
        raise ValueError(f"rank_for_energy: energy must satisfy 0 < energy <= 1, got {energy!r}")
    peak = s.max()
    if peak == 0.0:
        return 1  # no energy at all: one singular value already holds "all" of it
    if energy == 1.0:
        return int(np.flatnonzero(s)[-1]) + 1  # exact: up to and including the last nonzero σ
    sq = (s / peak) ** 2  # (r,) scaled so the largest term is 1: σ² cannot overflow
    tail = np.cumsum(sq[::-1])[::-1]  # (r,) tail[j] = Σ_{i>=j} sq_i, small terms summed first
    left_out = np.append(tail[1:], 0.0)  # (r,) left_out[k-1] = energy outside the first k values
    return int(np.argmax(left_out <= (1.0 - energy) * tail[0])) + 1
    ### END SOLUTION


def power_iteration(
    W: np.ndarray, n_iter: int = 200, seed: int = 0
) -> tuple[float, np.ndarray, np.ndarray]:
    """Top singular triplet ``(σ1, u1, v1)`` of ``W`` by power iteration on ``WᵀW``.

    Starting from a seeded random unit vector ``v``, each step computes ``u = W v / ‖W v‖`` and
    ``v = Wᵀ u / ‖Wᵀ u‖``: two matrix–vector products, no SVD or eigen-solver. The error in
    ``v`` shrinks like ``(σ2/σ1)^(2t)`` after t steps, so a spectral gap σ1/σ2 >= 1.5 reaches
    machine precision well within the default 200 steps. W is first divided by its largest
    entry (and σ1 multiplied back) so that tiny or huge matrices neither underflow nor overflow.

    Args:
        W: matrix of shape ``(m, n)``, real and finite, square or not; integers (and bools)
            are promoted to float64. The iteration runs in float64.
        n_iter: number of iterations, an integer >= 0 (0 returns the normalised random start).
        seed: seed of ``np.random.default_rng`` for the start vector, for reproducible output.

    Returns:
        ``(sigma1, u1, v1)``: ``sigma1`` a Python float ``>= 0``; ``u1 (m,)`` and ``v1 (n,)``
        unit vectors in W's float dtype (float64 for integer W) with ``W v1 ≈ sigma1 u1`` and
        ``Wᵀ u1 ≈ sigma1 v1``. The sign of the pair is arbitrary (``(−u1, −v1)`` is as good).
        A zero matrix gives ``sigma1 = 0.0`` with the unit vectors ``e_1`` of each side.

    Raises:
        ValueError: if W is not 2-D or is empty (the message names its shape), not real (a
            complex W is rejected) or not finite, or n_iter is not an integer >= 0 (a float
            such as ``2.0`` and a bool are rejected).

    Source:
        Golub & Van Loan, Matrix Computations (2013), §8.2 (power method); lesson section
        "Power iteration".

    Example:
        >>> W = np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])  # σ1 = 5, σ2 = 1
        >>> sigma1, u1, v1 = power_iteration(W)
        >>> round(sigma1, 6)
        5.0
        >>> np.abs(v1).round(4)  # ±[1, 1] / √2
        array([0.7071, 0.7071])
        >>> bool(np.allclose(W @ v1, sigma1 * u1))
        True
    """
    ### BEGIN SOLUTION
    W = np.asarray(W)
    if W.ndim != 2 or W.size == 0:
        raise ValueError(f"power_iteration: W must be a non-empty 2-D matrix, got shape {W.shape}")
    is_int = isinstance(n_iter, (int, np.integer)) and not isinstance(n_iter, (bool, np.bool_))
    if not is_int or n_iter < 0:
        raise ValueError(f"power_iteration: n_iter must be an integer >= 0, got {n_iter!r}")
    if not (np.issubdtype(W.dtype, np.floating) or np.issubdtype(W.dtype, np.integer)
            or W.dtype == np.bool_):
        raise ValueError(f"power_iteration: W must be real, got dtype {W.dtype}")
    out_dtype = W.dtype if np.issubdtype(W.dtype, np.floating) else np.dtype(np.float64)
    A = W.astype(np.float64)  # (m, n)
    if not np.all(np.isfinite(A)):
        raise ValueError(f"power_iteration: W of shape {W.shape} holds NaN or inf")
    m, n = A.shape
    peak = np.abs(A).max()
    if peak == 0.0:
        # every unit vector is a singular vector of the zero matrix; pick e_1 on each side
        u = np.zeros(m, dtype=out_dtype)  # (m,)
        v = np.zeros(n, dtype=out_dtype)  # (n,)
        u[0] = v[0] = 1.0
        return 0.0, u, v
    A = A / peak  # largest entry 1: the norms below can neither underflow nor overflow
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n)  # (n,) a random start has a nonzero component along v1
    v /= np.linalg.norm(v)
    for _ in range(n_iter):
        u = A @ v  # (m,) nonzero: a Gaussian start lies in the null space with probability 0
        u /= np.linalg.norm(u)
        v = A.T @ u  # (n,) one step of v <- AᵀA v, normalised
        v /= np.linalg.norm(v)
    u = A @ v  # (m,) = σ1 u1 in the limit, so W v1 = σ1 u1 holds to rounding
    sigma = np.linalg.norm(u)
    u /= sigma
    return float(sigma * peak), u.astype(out_dtype), v.astype(out_dtype)
    ### END SOLUTION


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update: ``W = W0 + (alpha / r) · B A``.

    PyTorch's ``nn.Linear`` stores its weight as ``(out_features, in_features)`` and computes
    ``x @ W0ᵀ + b``; the update keeps that layout: ``B (out_features, r)``, ``A (r,
    in_features)``. Only ``r · (in_features + out_features)`` numbers are trained instead of
    ``in_features · out_features``.

    Attributes:
        base: the wrapped layer, every parameter with ``requires_grad=False``.
        lora_A: ``nn.Parameter (r, in_features)``, Gaussian ``N(0, (1/r)²)`` at creation.
        lora_B: ``nn.Parameter (out_features, r)``, zeros at creation, so ``B A = 0`` and the
            layer starts exactly at the base model.
        r: the rank. alpha: the scale hyperparameter. scaling: ``alpha / r``.
        in_features, out_features: copied from ``base``.
    """

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        """Wrap ``base`` and add the rank-r adapter on base's device and dtype.

        ``lora_A`` is drawn from ``N(0, σ²)`` with ``σ = 1/r`` (PEFT's ``init_lora_weights=
        "gaussian"``); Hu et al. only ask for "a random Gaussian", and since ``B = 0`` any
        scale gives the same starting model. Draws use torch's global generator: call
        ``torch.manual_seed`` first for reproducible weights. On the ``meta`` device no values
        are drawn (meta tensors hold none).

        Args:
            base: the pretrained layer, ``nn.Linear(in_features, out_features)``; it is frozen
                in place (its parameters get ``requires_grad=False``) and kept as ``self.base``.
            r: rank of the update, an integer with ``1 <= r <= min(in_features,
                out_features)``.
            alpha: scale hyperparameter (a real number; commonly 2r or 16); the update is
                multiplied by ``scaling = alpha / r``.

        Raises:
            ValueError: if r is not an integer in ``[1, min(in_features, out_features)]`` (a
                float such as ``2.0`` and a bool are rejected), or alpha is not a finite real
                number (``inf``, NaN, a bool or a string are rejected).
            TypeError: if base is not an ``nn.Linear`` (a wrong kind of object, not a bad
                value).

        Source:
            Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", §4.1;
            lesson section "LoRA".

        Example:
            A rank-r adapter on a ``d_in → d_out`` projection trains ``r · (d_in + d_out)``
            numbers instead of ``d_in · d_out``: for a GPT-2-small query projection
            (768 → 768) at r = 8, 12,288 instead of 589,824. The same at 64 → 64:

            >>> _ = torch.manual_seed(0)
            >>> q_proj = nn.Linear(64, 64)
            >>> lora = LoRALinear(q_proj, r=8, alpha=16)
            >>> lora.scaling
            2.0
            >>> sum(p.numel() for p in lora.parameters() if p.requires_grad)  # 8 · (64 + 64)
            1024
            >>> q_proj.weight.numel()
            4096
        """
        ### BEGIN SOLUTION
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"LoRALinear: base must be an nn.Linear, got {type(base).__name__}")
        d_in, d_out = base.in_features, base.out_features
        r_is_int = isinstance(r, (int, np.integer)) and not isinstance(r, (bool, np.bool_))
        if not r_is_int or not 1 <= r <= min(d_in, d_out):
            raise ValueError(f"LoRALinear: r must be an integer with 1 <= r <= min(in_features, "
                             f"out_features) = {min(d_in, d_out)} for a ({d_out}, {d_in}) "
                             f"weight, got r={r!r}")
        alpha_is_real = isinstance(alpha, (int, float, np.integer, np.floating)) and not isinstance(
            alpha, (bool, np.bool_))
        if not alpha_is_real or not np.isfinite(alpha):
            raise ValueError(f"LoRALinear: alpha must be a finite real number, got {alpha!r}")
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)  # the pretrained weights stay fixed; only A and B learn
        self.in_features, self.out_features = d_in, d_out
        self.r = int(r)
        self.alpha = float(alpha)
        self.scaling = self.alpha / self.r
        factory = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.empty(self.r, d_in, **factory))  # (r, in)
        self.lora_B = nn.Parameter(torch.zeros(d_out, self.r, **factory))  # (out, r)
        # A random, B zero: B A = 0, so training starts exactly at the base model
        nn.init.normal_(self.lora_A, mean=0.0, std=1.0 / self.r)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the base layer plus the scaled low-rank path.

        Args:
            x: input of shape ``(..., in_features)`` in the layer's dtype, on its device.

        Returns:
            ``base(x) + scaling · (x Aᵀ) Bᵀ``, shape ``(..., out_features)``, same dtype and
            device. The update is applied as two thin products (through the r-wide bottleneck)
            rather than by forming ``B A``.

        Raises:
            ValueError: if x's last dimension is not ``in_features``.

        Source:
            Hu et al. 2021, eq. (3); lesson section "LoRA".

        Example:
            >>> _ = torch.manual_seed(0)
            >>> lora = LoRALinear(nn.Linear(64, 64), r=8, alpha=16)
            >>> x = torch.randn(2, 5, 64)  # (B, L, d_model)
            >>> lora(x).shape
            torch.Size([2, 5, 64])
            >>> torch.equal(lora(x), lora.base(x))  # B = 0 at creation: the base model exactly
            True
        """
        ### BEGIN SOLUTION
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(f"LoRALinear.forward: x must have shape (..., {self.in_features}), "
                             f"got {tuple(x.shape)}")
        down = x @ self.lora_A.T  # (..., r)
        update = down @ self.lora_B.T  # (..., out)
        return self.base(x) + self.scaling * update  # (..., out)
        ### END SOLUTION

    def merged(self) -> nn.Linear:
        """A new ``nn.Linear`` whose weight is ``W0 + scaling · B A`` (for inference).

        The merged layer computes the same function as ``self`` with one matmul and no extra
        latency. For float16/bfloat16 layers the sum is formed in float32 and rounded once.
        ``self.base`` is left untouched, and the new layer is an ordinary ``nn.Linear`` (its
        parameters have PyTorch's default ``requires_grad=True``).

        Returns:
            ``nn.Linear(in_features, out_features)`` on base's device and dtype, weight
            ``(out_features, in_features)`` = ``W0 + scaling · B A``, bias a copy of base's
            (no bias if base has none).

        Source:
            Hu et al. 2021, §4.1 ("No additional inference latency"); lesson section "LoRA".

        Example:
            >>> _ = torch.manual_seed(0)
            >>> lora = LoRALinear(nn.Linear(64, 32), r=4, alpha=8)
            >>> with torch.no_grad():
            ...     _ = lora.lora_B.normal_()  # pretend we trained B
            >>> x = torch.randn(3, 64)
            >>> bool(torch.allclose(lora.merged()(x), lora(x), atol=1e-4))
            True
        """
        ### BEGIN SOLUTION
        W0 = self.base.weight  # (out, in)
        out = nn.Linear(self.in_features, self.out_features, bias=self.base.bias is not None,
                        device=W0.device, dtype=W0.dtype)
        # half precision: add in float32 and round once instead of rounding every partial sum
        acc = torch.promote_types(W0.dtype, torch.float32)
        with torch.no_grad():
            delta = self.lora_B.to(acc) @ self.lora_A.to(acc)  # (out, in)
            out.weight.copy_(W0.to(acc) + self.scaling * delta)  # (out, in)
            if self.base.bias is not None:
                out.bias.copy_(self.base.bias)  # (out,)
        return out
        ### END SOLUTION
