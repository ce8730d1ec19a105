"""Topic 3 — Softmax: stability, temperature, gradients, streaming.

You build softmax the way production libraries do: shifted by the maximum so that no
exponential overflows, with a temperature that may be tiny or huge, and with ``-inf`` logits
(masked positions) handled without NaN; log-sum-exp and log-softmax, which stay finite where
``log(softmax(z))`` underflows; the softmax Jacobian ``diag(p) − p pᵀ``, whose collapse when one
logit dominates is why attention scores are scaled by ``1/√d_k``; and finally the online
(streaming) softmax with a running max and a running sum, and the FlashAttention recurrence that
extends it to a whole attention row.

Lesson: docs/lessons/03-softmax.md
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "log_softmax",
    "logsumexp",
    "online_attention",
    "online_softmax",
    "softmax",
    "softmax_jacobian",
]


def softmax(z: ArrayLike, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax with temperature: ``p_i = exp(z_i/T) / Σ_j exp(z_j/T)``.

    The maximum is subtracted before dividing by ``T`` and exponentiating, so every exponent is
    ``<= 0``: nothing overflows, however large the logits or small the temperature (the naive
    ``exp(z/T)`` overflows at ``z/T > 88.7`` in float32 and ``> 11.09`` in float16). The order
    matters: dividing first, then subtracting ``max(z/T)``, is the same algebra but ``z/T`` itself
    can overflow to ``inf`` for a tiny ``T`` (``1e306 / 1e-3``), and ``inf - inf`` is NaN.
    Extremes also come together: divide by ``T`` before exponentiating, never after
    (``softmax(z) ** (1/T)``): ``exp(-1600)`` is 0 although ``[800, -800]`` at ``T = 400`` gives
    ``[0.982, 0.018]``. Beyond the spec, logits further apart than the dtype's range
    (``[1e308, -1e308]`` at ``T = 1e308``) overflow ``z - max`` itself: ``z/2 - max/2``, divided
    by ``T`` and doubled, does not.

    Args:
        z: logits, any shape ``(...)``; float dtypes are kept, integers promoted to float64.
            Entries may be ``-inf`` (masked positions).
        axis: the axis that sums to 1 (``None``: all entries together).
        temperature: ``T``, a finite number > 0 (unitless). ``T → 0`` tends to the argmax
            (ties share equally), ``T → ∞`` to the uniform distribution.

    Returns:
        array of ``z``'s shape and float dtype, non-negative, summing to 1 along ``axis``.
        ``-inf`` entries get probability 0; a slice that is all ``-inf`` gives all zeros, not
        NaN. float16 is computed in float32 and returned as float16. Beyond the spec, ``+inf``
        entries take the limit: they share all the mass equally. NaN entries give NaN.

    Raises:
        ValueError: if ``temperature`` is not a finite number > 0 (0, negative, NaN, ±inf); if
            ``axis`` is out of range (NumPy's ``AxisError``, a ``ValueError``).

    Source:
        Lesson 03, "The max-subtraction trick"; Goodfellow, Bengio & Courville 2016, *Deep
        Learning*, §4.1; temperature as in Hinton, Vinyals & Dean 2015, "Distilling the
        Knowledge in a Neural Network".

    Example:
        >>> np.round(softmax(np.array([1.0, 2.0, 3.0])), 3)
        array([0.09 , 0.245, 0.665])
        >>> softmax(np.array([0.0, 1000.0]))                        # no overflow
        array([0., 1.])
        >>> np.round(softmax(np.array([1.0, 2.0, 3.0]), temperature=10.0), 3)
        array([0.301, 0.332, 0.367])
        >>> softmax(np.array([1e4, 1e4 - 1.0]), temperature=1e-3)    # naive exp(z/T) = inf
        array([1., 0.])
        >>> np.round(softmax(np.array([1e308, -1e308]), temperature=1e308), 3)  # z - max = -inf
        array([0.881, 0.119])
        >>> softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))  # a fully masked row
        array([[1., 0.],
               [0., 0.]])
    """
    ### BEGIN SOLUTION
    try:
        T = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}") from None
    if not (math.isfinite(T) and T > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    z = np.asarray(z)
    out_dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else np.dtype(np.float64)
    # exp in float16 is too coarse (and its range ends at e^11.09): work in float32.
    z = z.astype(np.float32 if out_dtype == np.float16 else out_dtype)
    m = np.max(z, axis=axis, keepdims=True, initial=-np.inf)  # initial: empty slices are fine
    # In an all -inf slice, -inf - (-inf) is NaN; shifting by 0 instead keeps every exp at 0.
    m = np.where(m == -np.inf, 0.0, m)
    with np.errstate(invalid="ignore", over="ignore"):
        # z == m also covers +inf logits (inf - inf is NaN); they become exp(0) = 1.
        # Halved: (z - m)/2 cannot overflow even for logits further apart than the dtype's
        # range ([1e308, -1e308]), where z - m is -inf although (z - m)/T at T = 1e308 is -2.
        half_gap = np.where(z == m, 0.0, z / 2 - m / 2)  # <= 0 everywhere
        # Shift first, then divide: (z - m)/T <= 0 cannot overflow to +inf, whatever T.
        e = np.exp(half_gap / T * 2)
    total = np.sum(e, axis=axis, keepdims=True)
    p = e / np.where(total == 0, 1.0, total)  # total = 0 only for an all -inf slice
    return p.astype(out_dtype, copy=False)
    ### END SOLUTION


def logsumexp(z: ArrayLike, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """Stable ``log Σ_i exp(z_i)`` along an axis, as ``m + log Σ_i exp(z_i − m)``, ``m = max z``.

    Args:
        z: logits, any shape ``(...)``; float dtypes are kept, integers promoted to float64.
        axis: the axis to reduce (``None``: all entries).
        keepdims: keep the reduced axis with length 1 (for broadcasting against ``z``).

    Returns:
        array of ``z``'s shape without ``axis`` (or with length 1 there when ``keepdims``), a 0-d
        array for a 1-D ``z``; ``z``'s float dtype (float16 computed in float32). An all
        ``-inf`` slice (or an empty one) gives ``-inf``, a ``+inf`` entry gives ``+inf``, never
        NaN; a NaN entry gives NaN.

    Raises:
        ValueError: if ``axis`` is out of range (NumPy's ``AxisError``).

    Source:
        Lesson 03, "Log-softmax through log-sum-exp".

    Example:
        >>> float(logsumexp(np.array([0.0, 1000.0])))     # naive log(e^0 + e^1000) = inf
        1000.0
        >>> np.round(logsumexp(np.array([[0.0, 0.0], [-np.inf, -np.inf]])), 4)
        array([0.6931,   -inf])
        >>> logsumexp(np.zeros((2, 3)), axis=0, keepdims=True).shape
        (1, 3)
    """
    ### BEGIN SOLUTION
    z = np.asarray(z)
    out_dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else np.dtype(np.float64)
    z = z.astype(np.float32 if out_dtype == np.float16 else out_dtype)
    m = np.max(z, axis=axis, keepdims=True, initial=-np.inf)
    # Any finite shift is exact algebra; a non-finite one would give -inf - (-inf) = NaN.
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", over="ignore"):  # log(0) = -inf is the right answer
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis)
    return out.astype(out_dtype, copy=False)
    ### END SOLUTION


def log_softmax(z: ArrayLike, axis: int = -1) -> np.ndarray:
    """Log-probabilities ``z − logsumexp(z)`` along an axis, finite where ``log(softmax)`` is not.

    Either ``z − logsumexp(z, keepdims=True)`` or the shifted form ``(z − m) − log Σ exp(z − m)``
    with ``m = max z`` will do: they are equal up to rounding of order ``eps · max|z|`` (for
    logits near ``1e308``, ``logsumexp`` rounds to the max itself, so the first form gives 0
    where the second gives ``−log 2``, a difference far below one step of the inputs).

    Args:
        z: logits, any shape ``(...)``; float dtypes are kept, integers promoted to float64.
        axis: the axis whose probabilities sum to 1.

    Returns:
        array of ``z``'s shape and float dtype (float16 computed in float32), all entries
        ``<= 0``. Finite for finite logits however far apart: ``[0, 1000] → [−1000, 0]``, where
        ``log(softmax)`` gives ``−inf``. A ``-inf`` logit gives ``-inf``; an all ``-inf`` slice
        gives all ``-inf``, never NaN. Beyond the spec, ``+inf`` logits take the limit: ``-log k``
        for each of the ``k`` infinite entries and ``-inf`` elsewhere.

    Raises:
        ValueError: if ``axis`` is out of range (NumPy's ``AxisError``).

    Source:
        Lesson 03, "Log-softmax through log-sum-exp".

    Example:
        >>> log_softmax(np.array([0.0, 1000.0]))
        array([-1000.,     0.])
        >>> log_softmax(np.array([-np.inf, -np.inf]))
        array([-inf, -inf])
    """
    ### BEGIN SOLUTION
    z = np.asarray(z)
    out_dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else np.dtype(np.float64)
    z = z.astype(np.float32 if out_dtype == np.float16 else out_dtype)
    m = np.max(z, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):  # -1e308 - 1e308 = -inf is right too
        # Shift first: lse of the shifted logits lies in [0, log n], so no large lse is added
        # to the max and taken away again (in float32 that rounding would cost 1e-4 at z ~ 1e3).
        z = z - m
        lse = logsumexp(z, axis=axis, keepdims=True)
        out = z - lse
    # In an all -inf slice lse = -inf and -inf - (-inf) is NaN: every log-probability is -inf.
    out = np.where(lse == -np.inf, -np.inf, out)
    if np.any(lse == np.inf):
        # A +inf logit takes all the mass, shared with any other +inf in its slice.
        n_inf = np.sum(z == np.inf, axis=axis, keepdims=True)
        log_share = -np.log(np.maximum(n_inf, 1))
        out = np.where(lse == np.inf, np.where(z == np.inf, log_share, -np.inf), out)
    return out.astype(out_dtype, copy=False)
    ### END SOLUTION


def softmax_jacobian(p: ArrayLike) -> np.ndarray:
    """Jacobian of softmax at the point whose output is ``p``: ``∂p_i/∂z_j = p_i (δ_ij − p_j)``.

    When one probability approaches 1, every entry approaches 0: the gradient through softmax
    vanishes, which is why attention divides its scores by ``√d_k`` before the softmax.

    Args:
        p: a probability vector, shape ``(N,)`` (the output of :func:`softmax`); float dtypes
            are kept, integers promoted to float64. It is not checked to sum to 1.

    Returns:
        array of shape ``(N, N)`` in ``p``'s float dtype: ``diag(p) − p pᵀ``, symmetric, with
        rows summing to 0 when ``p`` sums to 1.

    Raises:
        ValueError: if ``p`` is not 1-D (the message names its shape).

    Source:
        Lesson 03, "The Jacobian, and why we scale by √d_k"; Vaswani et al. 2017, §3.2.1.

    Example:
        >>> softmax_jacobian(np.array([0.5, 0.5]))
        array([[ 0.25, -0.25],
               [-0.25,  0.25]])
        >>> p = softmax(np.array([0.0, 12.0]))                    # one logit dominates
        >>> float(np.abs(softmax_jacobian(p)).max()) < 1e-5
        True
    """
    ### BEGIN SOLUTION
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"softmax_jacobian needs a 1-D probability vector (N,), got {p.shape}")
    if not np.issubdtype(p.dtype, np.inexact):
        p = p.astype(np.float64)
    return np.diag(p) - np.outer(p, p)  # (N, N)
    ### END SOLUTION


