"""Alternative correct implementations of topic 1: each must get full marks."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("one_hot", "np.eye(V)[ids] after validation, with a terse error message",
            """
import numpy as np
def one_hot(ids, vocab_size):
    if type(vocab_size) is bool or not isinstance(vocab_size, (int, np.integer)) or vocab_size < 1:
        raise ValueError(f"bad vocab_size {vocab_size!r}")
    ids = np.asarray(ids) if isinstance(ids, np.ndarray) or np.size(ids) else np.zeros(
        np.shape(ids), dtype=int)
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
    if not isinstance(vocab_size, (int, np.integer)) or isinstance(vocab_size, bool):
        raise ValueError("vocab_size must be an int")
    if vocab_size <= 0:
        raise ValueError(f"vocab_size {vocab_size} < 1")
    if isinstance(ids, list) and np.size(ids) == 0:
        ids = np.asarray(ids, dtype=np.int64)
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
    if W_E.ndim != 2:
        raise ValueError(f"W_E has shape {W_E.shape}, not (V, d)")
    ids = np.asarray(ids) if isinstance(ids, np.ndarray) or np.size(ids) else np.zeros(
        np.shape(ids), dtype=int)
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
    if W_E.ndim != 2:
        raise ValueError(f"W_E must be 2-D, got {W_E.shape}")
    if W_E.dtype.kind not in "fc":
        W_E = W_E.astype(np.float64)
    if isinstance(ids, list) and np.size(ids) == 0:
        ids = np.asarray(ids, dtype=np.int64)
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
    Variant("cosine_similarity", "the plain formula u·v / max(‖u‖‖v‖, eps) on vectors first "
            "divided by their largest entry (the scales multiplied back in)",
            """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    if np.isnan(eps) or eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    su, sv = np.abs(u).max(initial=0.0), np.abs(v).max(initial=0.0)
    if su == 0 or sv == 0:
        return 0.0
    u, v = u / su, v / sv
    den = np.linalg.norm(u) * np.linalg.norm(v)
    if float(den * su) * float(sv) >= eps:
        return float(np.clip(np.dot(u, v) / den, -1.0, 1.0))
    return float(np.dot(u, v) * su * sv / eps)
"""),
    Variant("cosine_similarity", "math.hypot norms (no overflow or underflow) and min/max clamp",
            """
import math
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u).astype(float), np.asarray(v).astype(float)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError("mismatch")
    if math.isnan(eps) or eps < 0:
        raise ValueError("negative eps")
    nu, nv = math.hypot(*u), math.hypot(*v)
    if nu == 0 or nv == 0:
        return 0.0
    if nu * nv >= eps:
        return max(-1.0, min(1.0, float(np.dot(u / nu, v / nv))))
    return float(np.dot(u, v)) / eps
"""),
    Variant("angle_between", "arccos of the clipped cosine (the textbook way)",
            """
import numpy as np
def angle_between(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape}")
    if not u.any() or not v.any():
        raise ValueError("the angle with a zero vector is undefined")
    u, v = u / np.abs(u).max(), v / np.abs(v).max()  # no overflow or underflow in the norms
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
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
    u, v = u / np.abs(u).max(), v / np.abs(v).max()
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
    A = A if A.dtype.kind == "f" else A.astype(np.float64)
    B = B if B.dtype.kind == "f" else B.astype(np.float64)
    return np.inner(A, B)
"""),
    Variant("normalize_rows", "np.linalg.norm and np.maximum on rows pre-divided by their largest "
            "entry, with float16 upcast to float32",
            """
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if X.ndim == 0 or not eps >= 0:
        raise ValueError(f"need X with rows and eps >= 0, got shape {X.shape}, eps {eps}")
    dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    Xc = X.astype(np.float32 if dtype == np.float16 else dtype)
    scale = np.abs(Xc).max(axis=-1, keepdims=True, initial=0)
    scale[scale == 0] = 1
    norms = np.maximum(scale * np.linalg.norm(Xc / scale, axis=-1, keepdims=True), eps)
    norms[norms == 0] = 1  # zero rows (possible with eps = 0) stay zero
    return (Xc / norms).astype(dtype)
"""),
    Variant("normalize_rows", "a loop over the rows of X.reshape(-1, d) with math.hypot",
            """
import math
import numpy as np
def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if X.ndim < 1:
        raise ValueError("X is 0-d")
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"eps {eps} < 0")
    dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
    rows = X.astype(np.float64).reshape(int(np.prod(X.shape[:-1])), X.shape[-1])
    out = np.zeros_like(rows)
    for i, row in enumerate(rows):
        norm = max(math.hypot(*row), eps)
        if norm != 0:  # a NaN row stays NaN
            out[i] = row / norm
    return out.reshape(X.shape).astype(dtype)
"""),
    # Written from docs/design/exercise-api.md's rows alone, as natural code: no checks the rows do not list, so
    # NumPy's own behaviour and messages wherever a row names no error.
    Variant("cosine_similarity", "no shape checks (the row lists no error): u @ v over the "
            "floored product of np.linalg.norm", """
import numpy as np
def cosine_similarity(u, v, eps=1e-8):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    scale = max(np.abs(u).max(initial=0.0), np.abs(v).max(initial=0.0))
    if scale == 0.0:
        return 0.0
    # norms of u/scale, v/scale: no overflow or underflow in the squares
    nu, nv = np.linalg.norm(u / scale), np.linalg.norm(v / scale)
    # the floor compared in the scaled units (issue 36: multiplying scale * scale back in
    # overflowed at entries near 1e200, the docstring's limit, and inf / inf was NaN)
    return float(((u / scale) @ (v / scale)) / max(nu * nv, eps / scale / scale))
"""),
    Variant("pairwise_dot", "A @ B.T with integers promoted and nothing else: NumPy's "
            "ValueError for widths that differ, a scalar for two 1-D inputs (the row names no "
            "error; this was a 'wrong' variant while a test graded the docstring's not-2-D "
            "error)", """
import numpy as np
def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    A = A if np.issubdtype(A.dtype, np.floating) else A.astype(np.float64)
    B = B if np.issubdtype(B.dtype, np.floating) else B.astype(np.float64)
    return A @ B.T
"""),
]
