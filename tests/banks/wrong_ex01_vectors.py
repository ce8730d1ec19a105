"""Plausible wrong implementations of topic 1: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    # ------------------------------------------------------------------ one_hot
    Variant("one_hot", "negative ids wrap around to the end of the vocabulary (np.eye indexing)",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if (ids >= vocab_size).any():
        raise ValueError("id out of range")
    return np.eye(vocab_size)[ids]
"""),
    Variant("one_hot", "off-by-one range check: an id equal to vocab_size gives a zero row",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if (ids < 0).any() or (ids > vocab_size).any():
        raise ValueError("id out of range")
    return (ids[..., None] == np.arange(vocab_size)).astype(np.float64)
"""),
    Variant("one_hot", "float ids are cast to int instead of rejected",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.dtype == bool:
        raise ValueError("bool ids")
    ids = ids.astype(np.int64)
    if (ids < 0).any() or (ids >= vocab_size).any():
        raise ValueError("id out of range")
    return (ids[..., None] == np.arange(vocab_size)).astype(np.float64)
"""),
    Variant("one_hot", "bool ids pass the integer check (issubdtype(bool, integer) is assumed)",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iub":
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    ids = ids.astype(np.int64)
    if (ids < 0).any() or (ids >= vocab_size).any():
        raise ValueError("id out of range")
    return (ids[..., None] == np.arange(vocab_size)).astype(np.float64)
"""),
    Variant("one_hot", "returns the boolean grid instead of float64",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if (ids < 0).any() or (ids >= vocab_size).any():
        raise ValueError("id out of range")
    return ids[..., None] == np.arange(vocab_size)
"""),
    Variant("one_hot", "flattens the ids: (N, V) instead of (..., V)",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if (ids < 0).any() or (ids >= vocab_size).any():
        raise ValueError("id out of range")
    out = np.zeros((ids.size, vocab_size))
    out[np.arange(ids.size), ids.ravel()] = 1.0
    return out
"""),
    # ------------------------------------------------------------------ embedding_lookup
    Variant("embedding_lookup", "plain W_E[ids]: negative ids wrap, float ids are not rejected",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    if not np.issubdtype(W_E.dtype, np.inexact):
        W_E = W_E.astype(np.float64)
    ids = np.asarray(ids)
    if (ids >= W_E.shape[0]).any():
        raise ValueError("id out of range")
    return W_E[ids.astype(np.int64)]
"""),
    Variant("embedding_lookup", "builds the one-hot and multiplies (O(V) memory per id)",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    if not np.issubdtype(W_E.dtype, np.inexact):
        W_E = W_E.astype(np.float64)
    return (one_hot(ids, W_E.shape[0]) @ W_E).astype(W_E.dtype)
"""),
    Variant("embedding_lookup", "nn.Linear layout confusion: picks columns of W_E, not rows",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    if not np.issubdtype(W_E.dtype, np.inexact):
        W_E = W_E.astype(np.float64)
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("ids must be integers")
    if (ids < 0).any() or (ids >= W_E.shape[0]).any():
        raise ValueError("id out of range")
    return np.moveaxis(W_E.T[:, ids % W_E.shape[1]], 0, -1)
"""),
    Variant("embedding_lookup", "always returns float64 (float32/float16 tables not kept)",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E, dtype=np.float64)
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("ids must be integers")
    if (ids < 0).any() or (ids >= W_E.shape[0]).any():
        raise ValueError("id out of range")
    return W_E[ids]
"""),
    Variant("embedding_lookup", "an integer W_E stays integer",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("ids must be integers")
    if (ids < 0).any() or (ids >= W_E.shape[0]).any():
        raise ValueError("id out of range")
    return W_E[ids]
"""),
    # ------------------------------------------------------------------ dot
    Variant("dot", "np.sum(u * v) without a shape check: broadcasting accepts length 1",
            """
import numpy as np
def dot(u, v):
    return float(np.sum(np.asarray(u, dtype=np.float64) * np.asarray(v, dtype=np.float64)))
"""),
    Variant("dot", "np.dot without the 1-D check: matrices are accepted",
            """
import numpy as np
def dot(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.shape[-1:] != v.shape[:1]:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    out = np.dot(u, v)
    return float(out) if np.ndim(out) == 0 else out
"""),
    Variant("dot", "accumulates in float32",
            """
import numpy as np
def dot(u, v):
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(np.dot(u.astype(np.float32), v.astype(np.float32)))
"""),
    Variant("dot", "returns a (1, 1) array from a row-times-column product",
            """
import numpy as np
def dot(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return u[None, :] @ v[:, None]
"""),
    # ------------------------------------------------------------------ cosine_similarity
    Variant("cosine_similarity", "eps added to the denominator: u·v / (‖u‖‖v‖ + eps)",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v) + eps))
"""),
    Variant("cosine_similarity", "eps floors each norm: max(‖u‖, eps)·max(‖v‖, eps)",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(u @ v / (max(np.linalg.norm(u), eps) * max(np.linalg.norm(v), eps)))
"""),
    Variant("cosine_similarity", "no eps at all: a zero vector gives NaN",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    with np.errstate(invalid="ignore"):
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
"""),
    Variant("cosine_similarity", "divides by the squared norms (forgot the square roots)",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(u @ v / max((u @ u) * (v @ v), eps))
"""),
    Variant("cosine_similarity", "returns the cosine distance 1 - cos",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(1.0 - u @ v / max(np.linalg.norm(u) * np.linalg.norm(v), eps))
"""),
    Variant("cosine_similarity", "computed in float32", """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float32), np.asarray(v, dtype=np.float32)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(u @ v / max(np.linalg.norm(u) * np.linalg.norm(v), np.float32(eps)))