def online_softmax(z: ArrayLike, block_size: int) -> np.ndarray:
    """Softmax of a 1-D vector in one streaming pass over blocks, then one normalising pass.

    Blocks ``z[0:B], z[B:2B], …`` are visited left to right keeping only two numbers: the
    running max ``m`` and the running sum ``l = Σ exp(z_i − m)`` over the entries seen so far.
    When a block raises the max to ``m'``, the old sum is rescaled by ``exp(m − m')`` before the
    block's terms are added. A second pass then writes ``exp(z_i − m) / l``.

    Args:
        z: logits, shape ``(n,)``; float dtypes are kept, integers promoted to float64; entries
            may be ``-inf``.
        block_size: ``B``, entries per block, an integer >= 1 (``B > n`` gives a single block).

    Returns:
        array of shape ``(n,)`` and ``z``'s float dtype, equal to ``softmax(z)`` up to rounding
        (float16 computed in float32). An all ``-inf`` ``z`` gives zeros. The running sum is
        accumulated in float64.

    Raises:
        ValueError: if ``z`` is not 1-D (the message names its shape); if ``block_size`` is
            not an integer >= 1 (a float such as ``2.0`` and a bool are rejected; the message
            names the value).

    Source:
        Milakov & Gimelshein 2018, "Online normalizer calculation for softmax", Algorithm 3;
        Lesson 03, "Online softmax".

    Example:
        >>> z = np.array([2.0, 1.0, 5.0, -np.inf, 3.0])
        >>> np.round(online_softmax(z, block_size=2), 4)
        array([0.0414, 0.0152, 0.831 , 0.    , 0.1125])
        >>> bool(np.allclose(online_softmax(z, block_size=2), softmax(z)))
        True
    """
    ### BEGIN SOLUTION
    is_int = isinstance(block_size, (int, np.integer)) and not isinstance(block_size, bool)
    if not is_int or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    z = np.asarray(z)
    if z.ndim != 1:
        raise ValueError(f"online_softmax needs a 1-D vector (n,), got shape {z.shape}")
    out_dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else np.dtype(np.float64)
    z = z.astype(np.float32 if out_dtype == np.float16 else out_dtype)
    m = -math.inf  # running max of the entries seen so far
    l_sum = 0.0  # running sum l = Σ exp(z_i - m) over the entries seen so far
    for start in range(0, z.shape[0], block_size):
        block = z[start : start + block_size]
        m_new = float(np.maximum(m, np.max(block)))  # np.maximum keeps a NaN
        if m_new == -math.inf:
            continue  # only -inf so far: the sum is still 0
        # Rescale the old sum to the new max (1 if unchanged; also avoids inf - inf).
        rescale = 1.0 if m_new == m else math.exp(m - m_new)
        with np.errstate(invalid="ignore", over="ignore"):
            # block == m_new also covers a +inf max (inf - inf is NaN): exp(0) = 1 there.
            shifted = np.where(block == m_new, 0.0, block - m_new)  # (B,), <= 0
        l_sum = l_sum * rescale + float(np.sum(np.exp(shifted)))
        m = m_new
    if l_sum == 0.0:
        return np.zeros(z.shape, dtype=out_dtype)  # every entry is -inf
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.exp(np.where(z == m, 0.0, z - m)) / l_sum  # the one normalising pass
    return p.astype(out_dtype, copy=False)
    ### END SOLUTION


