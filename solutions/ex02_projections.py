"""Topic 2 — Projections, shapes and the matmuls of a transformer.

You build the linear maps a transformer is made of and the bookkeeping around them: a linear
layer in the row-vector convention ``x @ W (+ b)`` with a shape check that names both shapes, the
query/key/value projections of a sequence, the scaled score grid ``Q Kᵀ / √d_k``, the single
matrix that a stack of linear maps collapses into, the GELU non-linearity that stops that
collapse, the position-wise feed-forward block, and the catalogue of every matrix product in one
transformer layer with its shapes and FLOP count.

Lesson: docs/lessons/02-projections.md
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "Matmul",
    "attention_scores",
    "compose",
    "feed_forward",
    "gelu",
    "linear",
    "project_qkv",
    "transformer_matmuls",
]


class Matmul(NamedTuple):
    """One matrix product of a transformer layer: ``A (a_shape) × B (b_shape) → out_shape``.

    A 3-tuple shape ``(h, m, k)`` is a batch of ``h`` products, one per attention head.

    Attributes:
        name: what the product computes: ``"embed"``, ``"q_proj"``, ``"k_proj"``, ``"v_proj"``,
            ``"scores"``, ``"aggregate"``, ``"out_proj"``, ``"ffn_up"``, ``"ffn_down"`` or
            ``"unembed"``.
        a_shape: shape of the left operand, ``(m, k)`` or ``(h, m, k)``, Python ints.
        b_shape: shape of the right operand, ``(k, n)`` or ``(h, k, n)``, Python ints.
        out_shape: shape of the result, ``(m, n)`` or ``(h, m, n)``, Python ints.
        flops: floating-point operations as a Python int: ``2·m·k·n`` (one multiply and one add
            per term), times ``h`` for a per-head product.
    """

    name: str
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    flops: int


def linear(x: ArrayLike, W: ArrayLike, b: ArrayLike | None = None) -> np.ndarray:
    """Apply a linear (affine) layer to row vectors: ``x @ W + b``.

    The row-vector convention of the course: ``W`` has shape ``(d_in, d_out)``. PyTorch's
    ``nn.Linear`` stores the transpose, ``weight`` of shape ``(d_out, d_in)``, and computes
    ``x @ weight.T + bias``; a column-vector formula ``y = W_col v`` is ``linear(v, W_col.T)``.

    Args:
        x: inputs, shape ``(..., d_in)`` (a single vector ``(d_in,)`` included).
        W: weight matrix, shape ``(d_in, d_out)``.
        b: optional bias, shape ``(d_out,)``.

    Returns:
        array of shape ``(..., d_out)``; dtype is NumPy's promotion of the inputs' float dtypes
        (float32 everywhere stays float32), integer inputs promoted to float64.

    Raises:
        ValueError: if ``W`` is not 2-D; if ``x`` is 0-d or its last axis differs from
            ``W.shape[0]`` (the message names both shapes); if ``b`` is not ``(d_out,)``.

    Source:
        Lesson 02, "The shape rule"; PyTorch ``nn.Linear``.

    Example:
        >>> W_down = np.array([[0.4, 0.5, 0.2],     # lesson 2's (2, 3) matrix, column form:
        ...                    [0.3, 0.1, 0.6]])    # y = W_down · v
        >>> v_3d = np.array([0.51, 0.29, 0.55])
        >>> np.round(linear(v_3d, W_down.T), 3)     # row form: v_3d @ W_down.T, (3,) → (2,)
        array([0.459, 0.512])
    """
    ### BEGIN SOLUTION
    x, W = np.asarray(x), np.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"linear: W must be 2-D (d_in, d_out), got shape {W.shape}")
    if x.ndim < 1 or x.shape[-1] != W.shape[0]:
        raise ValueError(
            f"linear: cannot multiply x {x.shape} by W {W.shape}: x's last axis (d_in) must "
            f"equal W's first axis ({W.shape[0]})"
        )
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(np.float64)
    if not np.issubdtype(W.dtype, np.inexact):
        W = W.astype(np.float64)
    out = x @ W  # (..., d_out)
    if b is not None:
        b = np.asarray(b)
        if b.shape != (W.shape[1],):
            raise ValueError(
                f"linear: bias must have shape (d_out,) = ({W.shape[1]},) for W {W.shape}, "
                f"got {b.shape}"
            )
        if not np.issubdtype(b.dtype, np.inexact):
            b = b.astype(np.float64)
        out = out + b
    return out
    ### END SOLUTION


def project_qkv(
    X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Project a sequence of token vectors to queries, keys and values: ``X W_Q, X W_K, X W_V``.

    Args:
        X: token vectors, shape ``(..., n, d_model)`` (any leading batch axes; a single token
            ``(d_model,)`` also works).
        W_Q: query projection, shape ``(d_model, d_k)``.
        W_K: key projection, shape ``(d_model, d_k)``: the same width as ``W_Q``, because
            queries and keys are compared by dot products.
        W_V: value projection, shape ``(d_model, d_v)``; ``d_v`` may differ from ``d_k``.

    Returns:
        ``(Q, K, V)`` with shapes ``(..., n, d_k)``, ``(..., n, d_k)``, ``(..., n, d_v)``, each
        with the dtype :func:`linear` gives.

    Raises:
        ValueError: if ``X`` is 0-d; if a weight is not 2-D; if a weight's first axis differs
            from ``d_model`` (``X.shape[-1]``); if ``W_Q`` and ``W_K`` have different widths.

    Source:
        Lesson 02, "Why separate queries, keys and values"; Vaswani et al. 2017, §3.2.2.

    Example:
        >>> X = np.array([[1.0, 0.0, 2.0, -1.0],    # x1
        ...               [0.0, 1.0, 1.0, 1.0]])    # x2
        >>> W_Q = np.array([[1, 0], [0, 1], [1, -1], [0, 1]])
        >>> W_K = np.array([[0, 1], [1, 0], [-1, 1], [1, 0]])
        >>> W_V = np.eye(4)[:, :3]                  # keeps the first three coordinates
        >>> Q, K, V = project_qkv(X, W_Q, W_K, W_V)
        >>> Q[0], K[1], V.shape                     # q1, k2, (n, d_v)
        (array([ 3., -3.]), array([1., 1.]), (2, 3))
    """
    ### BEGIN SOLUTION
    X = np.asarray(X)
    weights = {"W_Q": np.asarray(W_Q), "W_K": np.asarray(W_K), "W_V": np.asarray(W_V)}
    for name, W in weights.items():
        if W.ndim != 2:
            raise ValueError(f"project_qkv: {name} must be 2-D (d_model, width), got {W.shape}")
    if X.ndim < 1:
        raise ValueError(f"project_qkv: X must be (..., n, d_model), got shape {X.shape}")
    d_model = X.shape[-1]
    mismatched = [f"{name} {W.shape}" for name, W in weights.items() if W.shape[0] != d_model]
    if mismatched:
        raise ValueError(
            f"project_qkv: X {X.shape} has d_model = {d_model}, but "
            f"{', '.join(mismatched)} must have {d_model} rows"
        )
    if weights["W_Q"].shape[1] != weights["W_K"].shape[1]:
        raise ValueError(
            f"project_qkv: W_Q {weights['W_Q'].shape} and W_K {weights['W_K'].shape} must have "
            "the same width d_k: queries and keys are compared by dot products"
        )
    return (
        linear(X, weights["W_Q"]),  # (..., n, d_k)
        linear(X, weights["W_K"]),  # (..., n, d_k)
        linear(X, weights["W_V"]),  # (..., n, d_v)
    )
    ### END SOLUTION