"""),
    # ------------------------------------------------------------------ angle_between
    Variant("angle_between", "no clipping: arccos of a cosine rounded past ±1 gives NaN",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    with np.errstate(invalid="ignore"):
        return float(np.degrees(np.arccos(u @ v / (nu * nv))))
"""),
    Variant("angle_between", "returns radians",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    return float(np.arccos(np.clip(u @ v / (nu * nv), -1.0, 1.0)))
"""),
    Variant("angle_between", "computed in the input dtype (float32 stays float32)",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    return float(np.degrees(np.arccos(np.clip(u @ v / (nu * nv), -1, 1))))
"""),
    Variant("angle_between", "uses cosine_similarity: a zero vector gives 90° instead of an error",
            """
import numpy as np
def angle_between(u, v):
    cos = cosine_similarity(u, v)
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
"""),
    Variant("angle_between", "angle between lines: arccos(|cos|) folds obtuse angles",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    return float(np.degrees(np.arccos(np.clip(abs(u @ v) / (nu * nv), 0.0, 1.0))))
"""),
    # ------------------------------------------------------------------ pairwise_dot
    Variant("pairwise_dot", "transposed grid B Aᵀ: (m, n) instead of (n, m)",
            """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"shapes {A.shape} and {B.shape}")
    return (B @ A.T).astype(np.result_type(A, B, np.float16))
"""),
    Variant("pairwise_dot", "always float64 (float32 inputs not kept)",
            """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"shapes {A.shape} and {B.shape}")
    return A @ B.T
"""),
    Variant("pairwise_dot", "normalises the rows first: the cosine grid, not the dot grid",
            """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"shapes {A.shape} and {B.shape}")
    return normalize_rows(A) @ normalize_rows(B).T
"""),
    # ------------------------------------------------------------------ normalize_rows
    Variant("normalize_rows", "no eps floor: zero rows become NaN",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return X / np.linalg.norm(X, axis=-1, keepdims=True)
"""),
    Variant("normalize_rows", "eps added to the norm: X / (‖row‖ + eps)",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    return X / (np.linalg.norm(X.astype(np.float64), axis=-1, keepdims=True) + eps).astype(X.dtype)
"""),
    Variant("normalize_rows", "eps inside the square root: X / sqrt(Σx² + eps)",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    X64 = X.astype(np.float64)
    return (X64 / np.sqrt(np.sum(X64 * X64, axis=-1, keepdims=True) + eps)).astype(X.dtype)
"""),
    Variant("normalize_rows", "normalises columns (axis=0) instead of rows",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    X64 = X.astype(np.float64)
    return (X64 / np.maximum(np.linalg.norm(X64, axis=0, keepdims=True), eps)).astype(X.dtype)
"""),
    Variant("normalize_rows", "divides by the squared length",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    X64 = X.astype(np.float64)
    return (X64 / np.maximum(np.sum(X64 * X64, axis=-1, keepdims=True), eps)).astype(X.dtype)
"""),
    Variant("normalize_rows", "always returns float64",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X, dtype=np.float64)
    return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), eps)
"""),
    Variant("normalize_rows", "divides by the norm of the whole matrix", """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    return X / max(np.linalg.norm(X), eps)
"""),
    Variant("normalize_rows", "row norms without keepdims: broadcast against the columns", """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    return X / np.maximum(np.linalg.norm(X, axis=-1), eps)
"""),
    Variant("one_hot", "the range check reads ids.min() and ids.max(): empty integer ids raise",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"ids must lie in [0, {vocab_size})")
    return np.eye(vocab_size)[ids]
"""),
    # ------------------------------------------------------------------ issue 36: magnitudes
    Variant("cosine_similarity", "norms taken without dividing by the largest entry first: "
            "entries near 1e200 give NaN (inf / inf)", """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"two 1-D vectors of one length, got {u.shape} and {v.shape}")
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    u, v = u.astype(np.float64), v.astype(np.float64)
    if not u.any() or not v.any():
        return 0.0
    with np.errstate(all="ignore"):
        cos = np.dot(u, v) / max(np.linalg.norm(u) * np.linalg.norm(v), eps)
    return float(np.clip(cos, -1.0, 1.0))
"""),
    Variant("angle_between", "the clipped arccos without dividing by the largest entry first: "
            "entries near 1e200 or 1e-200 give NaN", """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"two 1-D vectors of one length, got {u.shape} and {v.shape}")
    if not u.any() or not v.any():
        raise ValueError("the angle with a zero vector is undefined")
    with np.errstate(all="ignore"):
        cos = np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
"""),
    Variant("normalize_rows", "row norms taken without dividing by the largest entry first: a "
            "row near 1e200 has norm inf and comes back zero", """
import numpy as np
_reference_normalize_rows = normalize_rows
def normalize_rows(X, eps=1e-12):
    out = _reference_normalize_rows(X, eps)  # its errors, dtypes and empty shapes
    X = np.asarray(X)
    if out.size == 0 or out.dtype == np.float16:
        return out
    Xf = X.astype(out.dtype)
    with np.errstate(all="ignore"):
        den = np.maximum(np.linalg.norm(Xf, axis=-1, keepdims=True), eps)
        return Xf / np.where(den == 0, 1, den)
"""),
    # issue 36: aliasing
    Variant("embedding_lookup", "a 0-d id answered with basic indexing: W_E[int(ids)] is a view "
            "of the table", """
import numpy as np
_reference_embedding_lookup = embedding_lookup
def embedding_lookup(ids, W_E):
    out = _reference_embedding_lookup(ids, W_E)  # its checks and dtypes
    W = np.asarray(W_E)
    if np.ndim(ids) == 0 and W.dtype == out.dtype:
        return W[int(ids)]
    return out
"""),
]
