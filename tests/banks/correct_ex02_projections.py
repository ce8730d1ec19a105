"""Alternative correct implementations of topic 2: each must get full marks."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("linear", "np.einsum('...i,io->...o') with a terse error", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    if W.ndim != 2 or x.ndim == 0 or x.shape[-1] != W.shape[0]:
        raise ValueError(f"{x.shape} @ {W.shape}")
    if x.dtype.kind in "iub":
        x = x.astype(float)
    if W.dtype.kind in "iub":
        W = W.astype(float)
    out = np.einsum("...i,io->...o", x, W)
    if b is not None:
        b = np.asarray(b)
        if b.shape != W.shape[1:]:
            raise ValueError(f"bias {b.shape} for W {W.shape}")
        out = out + b.astype(out.dtype)
    return out
"""),
    Variant("linear", "np.tensordot over the last axis of x", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    if W.ndim != 2 or x.shape[-1:] != W.shape[:1]:
        raise ValueError(f"x {x.shape} vs W {W.shape}")
    if b is not None and np.shape(b) != (W.shape[1],):
        raise ValueError(f"b {np.shape(b)} vs W {W.shape}")
    dt = np.result_type(x.dtype, W.dtype, np.float16 if x.dtype.kind == "f" else np.float64)
    if x.dtype.kind != "f" or W.dtype.kind != "f":
        dt = np.result_type(dt, np.float64)
    out = np.tensordot(x.astype(dt), W.astype(dt), axes=([-1], [0]))
    return out if b is None else out + np.asarray(b).astype(dt)
"""),
    Variant("project_qkv", "one concatenated matmul X @ [W_Q | W_K | W_V], then split", """
import numpy as np
def project_qkv(X, W_Q, W_K, W_V):
    X = np.asarray(X)
    Ws = [np.asarray(W) for W in (W_Q, W_K, W_V)]
    if X.ndim == 0 or any(W.ndim != 2 for W in Ws):
        raise ValueError(f"X {X.shape} and weights {[W.shape for W in Ws]} must be (..., d), 2-D")
    if Ws[0].shape[1] != Ws[1].shape[1]:
        raise ValueError(f"d_k differs: {Ws[0].shape} vs {Ws[1].shape}")
    if any(W.shape[0] != X.shape[-1] for W in Ws):
        raise ValueError(f"X {X.shape} does not match {[W.shape for W in Ws]}")
    W = np.concatenate(Ws, axis=1)
    out = linear(X, W)
    d_k = Ws[0].shape[1]
    return out[..., :d_k], out[..., d_k:2 * d_k], out[..., 2 * d_k:]
"""),
    Variant("attention_scores", "np.einsum('...qd,...kd->...qk') with math.sqrt", """
import math
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q), np.asarray(K)
    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape}, K {K.shape}")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"batch axes of Q {Q.shape}, K {K.shape} differ") from None
    if scale is None and Q.shape[-1] == 0:
        raise ValueError("d_k = 0")
    if scale is not None and not math.isfinite(scale):
        raise ValueError(f"scale {scale}")
    if Q.dtype.kind in "iub":
        Q = Q.astype(np.float64)
    if K.dtype.kind in "iub":
        K = K.astype(np.float64)
    dt = np.result_type(Q, K)
    if scale is None:
        scale = 1.0 / math.sqrt(Q.shape[-1])
    work = np.float32 if dt == np.float16 else dt
    out = np.einsum("...qd,...kd->...qk", Q.astype(work), K.astype(work))
    return (out * np.asarray(scale, dtype=work)).astype(dt)