def attention_scores(Q: ArrayLike, K: ArrayLike, scale: float | None = None) -> np.ndarray:
    """Scaled score grid ``Q Kᵀ · scale`` between every query and every key.

    Args:
        Q: queries, shape ``(..., n_q, d_k)``.
        K: keys, shape ``(..., n_k, d_k)``; the leading axes of ``Q`` and ``K`` broadcast
            against each other (batch, heads).
        scale: a finite multiplier; ``None`` means ``1/√d_k``, which keeps the scores' variance
            near 1 for unit-variance queries and keys.

    Returns:
        array of shape ``(..., n_q, n_k)`` with entry ``[..., i, j] = (Q_i · K_j) · scale``;
        dtype is the promotion of the inputs' float dtypes (integers promoted to float64).
        float16 inputs are multiplied and scaled in float32 (an unscaled fp16 ``Q Kᵀ`` overflows
        past 65504 sooner) and returned as float16.

    Raises:
        ValueError: if either input has fewer than 2 axes, their last axes (``d_k``) differ or
            their leading axes do not broadcast (the message names both shapes); if ``d_k = 0``
            with the default scale; if ``scale`` is not finite.

    Source:
        Lesson 02, "The toy example"; Vaswani et al. 2017, eq. 1 and §3.2.1.

    Example:
        >>> Q = np.array([[3.0, -3.0], [1.0, 1.0]])   # q1, q2 of the toy example
        >>> K = np.array([[-3.0, 3.0], [1.0, 1.0]])   # k1, k2
        >>> np.round(attention_scores(Q, K), 3)       # score(1, 2) = 0/√2 = 0
        array([[-12.728,   0.   ],
               [  0.   ,   1.414]])
    """
    ### BEGIN SOLUTION
    Q, K = np.asarray(Q), np.asarray(K)
    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"attention_scores needs Q (..., n_q, d_k) and K (..., n_k, d_k) with the same d_k, "
            f"got Q {Q.shape} and K {K.shape}"
        )
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(
            f"attention_scores: leading axes of Q {Q.shape} and K {K.shape} do not broadcast"
        ) from None
    d_k = Q.shape[-1]
    if scale is None:
        if d_k == 0:
            raise ValueError(f"attention_scores: d_k = 0 (Q {Q.shape}) has no 1/sqrt(d_k) scale")
        scale = 1.0 / math.sqrt(d_k)
    elif not math.isfinite(scale):
        raise ValueError(f"attention_scores: scale must be finite, got {scale}")
    if not np.issubdtype(Q.dtype, np.inexact):
        Q = Q.astype(np.float64)
    if not np.issubdtype(K.dtype, np.inexact):
        K = K.astype(np.float64)
    out_dtype = np.result_type(Q, K)
    if out_dtype == np.float16:
        Q, K = Q.astype(np.float32), K.astype(np.float32)
    # Transpose only the last two axes so that leading batch/head axes line up.
    scores = (Q @ np.swapaxes(K, -1, -2)) * float(scale)  # (..., n_q, n_k)
    return scores.astype(out_dtype, copy=False)
    ### END SOLUTION


