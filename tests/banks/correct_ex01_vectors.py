"""Alternative correct implementations of topic 1: each must get full marks."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("one_hot", "np.eye(V)[ids] after validation, with a terse error message",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"bad ids dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"ids {ids.min()}..{ids.max()} not in [0, {vocab_size})")
    return np.eye(vocab_size)[ids]
"""),
    Variant("one_hot", "scatter with np.put_along_axis into zeros",
            """
import numpy as np
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if isinstance(ids.dtype.type(0), (bool, np.bool_)) or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("ids must have an integer dtype")
    if np.any(ids < 0) or np.any(ids >= vocab_size):
        raise ValueError("out of range")
    out = np.zeros(ids.shape + (vocab_size,))
    np.put_along_axis(out, ids.astype(np.int64)[..., None], 1.0, axis=-1)
    return out
"""),
    Variant("embedding_lookup", "W_E[ids] fancy indexing, .astype for integer tables",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"ids dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= len(W_E)):
        raise ValueError("id out of range")
    if W_E.dtype.kind in "iub":
        W_E = W_E.astype(float)
    return W_E[ids].copy()
"""),
    Variant("embedding_lookup", "a Python loop over the flattened ids (still O(d) per id)",
            """
import numpy as np
def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    if W_E.dtype.kind not in "fc":
        W_E = W_E.astype(np.float64)
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"ids dtype {ids.dtype}")
    flat = ids.reshape(-1)
    out = np.empty((flat.size, W_E.shape[1]), dtype=W_E.dtype)
    for k, i in enumerate(flat.tolist()):
        if not 0 <= i < W_E.shape[0]:
            raise ValueError(f"id {i} not in [0, {W_E.shape[0]})")
        out[k] = W_E[i]
    return out.reshape(ids.shape + (W_E.shape[1],))
"""),
    Variant("dot", "a Python sum over zip, in float64",
            """
import numpy as np
def dot(u, v):
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or len(u) != len(v):
        raise ValueError(f"need equal-length vectors, got {u.shape}, {v.shape}")
    return float(sum(float(a) * float(b) for a, b in zip(u, v)))
"""),
    Variant("dot", "np.einsum('i,i->', …) returning a NumPy scalar",
            """
import numpy as np
def dot(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"{u.shape} vs {v.shape}")
    return np.einsum("i,i->", u, v)
"""),
    Variant("cosine_similarity", "the plain formula with np.linalg.norm and max(…, eps)",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    return float(np.dot(u, v) / max(np.linalg.norm(u) * np.linalg.norm(v), eps))
"""),
    Variant("cosine_similarity", "torch.nn.functional.cosine_similarity-style via sqrt of sums",
            """
import math
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u).astype(float), np.asarray(v).astype(float)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError("mismatch")
    den = math.sqrt(float(np.sum(u * u))) * math.sqrt(float(np.sum(v * v)))
    return float(np.sum(u * v)) / max(den, eps)
"""),
    Variant("angle_between", "arccos of the clipped cosine (the textbook way)",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("the angle with a zero vector is undefined")
    return float(np.degrees(np.arccos(np.clip(np.dot(u, v) / (nu * nv), -1.0, 1.0))))
"""),
    Variant("angle_between", "atan2 of the cross-term norm and the dot product",
            """
import math
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    if not u.any() or not v.any():
        raise ValueError("zero vector")
    u = u / np.linalg.norm(u)
    v = v / np.linalg.norm(v)
    d = float(u @ v)
    s = float(np.linalg.norm(v - d * u))
    return math.degrees(math.atan2(s, d))
"""),
    Variant("pairwise_dot", "np.einsum('nd,md->nm')",
            """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[-1] != B.shape[-1]:
        raise ValueError(f"A {A.shape}, B {B.shape}")
    if A.dtype.kind in "iub":
        A = A.astype(np.float64)
    if B.dtype.kind in "iub":
        B = B.astype(np.float64)
    return np.einsum("nd,md->nm", A, B)
"""),
    Variant("pairwise_dot", "np.inner, which contracts the last axes",
            """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"A {A.shape}, B {B.shape}")
    out = np.inner(A, B)
    return out if out.dtype.kind == "f" else out.astype(np.float64)
"""),
    Variant("normalize_rows", "np.linalg.norm and np.maximum, with float16 upcast to float32",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    Xc = X.astype(np.float32 if dtype == np.float16 else dtype)
    norms = np.linalg.norm(Xc, axis=-1, keepdims=True)
    return (Xc / np.maximum(norms, eps)).astype(dtype)
"""),
    Variant("normalize_rows", "a loop over rows with math.hypot-free sqrt",
            """
import math
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    X64 = X.astype(np.float64)
    out = np.zeros_like(X64)
    for i, row in enumerate(X64):
        out[i] = row / max(math.sqrt(float(row @ row)), eps)
    return out.astype(dtype)
"""),
]
