"""Topic 6 — Rotation, RoPE and normalisation.

You build the two ways a transformer controls the geometry of its vectors. Rotations: the 2×2
rotation matrix (an isometry: lengths never change), the rotary position embedding's angles
``pos · base^(−2i/rotary_dim)``, and RoPE itself in the half-split ("rotate-half",
GPT-NeoX/LLaMA) layout, including partial rotary where only the first ``rotary_dim`` dimensions
of each head turn. Normalisation: RMSNorm, LayerNorm with PyTorch's biased variance, and QK-norm,
which applies RMSNorm to queries and keys per head and leaves values alone.

Lesson: docs/lessons/06-rotation-norm.md
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "apply_rope",
    "layer_norm",
    "qk_norm",
    "rms_norm",
    "rope_angles",
    "rotation_matrix",
]


def rotation_matrix(theta: float) -> np.ndarray:
    """The 2×2 matrix that rotates a column vector counter-clockwise by ``theta`` radians.

    ``R = [[cos θ, −sin θ], [sin θ, cos θ]]``; column-vector convention: ``R @ v``. A row vector
    (the course's convention for tokens) is rotated by ``v @ R.T``. R is orthogonal
    (``Rᵀ R = I``, ``det R = 1``), so lengths and angles are preserved.

    Args:
        theta: the angle in radians (a real scalar; positive = counter-clockwise).

    Returns:
        float64 array of shape ``(2, 2)``.

    Raises:
        ValueError: if theta is not a finite real scalar.

    Source:
        Su et al. 2021, RoFormer, eq. (13) (the 2-D case of RoPE); lesson section
        "Rotation is an isometry".

    Example:
        Rotating cat = [0.8, 0.3] by 90° gives [−0.3, 0.8] with the same length 0.854:

        >>> cat = np.array([0.8, 0.3])
        >>> R = rotation_matrix(np.pi / 2)
        >>> (R @ cat).round(3) + 0.0
        array([-0.3,  0.8])
        >>> round(float(np.linalg.norm(R @ cat)), 3), round(float(np.linalg.norm(cat)), 3)
        (0.854, 0.854)
    """
    ### BEGIN SOLUTION
    t = np.asarray(theta)
    if t.ndim != 0 or not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype,
                                                                                np.floating)):
        raise ValueError(f"rotation_matrix: theta must be a real scalar, got {theta!r}")
    t = float(t)
    if not np.isfinite(t):
        raise ValueError(f"rotation_matrix: theta must be finite, got {theta!r}")
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s], [s, c]], dtype=np.float64)  # (2, 2)
    ### END SOLUTION


def rope_angles(positions: np.ndarray, rotary_dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation angles of RoPE: ``θ[p, i] = positions[p] · base^(−2i / rotary_dim)``.

    Pair i (i = 0 … rotary_dim/2 − 1) turns with frequency ``base^(−2i/rotary_dim)`` radians
    per position: pair 0 once per position (fast, local), the last pair slowest (long range).

    Args:
        positions: token positions, shape ``(n,)``; integers (float positions, e.g. for
            position interpolation, are accepted too), finite.
        rotary_dim: number of rotated dimensions, a positive even integer (the head dim, or
            less for partial rotary).
        base: the wavelength base, a finite number > 0 (10000 in RoFormer and LLaMA-2).

    Returns:
        float64 array of shape ``(n, rotary_dim // 2)``, in radians (not reduced mod 2π).

    Raises:
        ValueError: if positions is not 1-D real and finite, rotary_dim is not a positive even
            integer, or base is not a finite number > 0.

    Source:
        Su et al. 2021, RoFormer, eq. (15) (``θ_i = 10000^(−2(i−1)/d)``); lesson section "RoPE".

    Example:
        A Qwen3.6-style head: 64 of 256 dimensions rotated, i.e. 32 frequencies.

        >>> theta = rope_angles(np.arange(4), rotary_dim=64)
        >>> theta.shape
        (4, 32)
        >>> theta[:, 0]  # the fastest pair turns one radian per position
        array([0., 1., 2., 3.])
        >>> theta[1, [1, 31]].round(6).tolist()  # 10000^(-2/64), 10000^(-62/64)
        [0.749894, 0.000133]
    """
    ### BEGIN SOLUTION
    pos = np.asarray(positions)
    if pos.ndim != 1 or not (np.issubdtype(pos.dtype, np.integer)
                             or np.issubdtype(pos.dtype, np.floating)):
        raise ValueError(f"rope_angles: positions must be a 1-D array of integers (n,), got "
                         f"shape {pos.shape} and dtype {pos.dtype}")
    pos = pos.astype(np.float64)  # (n,)
    if not np.all(np.isfinite(pos)):
        raise ValueError("rope_angles: positions must be finite")
    is_int = isinstance(rotary_dim, (int, np.integer)) and not isinstance(rotary_dim, bool)
    if not is_int or rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"rope_angles: rotary_dim must be a positive even integer (dimensions "
                         f"rotate in pairs), got {rotary_dim!r}")
    base = float(base)
    if not (np.isfinite(base) and base > 0.0):
        raise ValueError(f"rope_angles: base must be a finite number > 0, got {base!r}")
    i = np.arange(rotary_dim // 2, dtype=np.float64)  # (rotary_dim/2,) pair index
    inv_freq = base ** (-2.0 * i / rotary_dim)  # (rotary_dim/2,) radians per position
    return np.outer(pos, inv_freq)  # (n, rotary_dim/2)
    ### END SOLUTION


def apply_rope(
    x: np.ndarray,
    positions: np.ndarray,
    rotary_dim: int | None = None,
    base: float = 10000.0,
) -> np.ndarray:
    """Rotary position embedding, half-split ("rotate-half") layout, optionally partial.

    With ``h = rotary_dim / 2``, dimension i is paired with dimension ``i + h`` (GPT-NeoX,
    LLaMA, Hugging Face's ``rotate_half``), not with ``i + 1`` as in the interleaved layout of
    GPT-J and the RoFormer paper: the same rotations, laid out differently, and mixing the two
    silently scrambles a pretrained model. Each pair ``(x1, x2) = (x[..., i], x[..., i + h])``
    turns counter-clockwise by ``θ = rope_angles(positions, rotary_dim, base)[:, i]``:

        ``[x1 cos θ − x2 sin θ,  x2 cos θ + x1 sin θ,  x[..., rotary_dim:]]``

    The last ``d − rotary_dim`` dimensions pass through unchanged (partial rotary). Because
    each pair is rotated, ``⟨apply_rope(q, m), apply_rope(k, n)⟩`` depends on the positions
    only through ``m − n``. The arithmetic is done in float64 and the result rounded once to
    x's dtype.

    Args:
        x: queries or keys, shape ``(..., n, d)`` (e.g. ``(B, n_heads, n, d_h)``); float dtype
            kept, integers promoted to float64.
        positions: shape ``(n,)``, the position of each of the n tokens (integers).
        rotary_dim: number of leading dimensions to rotate, even, ``<= d``; default d.
        base: the wavelength base (see ``rope_angles``).

    Returns:
        Array of x's shape ``(..., n, d)`` and float dtype.

    Raises:
        ValueError: if x has fewer than 2 dimensions or is not real, positions does not have
            length n, rotary_dim is odd, < 2 or > d, or base is not > 0.

    Source:
        Su et al. 2021, RoFormer, §3.4.2 (eq. (34)); the half-split layout is GPT-NeoX's
        (Black et al. 2022); lesson section "Half-split versus interleaved pairs".

    Example:
        With d = 2 the only frequency is 1: position 1 turns cat = [0.8, 0.3] by one radian.

        >>> cat = np.array([[0.8, 0.3]])  # (n=1, d=2)
        >>> apply_rope(cat, np.array([1])).round(4)
        array([[0.1798, 0.8353]])

        Lesson 6's partial rotary: 64 of 256 head dimensions turn, 192 stay put, and scores
        depend only on the distance between positions (5 − 3 = 12 − 10):

        >>> rng = np.random.default_rng(0)
        >>> q, k = rng.standard_normal((2, 1, 256))  # (n=1, d_h=256) each
        >>> bool(np.array_equal(apply_rope(q, np.array([7]), rotary_dim=64)[:, 64:], q[:, 64:]))
        True
        >>> s1 = apply_rope(q, np.array([5]), 64) @ apply_rope(k, np.array([3]), 64).T
        >>> s2 = apply_rope(q, np.array([12]), 64) @ apply_rope(k, np.array([10]), 64).T
        >>> bool(np.allclose(s1, s2))
        True
    """
    ### BEGIN SOLUTION
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"apply_rope: x must have shape (..., n, d), got {x.shape}")
    if not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
        raise ValueError(f"apply_rope: x must hold real numbers, got dtype {x.dtype}")
    n, d = x.shape[-2], x.shape[-1]
    if rotary_dim is None:
        rotary_dim = d
    is_int = isinstance(rotary_dim, (int, np.integer)) and not isinstance(rotary_dim, bool)
    if not is_int or rotary_dim > d:
        raise ValueError(f"apply_rope: rotary_dim must be an even integer <= d = {d} "
                         f"(x of shape {x.shape}), got {rotary_dim!r}")
    if np.ndim(positions) != 1 or len(positions) != n:
        raise ValueError(f"apply_rope: positions must have shape ({n},) to match x of shape "
                         f"{x.shape}, got {np.shape(positions)}")
    theta = rope_angles(positions, rotary_dim, base)  # (n, h); rejects odd rotary_dim
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    h = rotary_dim // 2
    cos, sin = np.cos(theta), np.sin(theta)  # (n, h) each, broadcast over leading axes
    xf = x.astype(np.float64)  # (..., n, d)
    x1 = xf[..., :h]  # (..., n, h) first member of each pair
    x2 = xf[..., h:rotary_dim]  # (..., n, h) its partner, h dimensions later
    out = np.concatenate(
        [x1 * cos - x2 * sin, x2 * cos + x1 * sin, xf[..., rotary_dim:]], axis=-1
    )  # (..., n, d)
    return out.astype(out_dtype)
    ### END SOLUTION


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Root-mean-square normalisation over the last axis: ``x / √(mean(x²) + eps) · weight``.

    Unlike LayerNorm it neither subtracts the mean nor adds a bias: it only rescales each
    vector to unit RMS, then multiplies by the learned gain.

    Args:
        x: array of shape ``(..., d)`` with d >= 1. float16 is computed in float32 (x² of
            large fp16 values would overflow) and returned as float16; other float dtypes are
            kept; integers are promoted to float64.
        weight: the gain γ, shape ``(d,)``.
        eps: a finite number >= 0 added to the mean square (inside the square root).

    Returns:
        Array of x's shape ``(..., d)`` in x's float dtype (float64 for integer x).

    Raises:
        ValueError: if x is 0-D or has an empty last axis, weight's shape is not ``(d,)``,
            or eps is negative or not finite.

    Source:
        Zhang & Sennrich 2019, "Root Mean Square Layer Normalization", eq. (4); lesson
        section "RMSNorm and LayerNorm".

    Example:
        cat = [0.8, 0.3] has mean square 0.365, so it is divided by 0.604:

        >>> rms_norm(np.array([0.8, 0.3]), np.ones(2), eps=0.0).round(4)
        array([1.3242, 0.4966])
        >>> rms_norm(np.array([0.8, 0.3]), np.array([0.5, 2.0]), eps=0.0).round(4)
        array([0.6621, 0.9931])
    """
    ### BEGIN SOLUTION
    x = np.asarray(x)
    weight = np.asarray(weight)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"rms_norm: x must have shape (..., d) with d >= 1, got {x.shape}")
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"rms_norm: weight must have shape ({x.shape[-1]},) to match x of "
                         f"shape {x.shape}, got {weight.shape}")
    eps = float(eps)
    if not (np.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"rms_norm: eps must be a finite number >= 0, got {eps!r}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    work = np.float32 if out_dtype == np.float16 else out_dtype
    xw = x.astype(work)  # (..., d)
    mean_sq = np.mean(xw * xw, axis=-1, keepdims=True)  # (..., 1)
    y = xw / np.sqrt(mean_sq + eps) * weight.astype(work)  # (..., d)
    return y.astype(out_dtype)
    ### END SOLUTION


def layer_norm(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5
) -> np.ndarray:
    """Layer normalisation over the last axis: ``(x − μ) / √(σ² + eps) · weight + bias``.

    ``σ²`` is the biased variance ``mean((x − μ)²)`` (divide by d, not d − 1), as
    ``torch.nn.LayerNorm`` computes it. It is formed from the centred values (two passes), which
    stays accurate when the mean is large compared with the spread.

    Args:
        x: array of shape ``(..., d)`` with d >= 1; float16 is computed in float32 and
            returned as float16, other float dtypes are kept, integers become float64.
        weight: the gain γ, shape ``(d,)``.
        bias: the shift β, shape ``(d,)``.
        eps: a finite number >= 0 added to the variance.

    Returns:
        Array of x's shape ``(..., d)`` in x's float dtype (float64 for integer x).

    Raises:
        ValueError: if x is 0-D or has an empty last axis, weight or bias is not ``(d,)``, or
            eps is negative or not finite.

    Source:
        Ba et al. 2016, "Layer Normalization", eq. (4); lesson section "RMSNorm and LayerNorm".

    Example:
        cat = [0.8, 0.3]: mean 0.55, biased variance 0.0625, so (x − μ)/0.25 = [1, −1]:

        >>> layer_norm(np.array([0.8, 0.3]), np.ones(2), np.zeros(2), eps=0.0)
        array([ 1., -1.])

        With the default eps = 1e-5, a vector with a small spread (dog: variance 0.0025) is
        visibly damped:

        >>> layer_norm(np.array([[0.8, 0.3], [0.6, 0.7]]), np.ones(2), np.full(2, 0.5)).round(4)
        array([[ 1.4999, -0.4999],
               [-0.498 ,  1.498 ]])
    """
    ### BEGIN SOLUTION
    x = np.asarray(x)
    weight = np.asarray(weight)
    bias = np.asarray(bias)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"layer_norm: x must have shape (..., d) with d >= 1, got {x.shape}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: {name} must have shape ({x.shape[-1]},) to match x of "
                             f"shape {x.shape}, got {p.shape}")
    eps = float(eps)
    if not (np.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"layer_norm: eps must be a finite number >= 0, got {eps!r}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    work = np.float32 if out_dtype == np.float16 else out_dtype
    xw = x.astype(work)  # (..., d)
    centred = xw - np.mean(xw, axis=-1, keepdims=True)  # (..., d)
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1) biased, as PyTorch
    y = centred / np.sqrt(var + eps) * weight.astype(work) + bias.astype(work)  # (..., d)
    return y.astype(out_dtype)
    ### END SOLUTION


def qk_norm(
    q: np.ndarray,
    k: np.ndarray,
    weight_q: np.ndarray,
    weight_k: np.ndarray,
    eps: float = 1e-6,
) -> tuple[np.ndarray, np.ndarray]:
    """QK-norm: RMSNorm of queries and keys over the head dimension, each with its own gain.

    Every query and key vector of every head is rescaled to unit RMS (times the gain) before
    the scores ``q kᵀ`` are formed, so a score measures direction more than length and cannot
    grow without bound. Values are deliberately not an argument: V's magnitude carries how much
    a token contributes, and normalising it would erase that.

    Args:
        q: queries, shape ``(..., h, n, d_h)``.
        k: keys, shape ``(..., h_kv, n_k, d_h)``; same d_h as q (h_kv and n_k may differ, as
            with grouped K/V heads or a KV cache).
        weight_q: gain for queries, shape ``(d_h,)``, shared by all heads.
        weight_k: gain for keys, shape ``(d_h,)``.
        eps: added to the mean square, as in ``rms_norm``.

    Returns:
        ``(rms_norm(q, weight_q, eps), rms_norm(k, weight_k, eps))``, shapes and dtypes as
        q and k (see ``rms_norm`` for the dtype rules).

    Raises:
        ValueError: if q and k have different head dims d_h, or as ``rms_norm`` (gain shape,
            empty last axis, bad eps).

    Source:
        Zhang & Sennrich 2019 (RMSNorm); QK-norm: Henry et al. 2020, "Query-Key Normalization
        for Transformers", and Dehghani et al. 2023 (ViT-22B); lesson section "QK-norm".

    Example:
        One query head and two keys of a Qwen-style d_h = 256 head, at very different scales:
        after QK-norm every vector has RMS 1 (up to eps).

        >>> rng = np.random.default_rng(0)
        >>> q = 3.0 * rng.standard_normal((1, 1, 256))  # (h, n, d_h)
        >>> k = 0.1 * rng.standard_normal((1, 2, 256))  # (h, n_k, d_h)
        >>> qn, kn = qk_norm(q, k, np.ones(256), np.ones(256))
        >>> qn.shape, kn.shape
        ((1, 1, 256), (1, 2, 256))
        >>> np.sqrt(np.mean(qn ** 2, axis=-1)).round(3), np.sqrt(np.mean(kn ** 2, axis=-1)).round(3)
        (array([[1.]]), array([[1., 1.]]))
    """
    ### BEGIN SOLUTION
    q = np.asarray(q)
    k = np.asarray(k)
    if q.ndim == 0 or k.ndim == 0 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"qk_norm: q (..., h, n, d_h) and k (..., h, n_k, d_h) need the same "
                         f"head dim d_h, got q {q.shape} and k {k.shape}")
    return rms_norm(q, weight_q, eps), rms_norm(k, weight_k, eps)
    ### END SOLUTION