def compose(*Ws: ArrayLike) -> np.ndarray:
    """The single matrix equal to applying ``W1``, then ``W2``, … to row vectors.

    ``x @ W1 @ W2 @ … == x @ compose(W1, W2, …)``: a stack of linear maps with nothing between
    them is one linear map, whose rank is at most the smallest width along the way.

    Args:
        *Ws: one or more matrices ``W1 (d_0, d_1)``, ``W2 (d_1, d_2)``, …, ``Wk (d_{k-1}, d_k)``,
            in the order they are applied.

    Returns:
        array of shape ``(d_0, d_k)`` (a new array, also for a single matrix); dtype is the
        promotion of the float dtypes, integers promoted to float64. With several matrices the
        product is formed by ``np.linalg.multi_dot``, which picks the cheapest bracketing.

    Raises:
        ValueError: if no matrix is given; if a matrix is not 2-D; if neighbours do not chain
            (``Wi.shape[1] != W{i+1}.shape[0]``; the message names both shapes).

    Source:
        Lesson 02, "Stacked linear maps collapse".

    Example:
        >>> W_down = np.array([[0.4, 0.3], [0.5, 0.1], [0.2, 0.6]])   # row form, 3 → 2
        >>> M = compose(W_down, W_down.T)                             # 3 → 2 → 3
        >>> M.shape, int(np.linalg.matrix_rank(M))                    # the lost dim stays lost
        ((3, 3), 2)
        >>> v_3d = np.array([0.51, 0.29, 0.55])
        >>> bool(np.allclose(v_3d @ W_down @ W_down.T, v_3d @ M))
        True
    """
    ### BEGIN SOLUTION
    if len(Ws) == 0:
        raise ValueError("compose needs at least one matrix")
    mats = [np.asarray(W) for W in Ws]
    for i, W in enumerate(mats, start=1):
        if W.ndim != 2:
            raise ValueError(f"compose: W{i} must be 2-D, got shape {W.shape}")
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(
                f"compose: W{i + 1} {mats[i].shape} does not chain with W{i + 2} "
                f"{mats[i + 1].shape}: {mats[i].shape[1]} != {mats[i + 1].shape[0]}"
            )
    mats = [W if np.issubdtype(W.dtype, np.inexact) else W.astype(np.float64) for W in mats]
    if len(mats) == 1:
        return mats[0].copy()
    return np.linalg.multi_dot(mats)  # (d_0, d_k)
    ### END SOLUTION


