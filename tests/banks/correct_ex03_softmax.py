"""Alternative correct implementations of topic 3: each must get full marks."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("softmax", "np.where-masked max, shift then divide, NaN cleaned with nan_to_num",
            """
import math
import numpy as np
def softmax(z, axis=-1, temperature=1.0):
    if not (isinstance(temperature, (int, float, np.integer, np.floating))
            and math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"bad temperature {temperature}")
    z = np.asarray(z)
    out_dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else np.float64
    x = z.astype(np.float32) if z.dtype == np.float16 else z.astype(out_dtype)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(invalid="ignore"):
        e = np.exp((x - m) / temperature)
    e = np.nan_to_num(e, nan=0.0)
    total = e.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(total > 0, e / total, 0.0)
    return p.astype(out_dtype)
"""),
    Variant("softmax", "torch.softmax on a float64 tensor after a safe max shift, cast back", """
import math
import numpy as np
import torch
def softmax(z, axis=-1, temperature=1.0):
    try:
        T = float(temperature)
    except TypeError:
        raise ValueError(f"temperature must be a number, got {temperature!r}") from None
    if not math.isfinite(T) or T <= 0:
        raise ValueError("temperature must be a finite positive number")
    z = np.asarray(z)
    out_dtype = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    t = torch.from_numpy(np.array(z, dtype=np.float64))
    m = t.amax(dim=axis, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.softmax((t - m) / T, dim=axis)
    p = torch.nan_to_num(p, nan=0.0)
    return p.numpy().astype(out_dtype)
"""),
    Variant("logsumexp", "np.logaddexp.reduce along the axis", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    out_dtype = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    x = z.astype(np.float64)
    out = np.logaddexp.reduce(x, axis=axis, keepdims=keepdims)
    return np.asarray(out).astype(out_dtype)
"""),
    Variant("logsumexp", "max-shift with keepdims, returning NumPy scalars for 1-D input", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    x = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=keepdims))
    m = m if keepdims else np.squeeze(m, axis=axis)
    out = (s + m).astype(dt)
    return out[()] if out.ndim == 0 else out
"""),
    Variant("log_softmax", "shift by the max, subtract the log of the shifted sum", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    x = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        shifted = x - m
        out = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return np.where(np.isnan(out), -np.inf, out).astype(dt)
"""),
    Variant("log_softmax", "the spec's formula as written: z − logsumexp(z, keepdims=True) "
            "(near 1e308 logsumexp rounds to the max: off by log 2, far below eps·|z|)", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    x = z.astype(np.float32 if dt == np.float16 else dt)
    lse = logsumexp(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        out = x - lse
    return np.where(lse == -np.inf, -np.inf, out).astype(dt)
"""),
    Variant("softmax_jacobian", "einsum outer product and p[:, None] * eye", """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"expected shape (N,), got {p.shape}")
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    return p[:, None] * np.eye(len(p), dtype=p.dtype) - np.einsum("i,j->ij", p, p)
"""),
    Variant("online_softmax", "running state kept as NumPy scalars, -inf handled with where", """
import numpy as np
def online_softmax(z, block_size):
    if isinstance(block_size, (bool, float)) or int(block_size) != block_size or block_size < 1:
        raise ValueError(f"block_size={block_size} must be an integer >= 1")
    z = np.asarray(z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D, got shape {z.shape}")
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    x = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.array(-np.inf)
    l = np.array(0.0)
    for i in range(0, x.size, block_size):
        blk = x[i:i + block_size]
        m_new = np.maximum(m, blk.max())
        if np.isneginf(m_new):
            continue
        l = l * np.exp(m - m_new) + np.exp(blk - m_new).sum()
        m = m_new
    if l == 0:
        return np.zeros(x.shape, dt)
    return (np.exp(x - m) / l).astype(dt)
"""),
    Variant("online_attention", "scores for all keys of a block via einsum, float64 state", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool) \
            or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    q, K, V = np.asarray(q), np.asarray(K), np.asarray(V)
    if (q.ndim != 1 or K.ndim != 2 or V.ndim != 2 or q.size == 0
            or K.shape != (V.shape[0], q.shape[0])):
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    dt = np.result_type(q, K, V)
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    q, K, V = (a.astype(np.float64) for a in (q, K, V))
    m, l, acc = -np.inf, 0.0, np.zeros(V.shape[1])
    for i in range(0, K.shape[0], block_size):
        s = np.einsum("nd,d->n", K[i:i + block_size], q) / math.sqrt(q.size)
        m_new = max(m, s.max())
        if m_new == -np.inf:
            continue  # only scores that overflowed to -inf so far
        alpha = math.exp(m - m_new)
        w = np.exp(s - m_new)
        l = alpha * l + w.sum()
        acc = alpha * acc + np.einsum("n,nv->v", w, V[i:i + block_size])
        m = m_new
    if l == 0:
        return np.zeros(V.shape[1], dt)  # no keys
    return (acc / l).astype(dt)
"""),
    Variant("log_softmax", "float16 kept in float16 for z - max and the result (the row states "
            "no working precision), the sum of exponentials accumulated in float32", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(z.dtype)
    shifted = z - m
    with np.errstate(divide="ignore"):
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True, dtype=np.float32
                       if z.dtype == np.float16 else z.dtype)
        lse = np.log(total).astype(z.dtype)
    return np.where(np.isneginf(lse), -np.inf, shifted - lse).astype(z.dtype)
"""),
    Variant("online_attention", "natural code: no checks of block_size or of V's length (the "
            "row lists no error), float16 in float16 arithmetic, no keys gives zeros", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    q, K, V = np.asarray(q), np.asarray(K), np.asarray(V)
    dt = np.result_type(q, K, V)
    dt = dt if np.issubdtype(dt, np.floating) else np.dtype(np.float64)
    q, K, V = q.astype(dt), K.astype(dt), V.astype(dt)
    scale = 1.0 / math.sqrt(q.shape[0])
    m, l, acc = -np.inf, dt.type(0), np.zeros(V.shape[1], dtype=dt)
    for i in range(0, K.shape[0], block_size):
        s = (K[i:i + block_size] @ q) * scale
        m_new = max(m, s.max())
        p = np.exp(s - m_new)
        shrink = np.exp(m - m_new) if m > -np.inf else dt.type(0)
        l = l * shrink + p.sum()
        acc = acc * shrink + p @ V[i:i + block_size]
        m = m_new
    if K.shape[0] == 0:
        return acc  # the empty sum
    return (acc / l).astype(dt)
"""),
]