def online_attention(q: ArrayLike, K: ArrayLike, V: ArrayLike, block_size: int) -> np.ndarray:
    """One attention row ``softmax(q Kᵀ/√d) V`` in a single pass over key/value blocks.

    FlashAttention's recurrence for one query. For each block of ``block_size`` keys and values:
    scores ``s = K_blk q / √d``, new max ``m' = max(m, max s)``, then the running sum
    ``l ← l·exp(m − m') + Σ exp(s − m')`` and the accumulator
    ``acc ← acc·exp(m − m') + exp(s − m') V_blk``. The answer is ``acc / l``: the full
    ``(n,)`` row of weights is never stored.

    Args:
        q: one query, shape ``(d,)``, ``d >= 1``.
        K: keys, shape ``(n, d)``.
        V: values, shape ``(n, d_v)``.
        block_size: keys per block, an integer >= 1 (``> n`` gives a single block).

    Returns:
        array of shape ``(d_v,)``; dtype is the promotion of the inputs' float dtypes (integers
        promoted to float64; float16 computed in float32 and returned as float16). ``n = 0``
        (no keys) gives zeros. A score ``q·k/√d`` that overflows to ``-inf`` gives its key
        weight 0, like a masked key, even when a whole block holds nothing else.

    Raises:
        ValueError: if ``q`` is not 1-D, ``K`` or ``V`` not 2-D, ``K.shape[1] != d``,
            ``K.shape[0] != V.shape[0]`` or ``d = 0`` (the message names all three shapes); if
            ``block_size`` is not an integer >= 1 (a float such as ``2.0`` and a bool are
            rejected; the message names the value).

    Source:
        Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with
        IO-Awareness", Algorithm 1; Milakov & Gimelshein 2018; Lesson 03, "Online softmax".

    Example:
        >>> q1 = np.array([3.0, -3.0])                 # the toy query
        >>> K = np.array([[-3.0, 3.0], [1.0, 1.0]])    # k1, k2
        >>> V = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> np.round(online_attention(q1, K, V, block_size=1), 4)   # weights ≈ [3e-6, 1]
        array([0., 1.])
        >>> rng = np.random.default_rng(0)
        >>> q, K, V = rng.normal(size=4), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
        >>> bool(np.allclose(online_attention(q, K, V, 3), softmax(K @ q / 2.0) @ V))
        True
    """
    ### BEGIN SOLUTION
    is_int = isinstance(block_size, (int, np.integer)) and not isinstance(block_size, bool)
    if not is_int or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    q, K, V = np.asarray(q), np.asarray(K), np.asarray(V)
    if (
        q.ndim != 1
        or K.ndim != 2
        or V.ndim != 2
        or q.shape[0] == 0
        or K.shape[1] != q.shape[0]
        or K.shape[0] != V.shape[0]
    ):
        raise ValueError(
            "online_attention needs q (d,) with d >= 1, K (n, d) and V (n, d_v); got "
            f"q {q.shape}, K {K.shape}, V {V.shape}"
        )
    floats = [x if np.issubdtype(x.dtype, np.inexact) else x.astype(np.float64) for x in (q, K, V)]
    out_dtype = np.result_type(*floats)
    compute_dtype = np.float32 if out_dtype == np.float16 else out_dtype
    q, K, V = (x.astype(compute_dtype) for x in floats)
    scale = 1.0 / math.sqrt(q.shape[0])
    m = -math.inf  # running max score
    l_sum = 0.0  # running sum l = Σ exp(s - m)
    acc = np.zeros(V.shape[1], dtype=compute_dtype)  # running Σ exp(s - m) v, (d_v,)
    for start in range(0, K.shape[0], block_size):
        s = (K[start : start + block_size] @ q) * scale  # (B,)
        m_new = float(np.maximum(m, np.max(s)))
        if m_new == -math.inf:
            continue  # nothing but -inf scores so far
        rescale = 1.0 if m_new == m else math.exp(m - m_new)
        with np.errstate(over="ignore"):  # a score far below the max may give -inf: exp = 0
            weights = np.exp(s - m_new)  # (B,), each <= 1
        l_sum = l_sum * rescale + float(np.sum(weights))
        acc = acc * rescale + weights @ V[start : start + block_size]  # (d_v,)
        m = m_new
    if l_sum == 0.0:
        return np.zeros(V.shape[1], dtype=out_dtype)  # no keys to attend to
    return (acc / l_sum).astype(out_dtype, copy=False)
    ### END SOLUTION