def gelu(x: ArrayLike, approximate: str = "none") -> np.ndarray:
    """Gaussian Error Linear Unit ``x·Φ(x)``, exact or with the tanh approximation.

    Exact: ``Φ(x) = ½·(1 + erf(x/√2))``, evaluated as ``½·erfc(−x/√2)``, which is the same
    function but keeps full relative accuracy far into the negative tail. ``"tanh"``:
    ``½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``, as GPT-2 and ``torch``'s
    ``approximate="tanh"``. Both are computed in float64 and cast back.

    Args:
        x: pre-activations, any shape ``(...)``; a float dtype is kept, integers give float64.
        approximate: ``"none"`` (exact, erf) or ``"tanh"``.

    Returns:
        array of ``x``'s shape and float dtype (a 0-d array for a scalar input). ``gelu(-inf)``
        is 0, the limit, not NaN; ``gelu(inf)`` is inf and a NaN stays NaN.

    Raises:
        ValueError: if ``approximate`` is neither ``"none"`` nor ``"tanh"``.

    Source:
        Hendrycks & Gimpel 2016, "Gaussian Error Linear Units (GELUs)"; Lesson 02,
        "Non-linearities stop the collapse".

    Example:
        >>> x = np.array([-1.0, 0.0, 1.0, 2.0])
        >>> np.round(gelu(x), 4)
        array([-0.1587,  0.    ,  0.8413,  1.9545])
        >>> np.round(gelu(x, approximate="tanh"), 4)
        array([-0.1588,  0.    ,  0.8412,  1.9546])
    """
    ### BEGIN SOLUTION
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = np.asarray(x)
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(np.float64)
    x64 = x.astype(np.float64)
    if approximate == "none":
        # NumPy has no erf; math.erfc is exact to float64 and vectorises through frompyfunc.
        erfc = np.frompyfunc(math.erfc, 1, 1)
        cdf = 0.5 * np.asarray(erfc(-x64 / math.sqrt(2.0)), dtype=np.float64)
    else:
        with np.errstate(over="ignore"):  # x³ → ±inf for huge |x| is fine: tanh(±inf) = ±1
            inner = math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)
        cdf = 0.5 * (1.0 + np.tanh(inner))
    with np.errstate(invalid="ignore"):
        out = x64 * cdf
    # x·Φ(x) → 0 as x → -inf, but -inf · 0 is NaN.
    out = np.where(np.isneginf(x64), 0.0, out)
    return out.astype(out_dtype, copy=False)
    ### END SOLUTION


def feed_forward(
    X: ArrayLike,
    W1: ArrayLike,
    b1: ArrayLike | None,
    W2: ArrayLike,
    b2: ArrayLike | None,
) -> np.ndarray:
    """Position-wise feed-forward block: ``gelu(X W1 + b1) W2 + b2`` with the exact GELU.

    Args:
        X: token vectors, shape ``(..., d_model)``.
        W1: up projection, shape ``(d_model, d_ff)`` (``d_ff = 4·d_model`` in GPT-2).
        b1: bias ``(d_ff,)``, or ``None`` for none.
        W2: down projection, shape ``(d_ff, d_model)``.
        b2: bias ``(d_model,)``, or ``None`` for none.

    Returns:
        array of shape ``(..., d_model)`` (in general ``(..., W2.shape[1])``); dtype as
        :func:`linear` gives.

    Raises:
        ValueError: if the shapes do not chain (raised by :func:`linear`, naming the shapes).

    Source:
        Vaswani et al. 2017, §3.3, eq. 2 (with GELU in place of ReLU, as in GPT-2: Radford et
        al. 2019); Lesson 02, "The matmul catalogue".

    Example:
        >>> X = np.array([[0.8, 0.3], [0.6, 0.7]])   # cat, dog
        >>> I, zeros = np.eye(2), np.zeros(2)
        >>> bool(np.allclose(feed_forward(X, I, zeros, I, zeros), gelu(X)))
        True

        A block maps ``(n, d_model)`` back to ``(n, d_model)`` through ``d_ff = 4 · d_model``
        hidden units (GPT-2 small: 768 and 3072), at any size:

        >>> rng = np.random.default_rng(0)
        >>> d_model, d_ff = 8, 32
        >>> W1, W2 = rng.normal(0, 0.02, (d_model, d_ff)), rng.normal(0, 0.02, (d_ff, d_model))
        >>> feed_forward(rng.normal(size=(5, d_model)), W1, np.zeros(d_ff), W2, None).shape
        (5, 8)
    """
    ### BEGIN SOLUTION
    hidden = gelu(linear(X, W1, b1))  # (..., d_ff): the non-linearity between the two maps
    return linear(hidden, W2, b2)  # (..., d_model)
    ### END SOLUTION