"""),
    Variant("attention_scores", "scales Q first, then Q @ K.swapaxes", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q), np.asarray(K)
    if min(Q.ndim, K.ndim) < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"d_k mismatch: Q {Q.shape}, K {K.shape}")
    for a, b in zip(Q.shape[-3::-1], K.shape[-3::-1]):  # batch axes, from the right
        if a != b and 1 not in (a, b):
            raise ValueError(f"Q {Q.shape} and K {K.shape}: batch axes do not broadcast")
    if scale is None and Q.shape[-1] == 0:
        raise ValueError(f"no default scale for d_k = 0 (Q {Q.shape})")
    if scale is not None and not np.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale}")
    if Q.dtype.kind != "f":
        Q = Q.astype(float)
    if K.dtype.kind != "f":
        K = K.astype(float)
    half = np.result_type(Q, K) == np.float16
    if half:
        Q, K = Q.astype(np.float32), K.astype(np.float32)
    s = Q.dtype.type(Q.shape[-1] ** -0.5 if scale is None else scale)
    out = (Q * s) @ K.swapaxes(-1, -2)
    return out.astype(np.float16) if half else out
"""),
    Variant("compose", "functools.reduce(np.matmul) left to right", """
import numpy as np
from functools import reduce
def compose(*Ws):
    if len(Ws) == 0:
        raise ValueError("compose() needs at least one matrix")
    Ws = [np.asarray(W) for W in Ws]
    if any(W.ndim != 2 for W in Ws):
        raise ValueError(f"matrices must be 2-D, got {[W.shape for W in Ws]}")
    Ws = [W if W.dtype.kind == "f" else W.astype(np.float64) for W in Ws]
    for A, B in zip(Ws, Ws[1:]):
        if A.shape[1] != B.shape[0]:
            raise ValueError(f"{A.shape} then {B.shape}")
    return reduce(np.matmul, Ws[1:], Ws[0].copy())
"""),
    # issue 36: a left fold names the product so far and the matrix it cannot take, not the
    # two original neighbours; any offending shape satisfies the API's message rule
    Variant("compose", "a left fold whose error names the running product ('cannot chain "
            "(2, 4) with (5, 2)')", """
import numpy as np
def compose(*Ws):
    if not Ws:
        raise ValueError("compose needs at least one matrix")
    mats = [np.asarray(W) for W in Ws]
    for W in mats:
        if W.ndim != 2:
            raise ValueError(f"every matrix must be 2-D, got shape {W.shape}")
    mats = [W if W.dtype.kind == "f" else W.astype(np.float64) for W in mats]
    M = mats[0].copy()
    for W in mats[1:]:
        if M.shape[1] != W.shape[0]:
            raise ValueError(f"cannot chain {M.shape} with {W.shape}")
        M = M @ W
    return M
"""),
    Variant("compose", "right to left bracketing W1 (W2 (W3 …)), same product", """
import numpy as np
def compose(*Ws):
    if not Ws:
        raise ValueError("nothing to compose")
    Ws = [np.asarray(W) for W in Ws]
    for W in Ws:
        if W.ndim != 2:
            raise ValueError(f"not a matrix: shape {W.shape}")
    Ws = [W if W.dtype.kind == "f" else W.astype(np.float64) for W in Ws]
    for A, B in zip(Ws, Ws[1:]):
        if A.shape[1] != B.shape[0]:
            raise ValueError(f"{A.shape} then {B.shape}")
    out = Ws[-1].copy()
    for W in reversed(Ws[:-1]):
        out = W @ out
    return out
"""),
    Variant("gelu", "erf from math.erf through np.vectorize, computed in the input dtype "
            "(float16 in float32), the -inf limit set by hand", """
import math
import numpy as np
_erf = np.vectorize(math.erf, otypes=[np.float64])
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"unknown approximate={approximate!r}")
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.promote_types(dt, np.float32))
    if approximate == "none":
        out = 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))).astype(x.dtype)
    else:
        c = x.dtype.type(math.sqrt(2.0 / math.pi))
        with np.errstate(over="ignore"):
            out = 0.5 * x * (1.0 + np.tanh(c * (x + x.dtype.type(0.044715) * x ** 3)))
    return np.where(np.isneginf(x), 0.0, out).astype(dt)
"""),
    Variant("gelu", "torch.nn.functional.gelu on a float64 tensor, cast back", """
import numpy as np
import torch
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError("approximate must be 'none' or 'tanh'")
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    t = torch.from_numpy(np.array(x, dtype=np.float64))
    out = torch.nn.functional.gelu(t, approximate=approximate).numpy()
    return np.where(np.isneginf(x), 0.0, out).astype(dt)  # torch gives NaN at -inf
"""),
    Variant("feed_forward", "written out with @ and an inline erf GELU", """
import math
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    X, W1, W2 = (np.asarray(a) for a in (X, W1, W2))
    if X.shape[-1] != W1.shape[0] or W1.shape[1] != W2.shape[0]:
        raise ValueError(f"X {X.shape}, W1 {W1.shape}, W2 {W2.shape} do not chain")
    h = X @ W1
    if b1 is not None:
        h = h + b1
    erf = np.vectorize(math.erf, otypes=[np.float64])
    h = h * 0.5 * (1 + erf(h / math.sqrt(2))).astype(h.dtype)
    out = h @ W2
    return out if b2 is None else out + b2
"""),
    Variant("transformer_matmuls", "out_proj listed beside the other projections (the course's "
            "literal order), plain ints", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    for v in (d_model, n_heads, d_ff, vocab_size, seq_len):
        if type(v) is bool or not isinstance(v, int) or v < 1:
            raise ValueError(f"sizes must be ints >= 1, got {v!r}")
    if d_model % n_heads != 0:
        raise ValueError(f"{d_model} heads do not divide into {n_heads}")
    n, d, h, V = seq_len, d_model, n_heads, vocab_size
    dh = d // h
    rows = [
        ("embed", (n, V), (V, d), (n, d), 2 * n * V * d),
        ("q_proj", (n, d), (d, d), (n, d), 2 * n * d * d),
        ("k_proj", (n, d), (d, d), (n, d), 2 * n * d * d),
        ("v_proj", (n, d), (d, d), (n, d), 2 * n * d * d),
        ("out_proj", (n, d), (d, d), (n, d), 2 * n * d * d),
        ("scores", (h, n, dh), (h, dh, n), (h, n, n), 2 * h * n * dh * n),
        ("aggregate", (h, n, n), (h, n, dh), (h, n, dh), 2 * h * n * n * dh),
        ("ffn_up", (n, d), (d, d_ff), (n, d_ff), 2 * n * d * d_ff),
        ("ffn_down", (n, d_ff), (d_ff, d), (n, d), 2 * n * d_ff * d),
        ("unembed", (n, d), (d, V), (n, V), 2 * n * d * V),
    ]
    return [Matmul(*r) for r in rows]
"""),
    Variant("attention_scores", "Q @ swapaxes(K) times a Python-float scale, no checks of its "
            "own (the row lists no error): NumPy's ValueError and message", """
import math
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q), np.asarray(K)
    Q = Q if np.issubdtype(Q.dtype, np.floating) else Q.astype(np.float64)
    K = K if np.issubdtype(K.dtype, np.floating) else K.astype(np.float64)
    if scale is None:
        scale = 1.0 / math.sqrt(Q.shape[-1])
    return (Q @ np.swapaxes(K, -1, -2)) * scale
"""),
]
