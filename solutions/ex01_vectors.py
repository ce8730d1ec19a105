"""Topic 1 — Vectors, embeddings and the dot product.

You build the first steps of a transformer's input side and its basic similarity measure: turning
token ids into one-hot rows, looking rows up in an embedding matrix ``W_E`` without ever building
the one-hot, the dot product as a Python float, cosine similarity that survives zero vectors, the
angle between two vectors that never comes back NaN, the whole grid of pairwise dot products (the
shape of ``Q Kᵀ``), and normalising rows to unit length so that length stops distorting similarity.
Tokens are row vectors throughout, as in the lesson.

Lesson: docs/lessons/01-vectors.md
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "angle_between",
    "cosine_similarity",
    "dot",
    "embedding_lookup",
    "normalize_rows",
    "one_hot",
    "pairwise_dot",
]


def one_hot(ids: ArrayLike, vocab_size: int) -> np.ndarray:
    """Encode integer token ids as one-hot rows over a vocabulary of ``vocab_size`` tokens.

    Args:
        ids: token ids, shape ``(...)`` (any shape, a 0-d id included), any integer dtype.
            bool and float arrays are rejected even when their values are whole numbers. An
            empty Python list is read as an empty integer array.
        vocab_size: ``V``, the number of tokens in the vocabulary (a Python or NumPy int >= 1;
            a bool or a float such as ``3.0`` is refused).

    Returns:
        float64 array of shape ``(..., V)``: entry ``[..., j]`` is 1.0 where ``ids[...] == j``
        and 0.0 elsewhere.

    Raises:
        ValueError: if ``vocab_size`` is not an integer >= 1; if ``ids`` does not have an integer
            dtype (bool and float included); if any id lies outside ``[0, V)`` — negative ids are
            errors, they never wrap around to the end of the vocabulary as Python indexing would.

    Source:
        Lesson 01, "From token ids to one-hot rows"; Vaswani et al. 2017, §3.4 "Embeddings and
        Softmax".

    Example:
        >>> one_hot(np.array([2, 0]), vocab_size=4)
        array([[0., 0., 1., 0.],
               [1., 0., 0., 0.]])
        >>> one_hot(3, vocab_size=5).shape
        (5,)
    """
    ### BEGIN SOLUTION
    is_int = isinstance(vocab_size, (int, np.integer)) and not isinstance(vocab_size, bool)
    if not is_int or vocab_size < 1:
        raise ValueError(f"vocab_size must be an integer >= 1, got {vocab_size!r}")
    ids_arr = np.asarray(ids)
    if ids_arr.size == 0 and not isinstance(ids, np.ndarray):
        # An empty list has no dtype of its own; NumPy would guess float64.
        ids_arr = ids_arr.astype(np.int64)
    # np.bool_ is not a subtype of np.integer, so this rejects bool as well as float ids.
    if not np.issubdtype(ids_arr.dtype, np.integer):
        raise ValueError(f"ids must be an integer array, got dtype {ids_arr.dtype}")
    out_of_range = (ids_arr < 0) | (ids_arr >= vocab_size)
    if out_of_range.any():
        raise ValueError(
            f"every id must lie in [0, vocab_size={vocab_size}); got out-of-range ids "
            f"{ids_arr[out_of_range][:5].tolist()} in ids of shape {ids_arr.shape}"
        )
    # Comparing each id with 0..V-1 broadcasts to (..., V) and is True only at the id's column.
    return (ids_arr.astype(np.intp)[..., None] == np.arange(vocab_size)).astype(np.float64)
    ### END SOLUTION


def embedding_lookup(ids: ArrayLike, W_E: ArrayLike) -> np.ndarray:
    """Look up the embedding row of every token id: ``one_hot(ids, V) @ W_E`` without the one-hot.

    Args:
        ids: token ids, shape ``(...)`` (any shape), any integer dtype; same rules as
            :func:`one_hot` (no bool, no float, every id in ``[0, V)``; an empty Python list
            is an empty integer array).
        W_E: the embedding matrix, shape ``(V, d_model)``: row ``i`` is token ``i``'s vector.
            A float ``W_E`` keeps its dtype; an integer (or bool) one is promoted to float64.

    Returns:
        array of shape ``(..., d_model)`` in ``W_E``'s float dtype, a fresh copy (writing to it
        never changes ``W_E``). Memory is O(d_model) per id: no ``(..., V)`` one-hot is built.

    Raises:
        ValueError: if ``W_E`` is not 2-D; if ``ids`` is not an integer array or any id lies
            outside ``[0, V)`` with ``V = W_E.shape[0]``.

    Source:
        Lesson 01, "The embedding lookup"; PyTorch ``nn.Embedding``; Vaswani et al. 2017, §3.4.

    Example:
        >>> W_E = np.array([[0.8, 0.3],    # id 0: "cat"
        ...                 [0.6, 0.7]])   # id 1: "dog"
        >>> embedding_lookup(np.array([1, 0, 1]), W_E)
        array([[0.6, 0.7],
               [0.8, 0.3],
               [0.6, 0.7]])
        >>> bool(np.array_equal(embedding_lookup([[0, 1]], W_E), one_hot([[0, 1]], 2) @ W_E))
        True
    """
    ### BEGIN SOLUTION
    W_E = np.asarray(W_E)
    if W_E.ndim != 2:
        raise ValueError(f"W_E must be 2-D (V, d_model), got shape {W_E.shape}")
    if not np.issubdtype(W_E.dtype, np.inexact):
        W_E = W_E.astype(np.float64)
    vocab_size = W_E.shape[0]
    ids_arr = np.asarray(ids)
    if ids_arr.size == 0 and not isinstance(ids, np.ndarray):
        ids_arr = ids_arr.astype(np.int64)  # an empty list has no dtype of its own
    if not np.issubdtype(ids_arr.dtype, np.integer):
        raise ValueError(f"ids must be an integer array, got dtype {ids_arr.dtype}")
    out_of_range = (ids_arr < 0) | (ids_arr >= vocab_size)
    if out_of_range.any():
        raise ValueError(
            f"every id must lie in [0, V={vocab_size}) for W_E of shape {W_E.shape}; got "
            f"out-of-range ids {ids_arr[out_of_range][:5].tolist()} in ids of shape "
            f"{ids_arr.shape}"
        )
    # Row selection is the one-hot product without the zeros; np.take always copies (plain
    # indexing with a 0-d id would return a view into W_E).
    return np.take(W_E, ids_arr.astype(np.intp), axis=0)  # (..., d_model)
    ### END SOLUTION


def dot(u: ArrayLike, v: ArrayLike) -> float:
    """Dot product ``u·v = Σ_i u_i v_i`` of two vectors of the same length.

    Args:
        u: shape ``(d,)``, any real dtype.
        v: shape ``(d,)``, any real dtype.

    Returns:
        Python ``float``. The sum is accumulated in float64 whatever the input dtype, since the
        result is a float64 number anyway.

    Raises:
        ValueError: if either input is not 1-D or their lengths differ (the message names both
            shapes).

    Source:
        Lesson 01, "The dot product"; ``u·v = ‖u‖ ‖v‖ cos θ``.

    Example:
        >>> cat, dog = np.array([0.8, 0.3]), np.array([0.6, 0.7])
        >>> round(dot(cat, dog), 2)
        0.69
        >>> round(dot(cat, cat), 2), round(dot(dog, dog), 2)
        (0.73, 0.85)
    """
    ### BEGIN SOLUTION
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(
            f"dot needs two 1-D vectors of the same length, got shapes {u.shape} and {v.shape}"
        )
    return float(np.dot(u.astype(np.float64), v.astype(np.float64)))
    ### END SOLUTION


def cosine_similarity(u: ArrayLike, v: ArrayLike, eps: float = 1e-8) -> float:
    """Cosine of the angle between two vectors: ``u·v / max(‖u‖ ‖v‖, eps)``.

    Args:
        u: shape ``(d,)``, any real dtype (computed in float64).
        v: shape ``(d,)``, any real dtype (computed in float64).
        eps: floor for the denominator ``‖u‖ ‖v‖``, >= 0 (unitless).

    Returns:
        Python ``float`` in ``[-1, 1]``. A zero vector gives 0.0, never NaN. When
        ``‖u‖ ‖v‖ >= eps`` the result is the plain cosine; below that it is ``u·v / eps``, so
        tiny vectors score near 0. Norms are computed after dividing by the largest entry, so
        vectors with entries like 1e200 or 1e-200 do not overflow or underflow.

    Raises:
        ValueError: if either input is not 1-D or their lengths differ; if ``eps`` is negative
            or NaN.

    Source:
        Lesson 01, "Cosine similarity versus the raw dot product".

    Example:
        >>> cat, dog = np.array([0.8, 0.3]), np.array([0.6, 0.7])
        >>> round(cosine_similarity(cat, dog), 3)
        0.876
        >>> cosine_similarity(cat, np.zeros(2))
        0.0
    """
    ### BEGIN SOLUTION
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(
            "cosine_similarity needs two 1-D vectors of the same length, got shapes "
            f"{u.shape} and {v.shape}"
        )
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    u, v = u.astype(np.float64), v.astype(np.float64)
    u_max, v_max = float(np.max(np.abs(u), initial=0.0)), float(np.max(np.abs(v), initial=0.0))
    if u_max == 0.0 or v_max == 0.0:
        return 0.0  # u·v = 0 for a zero vector, whatever the floor
    # Dividing by the largest entry first keeps the squares in range (1e200² overflows).
    u_scaled, v_scaled = u / u_max, v / v_max
    u_norm = u_max * float(np.linalg.norm(u_scaled))
    v_norm = v_max * float(np.linalg.norm(v_scaled))
    if u_norm * v_norm >= eps:  # Python floats: an overflow to inf lands here, as it should
        cos = np.dot(u_scaled / np.linalg.norm(u_scaled), v_scaled / np.linalg.norm(v_scaled))
    else:
        cos = np.dot(u, v) / eps
    # Rounding may land a hair outside [-1, 1]; the cosine itself cannot.
    return float(np.clip(cos, -1.0, 1.0))
    ### END SOLUTION


def angle_between(u: ArrayLike, v: ArrayLike) -> float:
    """Angle between two non-zero vectors, in degrees.

    Computed in float64 as ``θ = 2·atan2(‖û − v̂‖, ‖û + v̂‖)`` with ``û = u/‖u‖``, ``v̂ = v/‖v‖``
    (Kahan's formula). It equals ``arccos(cos θ)`` but stays accurate near 0° and 180°, where the
    arccos of a rounded cosine loses half its digits and, unclipped, can return NaN. The textbook
    ``np.degrees(np.arccos(np.clip(cos, -1, 1)))`` is accepted too: its error there (u vs -2u
    gives 179.99999914…) is far inside the 1e-5° allowed. Either way, each vector is divided by
    its largest ``|entry|`` before its norm is taken, so vectors with entries like 1e200 or
    1e-200 do not overflow or underflow.

    Args:
        u: shape ``(d,)``, any real dtype, not all zeros.
        v: shape ``(d,)``, any real dtype, not all zeros.

    Returns:
        Python ``float`` in ``[0, 180]`` (degrees): ``u`` vs ``3u`` gives 0.0 and ``u`` vs
        ``-2u`` gives 180.0, both well within 1e-5°.

    Raises:
        ValueError: if either input is not 1-D or their lengths differ; if either is a zero
            vector (its direction, hence the angle, is undefined).

    Source:
        Lesson 01, "The dot product"; W. Kahan, "How Futile are Mindless Assessments of Roundoff
        in Floating-Point Computation?" (2006), the angle between two vectors.

    Example:
        >>> cat, dog = np.array([0.8, 0.3]), np.array([0.6, 0.7])
        >>> round(angle_between(cat, dog), 1)
        28.8
        >>> angle_between([1.0, 0.0], [0.0, 2.0]), round(angle_between(cat, -2 * cat), 5)
        (90.0, 180.0)
    """
    ### BEGIN SOLUTION
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(
            "angle_between needs two 1-D vectors of the same length, got shapes "
            f"{u.shape} and {v.shape}"
        )
    u, v = u.astype(np.float64), v.astype(np.float64)
    u_max, v_max = np.max(np.abs(u), initial=0.0), np.max(np.abs(v), initial=0.0)
    if u_max == 0.0 or v_max == 0.0:
        raise ValueError(
            f"angle_between is undefined for a zero vector: max |u_i| = {u_max}, "
            f"max |v_i| = {v_max} (shape {u.shape})"
        )
    # Scale by the largest entry before normalising so the norms cannot overflow.
    u_unit = u / u_max
    u_unit /= np.linalg.norm(u_unit)
    v_unit = v / v_max
    v_unit /= np.linalg.norm(v_unit)
    # Both atan2 arguments are >= 0, so θ lies in [0, π] by construction: no clipping needed.
    theta = 2.0 * np.arctan2(np.linalg.norm(u_unit - v_unit), np.linalg.norm(u_unit + v_unit))
    return float(np.degrees(theta))
    ### END SOLUTION


def pairwise_dot(A: ArrayLike, B: ArrayLike) -> np.ndarray:
    """Grid of dot products between every row of ``A`` and every row of ``B``: ``A Bᵀ``.

    With ``A = Q`` and ``B = K`` this is the unscaled attention score grid ``Q Kᵀ``.

    Args:
        A: shape ``(n, d)``, e.g. ``n`` query rows.
        B: shape ``(m, d)``, e.g. ``m`` key rows.

    Returns:
        array of shape ``(n, m)`` with entry ``[i, j] = A[i]·B[j]``; dtype is NumPy's promotion
        of the inputs' float dtypes (float32 with float32 stays float32), integers promoted to
        float64.

    Raises:
        ValueError: if either input is not 2-D or their widths ``d`` differ (the message names
            both shapes).

    Source:
        Lesson 01, "The score grid is QKᵀ"; Vaswani et al. 2017, eq. 1.

    Example:
        >>> X = np.array([[0.8, 0.3],    # cat
        ...               [0.6, 0.7]])   # dog
        >>> np.round(pairwise_dot(X, X), 2)
        array([[0.73, 0.69],
               [0.69, 0.85]])
    """
    ### BEGIN SOLUTION
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(
            f"pairwise_dot needs A (n, d) and B (m, d) with the same d, got shapes {A.shape} "
            f"and {B.shape}"
        )
    if not np.issubdtype(A.dtype, np.inexact):
        A = A.astype(np.float64)
    if not np.issubdtype(B.dtype, np.inexact):
        B = B.astype(np.float64)
    return A @ B.T  # (n, m)
    ### END SOLUTION


def normalize_rows(X: ArrayLike, eps: float = 1e-12) -> np.ndarray:
    """Scale every row to unit Euclidean length: ``X[i] / max(‖X[i]‖, eps)``.

    After this, the dot product of two rows is their cosine similarity, and every row's
    self-similarity is 1.

    Args:
        X: shape ``(n, d)`` (any leading axes ``(..., d)`` are accepted: each slice along the
            last axis is a row); float dtypes are kept, integers promoted to float64.
        eps: floor for the row norm, >= 0 (unitless).

    Returns:
        array of ``X``'s shape and float dtype. Zero rows stay zero (also with ``eps = 0``); a
        row holding a NaN comes back all NaN (it is not taken for a zero row). float16 is
        computed in float32 (``eps = 1e-12`` is 0 in float16) and returned as float16. Norms are
        taken after dividing by the row's largest entry, so no row overflows or underflows. An
        empty ``X`` (no rows, ``(0, d)``, or rows of no entries, ``(n, 0)``) comes back empty,
        of its shape: it is not an error.

    Raises:
        ValueError: if ``X`` is 0-d; if ``eps`` is negative or NaN.

    Source:
        Lesson 01, "Normalising to unit length".

    Example:
        >>> X = np.array([[0.8, 0.3],    # cat
        ...               [0.6, 0.7]])   # dog
        >>> X_unit = normalize_rows(X)
        >>> np.round(X_unit, 3)
        array([[0.936, 0.351],
               [0.651, 0.759]])
        >>> np.round(pairwise_dot(X_unit, X_unit), 3)
        array([[1.   , 0.876],
               [0.876, 1.   ]])
    """
    ### BEGIN SOLUTION
    X = np.asarray(X)
    if X.ndim < 1:
        raise ValueError(f"normalize_rows needs rows (n, d), got a 0-d array of shape {X.shape}")
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    out_dtype = X.dtype
    if X.dtype == np.float16:
        X = X.astype(np.float32)
    # Divide by each row's largest entry first so the sum of squares cannot overflow.
    row_max = np.max(np.abs(X), axis=-1, keepdims=True, initial=0)  # (..., 1)
    row_max = np.where(row_max > 0, row_max, 1)
    norms = row_max * np.linalg.norm(X / row_max, axis=-1, keepdims=True)  # (..., 1)
    denom = np.maximum(norms, eps)
    out = np.divide(X, denom, out=np.zeros_like(X), where=denom != 0)  # NaN rows stay NaN
    return out.astype(out_dtype, copy=False)
    ### END SOLUTION