def transformer_matmuls(
    d_model: int, n_heads: int, d_ff: int, vocab_size: int, seq_len: int
) -> list[Matmul]:
    """Every matrix product of one transformer layer on one sequence, with shapes and FLOPs.

    With ``n = seq_len``, ``d = d_model``, ``h = n_heads``, ``d_h = d/h``, ``V = vocab_size``,
    the ten products, in the course's fixed order: the four ``(n,d)×(d,d)`` projections are
    listed together, so ``out_proj`` comes before ``scores`` although, in the data flow, it acts
    on the heads' merged output after ``aggregate``:

    ==========  =================  =================  ===============
    name        a_shape            b_shape            out_shape
    ==========  =================  =================  ===============
    embed       ``(n, V)``         ``(V, d)``         ``(n, d)``
    q_proj      ``(n, d)``         ``(d, d)``         ``(n, d)``
    k_proj      ``(n, d)``         ``(d, d)``         ``(n, d)``
    v_proj      ``(n, d)``         ``(d, d)``         ``(n, d)``
    out_proj    ``(n, d)``         ``(d, d)``         ``(n, d)``
    scores      ``(h, n, d_h)``    ``(h, d_h, n)``    ``(h, n, n)``
    aggregate   ``(h, n, n)``      ``(h, n, d_h)``    ``(h, n, d_h)``
    ffn_up      ``(n, d)``         ``(d, d_ff)``      ``(n, d_ff)``
    ffn_down    ``(n, d_ff)``      ``(d_ff, d)``      ``(n, d)``
    unembed     ``(n, d)``         ``(d, V)``         ``(n, V)``
    ==========  =================  =================  ===============

    ``flops = 2·m·k·n`` for an ``(m, k) × (k, n)`` product, times ``h`` for the per-head ones.
    ``embed`` is counted as the one-hot product (a real model does a lookup instead).

    Args:
        d_model: ``d``, the residual-stream width (int >= 1), e.g. 768 for GPT-2 small.
        n_heads: ``h`` (int >= 1), a divisor of ``d_model``.
        d_ff: the feed-forward hidden width (int >= 1), usually ``4·d_model``.
        vocab_size: ``V`` (int >= 1), e.g. 50257 for GPT-2.
        seq_len: ``n``, tokens in the sequence (int >= 1).

    Returns:
        list of ten :class:`Matmul` in the order above; shapes are tuples of Python ints and
        ``flops`` a Python int.

    Raises:
        ValueError: if an argument is not an integer >= 1 (bools rejected); if
            ``d_model % n_heads != 0``.

    Source:
        Lesson 02, "The matmul catalogue"; Vaswani et al. 2017, §3; the ``2·m·k·n`` count as in
        Kaplan et al. 2020, §2.1.

    Example:
        >>> table = transformer_matmuls(768, 12, 3072, 50257, 1024)   # GPT-2 small
        >>> [m.name for m in table]  # doctest: +NORMALIZE_WHITESPACE
        ['embed', 'q_proj', 'k_proj', 'v_proj', 'out_proj', 'scores', 'aggregate', 'ffn_up',
         'ffn_down', 'unembed']
        >>> table[5]  # doctest: +NORMALIZE_WHITESPACE
        Matmul(name='scores', a_shape=(12, 1024, 64), b_shape=(12, 64, 1024),
               out_shape=(12, 1024, 1024), flops=1610612736)
        >>> table[-1].flops
        79047426048
    """
    ### BEGIN SOLUTION
    sizes = {
        "d_model": d_model,
        "n_heads": n_heads,
        "d_ff": d_ff,
        "vocab_size": vocab_size,
        "seq_len": seq_len,
    }
    for name, value in sizes.items():
        is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not is_int or value < 1:
            raise ValueError(f"transformer_matmuls: {name} must be an integer >= 1, got {value!r}")
    d, h, n, V, d_ff = int(d_model), int(n_heads), int(seq_len), int(vocab_size), int(d_ff)
    if d % h:
        raise ValueError(f"transformer_matmuls: d_model = {d} is not divisible by n_heads = {h}")
    d_h = d // h

    def product(name: str, m: int, k: int, p: int, heads: int = 0) -> Matmul:
        # heads = 0: a plain (m, k) × (k, p) product; otherwise a batch of `heads` of them.
        batch = (heads,) if heads else ()
        flops = 2 * m * k * p * (heads or 1)
        return Matmul(name, (*batch, m, k), (*batch, k, p), (*batch, m, p), flops)

    return [
        product("embed", n, V, d),
        product("q_proj", n, d, d),
        product("k_proj", n, d, d),
        product("v_proj", n, d, d),
        product("out_proj", n, d, d),
        product("scores", n, d_h, n, heads=h),
        product("aggregate", n, n, d_h, heads=h),
        product("ffn_up", n, d, d_ff),
        product("ffn_down", n, d_ff, d),
        product("unembed", n, d, V),
    ]
    ### END SOLUTION
