"""Plausible wrong implementations of topic 3: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

# log_softmax (reference) calls logsumexp.
LSE_CALLERS = ("log_softmax",)

_SOFTMAX_CHECK = """
import math
import numpy as np
def _check_T(T):
    if not (isinstance(T, (int, float)) and math.isfinite(T) and T > 0):
        raise ValueError(f"temperature must be finite and > 0, got {T}")
"""

BANK: list[Variant] = [
    # ------------------------------------------------------------------ softmax
    Variant("softmax", "no max subtraction: exp overflows for z + 1000", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(z / temperature)
        return e / e.sum(axis=axis, keepdims=True)
"""),
    Variant("softmax", "subtracts the global max, not each slice's: far-apart rows underflow",
            _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z)
    m = m if np.isfinite(m) else 0.0
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=axis, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "an all -inf row gives NaN (-inf - (-inf))", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    with np.errstate(all="ignore"):
        e = np.exp((z - z.max(axis=axis, keepdims=True)) / temperature)
        return (e / e.sum(axis=axis, keepdims=True)).astype(dt)
"""),
    Variant("softmax", "temperature multiplies the logits instead of dividing", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) * temperature)
        s = e.sum(axis=axis, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "no check on the temperature (0 and negatives accepted)", """
import numpy as np
def softmax(z, axis=-1, temperature=1.0):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=axis, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "divides by T before subtracting the max: z/T overflows for tiny T",
            _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt) / temperature
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp(z - m)
        s = e.sum(axis=axis, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "float16 computed in float16", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(z.dtype)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / z.dtype.type(temperature))
        s = e.sum(axis=axis, keepdims=True, dtype=z.dtype)
        return e / np.where(s == 0, 1, s).astype(z.dtype)
"""),
    Variant("softmax", "float16 returned as float32", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=axis, keepdims=True)
        return e / np.where(s == 0, 1, s)
"""),
    Variant("softmax", "ignores axis: always normalises the last axis", _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=-1, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "hard-coded axis=0: normalises columns whatever axis says",
            _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=0, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=0, keepdims=True)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    Variant("softmax", "sums over every entry (axis=None) instead of along the axis",
            _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum()
        return (e / (s if s else 1)).astype(dt)
"""),
    Variant("softmax", "max and sum without keepdims (wrong broadcast on square inputs)",
            _SOFTMAX_CHECK + """
def softmax(z, axis=-1, temperature=1.0):
    _check_T(temperature)
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = z.max(axis=axis)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        e = np.exp((z - m) / temperature)
        s = e.sum(axis=axis)
        return (e / np.where(s == 0, 1, s)).astype(dt)
"""),
    # ------------------------------------------------------------------ logsumexp
    Variant("logsumexp", "naive log(sum(exp(z)))", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    with np.errstate(all="ignore"):
        return np.log(np.sum(np.exp(z), axis=axis, keepdims=keepdims))
""", also=LSE_CALLERS),
    Variant("logsumexp", "forgets to add the max back", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        return np.log(np.sum(np.exp(z - m), axis=axis, keepdims=keepdims))
""", also=LSE_CALLERS),
    Variant("logsumexp", "an all -inf slice gives NaN", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z, axis=axis, keepdims=True)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    return (out if keepdims else np.squeeze(out, axis=axis)).astype(dt)
""", also=LSE_CALLERS),
    # issue 36: passed every public test until the docstring examples became public tests
    Variant("logsumexp", "reduces over axis 0 instead of the given axis", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z, axis=0, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=0, keepdims=True)) + m
    return (out if keepdims else np.squeeze(out, axis=0)).astype(dt)
""", also=LSE_CALLERS),
    Variant("logsumexp", "keepdims ignored (always squeezed)", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis).astype(dt)
""", also=LSE_CALLERS),
    Variant("logsumexp", "shifts by the global max: rows on other scales underflow to -inf", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z)
    m = m if np.isfinite(m) else 0.0
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=keepdims)) + m
    return np.asarray(out).astype(dt)
""", also=LSE_CALLERS),
    Variant("logsumexp", "always float64 (float32/float16 not kept)", """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z, dtype=np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)
"""),
    # ------------------------------------------------------------------ log_softmax
    Variant("log_softmax", "log(softmax(z)): far-apart logits give -inf", """
import numpy as np
def log_softmax(z, axis=-1):
    with np.errstate(divide="ignore"):
        return np.log(softmax(z, axis=axis))
"""),
    Variant("log_softmax", "no max subtraction: z − log Σ exp(z) overflows for z + 1000", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    with np.errstate(all="ignore"):
        return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))
"""),
    Variant("log_softmax", "z − max(z): the log-sum term is missing", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    return z - m
"""),
    Variant("log_softmax", "logsumexp without keepdims: broadcasts along the wrong axis", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    lse = logsumexp(z, axis=axis)
    with np.errstate(invalid="ignore"):
        out = z - lse
    return np.where(np.isnan(out), -np.inf, out)
"""),
    Variant("log_softmax", "an all -inf row gives NaN", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(z, axis=axis, keepdims=True)
    with np.errstate(all="ignore"):
        out = z - m - np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True))
    return out.astype(dt)
"""),
    Variant("log_softmax", "ignores axis (always the last one)", """
import numpy as np
def log_softmax(z, axis=-1):
    z = np.asarray(z)
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    z = z.astype(np.float32 if dt == np.float16 else dt)
    lse = logsumexp(z, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        out = np.where(lse == -np.inf, -np.inf, z - lse)
    return out.astype(dt)
"""),
    # ------------------------------------------------------------------ softmax_jacobian
    Variant("softmax_jacobian", "sign flipped: p pᵀ − diag(p)", """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got {p.shape}")
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    return np.outer(p, p) - np.diag(p)
"""),
    Variant("softmax_jacobian", "diag(p) − p (broadcast, not the outer product)", """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got {p.shape}")
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    return np.diag(p) - p[None, :]
"""),
    Variant("softmax_jacobian", "only the diagonal p(1 − p)", """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got {p.shape}")
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    return np.diag(p * (1 - p))
"""),
    Variant("softmax_jacobian", "no shape check: np.diag of a 2-D p silently extracts a diagonal",
            """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p)
    p = p if p.dtype.kind == "f" else p.astype(np.float64)
    d = np.diag(p) if p.ndim == 1 else np.diag(np.diag(p))
    return d - np.outer(p, p)[: d.shape[0], : d.shape[0]]
"""),
    Variant("softmax_jacobian", "always float64", """
import numpy as np
def softmax_jacobian(p):
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got {p.shape}")
    return np.diag(p) - np.outer(p, p)
"""),
    # ------------------------------------------------------------------ online_softmax
    Variant("online_softmax", "the running sum is not rescaled when the max grows", """
import math
import numpy as np
def online_softmax(z, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l = -math.inf, 0.0
    for s in range(0, len(z), block_size):
        b = z[s:s + block_size]
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:
            continue
        l = l + float(np.exp(b - m_new).sum())
        m = m_new
    if l == 0:
        return np.zeros_like(z)
    return (np.exp(z - m) / l).astype(z.dtype)
"""),
    Variant("online_softmax", "rescales by exp(m' − m) instead of exp(m − m')", """
import math
import numpy as np
def online_softmax(z, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l = -math.inf, 0.0
    for s in range(0, len(z), block_size):
        b = z[s:s + block_size]
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:
            continue
        r = 1.0 if m == m_new else (0.0 if m == -math.inf else math.exp(m_new - m))
        l = l * r + float(np.exp(b - m_new).sum())
        m = m_new
    if l == 0:
        return np.zeros_like(z)
    return (np.exp(z - m) / l).astype(z.dtype)
"""),
    Variant("online_softmax", "the last partial block is skipped", """
import math
import numpy as np
def online_softmax(z, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l = -math.inf, 0.0
    for s in range(0, len(z) - block_size + 1, block_size):
        b = z[s:s + block_size]
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:
            continue
        r = 1.0 if m == m_new else math.exp(m - m_new)
        l = l * r + float(np.exp(b - m_new).sum())
        m = m_new
    if l == 0:
        return np.zeros_like(z)
    with np.errstate(all="ignore"):
        return (np.exp(z - m) / l).astype(z.dtype)
"""),
    Variant("online_softmax", "a leading all -inf block makes the rescale NaN", """
import numpy as np
def online_softmax(z, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l = -np.inf, 0.0
    with np.errstate(all="ignore"):
        for s in range(0, len(z), block_size):
            b = z[s:s + block_size]
            m_new = np.maximum(m, b.max())
            l = l * np.exp(m - m_new) + np.exp(b - m_new).sum()
            m = m_new
        return (np.exp(z - m) / l).astype(z.dtype)
"""),
    Variant("online_softmax", "the final pass uses the last block's max, not the running max",
            """
import math
import numpy as np
def online_softmax(z, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l, last = -math.inf, 0.0, 0.0
    for s in range(0, len(z), block_size):
        b = z[s:s + block_size]
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:
            continue
        r = 1.0 if m == m_new else math.exp(m - m_new)
        l = l * r + float(np.exp(b - m_new).sum())
        m = m_new
        last = float(b.max()) if np.isfinite(b.max()) else last
    if l == 0:
        return np.zeros_like(z)
    with np.errstate(all="ignore"):
        return (np.exp(z - last) / l).astype(z.dtype)
"""),
    Variant("online_softmax", "no block_size check: negative sizes loop zero times", """
import math
import numpy as np
def online_softmax(z, block_size):
    z = np.asarray(z)
    z = z if z.dtype.kind == "f" else z.astype(np.float64)
    m, l = -math.inf, 0.0
    for s in range(0, len(z), block_size):
        b = z[s:s + block_size]
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:
            continue
        r = 1.0 if m == m_new else math.exp(m - m_new)
        l = l * r + float(np.exp(b - m_new).sum())
        m = m_new
    if l == 0:
        return np.zeros_like(z)
    return (np.exp(z - m) / l).astype(z.dtype)
"""),
    # ------------------------------------------------------------------ online_attention
    Variant("online_attention", "the accumulator is not rescaled when the max grows", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    m, l, acc = -math.inf, 0.0, np.zeros(V.shape[1], dtype=V.dtype)
    for s in range(0, K.shape[0], block_size):
        sc = K[s:s + block_size] @ q / math.sqrt(q.shape[0])
        m_new = max(m, float(sc.max()))
        r = 1.0 if m == m_new else math.exp(m - m_new)
        w = np.exp(sc - m_new)
        l = l * r + float(w.sum())
        acc = acc + w @ V[s:s + block_size]
        m = m_new
    return acc / l
"""),
    Variant("online_attention", "no 1/√d scaling of the scores", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    m, l, acc = -math.inf, 0.0, np.zeros(V.shape[1], dtype=V.dtype)
    for s in range(0, K.shape[0], block_size):
        sc = K[s:s + block_size] @ q
        m_new = max(m, float(sc.max()))
        r = 1.0 if m == m_new else math.exp(m - m_new)
        w = np.exp(sc - m_new)
        l = l * r + float(w.sum())
        acc = acc * r + w @ V[s:s + block_size]
        m = m_new
    return acc / l
"""),
    Variant("online_attention", "each block normalised on its own, then the blocks averaged", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    outs = []
    for s in range(0, K.shape[0], block_size):
        sc = K[s:s + block_size] @ q / math.sqrt(q.shape[0])
        w = np.exp(sc - sc.max())
        outs.append(w @ V[s:s + block_size] / w.sum())
    return np.mean(outs, axis=0)
"""),
    Variant("online_attention", "scale 1/d instead of 1/√d", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    m, l, acc = -math.inf, 0.0, np.zeros(V.shape[1], dtype=V.dtype)
    for s in range(0, K.shape[0], block_size):
        sc = K[s:s + block_size] @ q / q.shape[0]
        m_new = max(m, float(sc.max()))
        r = 1.0 if m == m_new else math.exp(m - m_new)
        w = np.exp(sc - m_new)
        l = l * r + float(w.sum())
        acc = acc * r + w @ V[s:s + block_size]
        m = m_new
    return acc / l
"""),
    Variant("online_attention", "no max subtraction: exp of large scores overflows", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape}, V {V.shape}")
    l, acc = 0.0, np.zeros(V.shape[1], dtype=V.dtype)
    with np.errstate(all="ignore"):
        for s in range(0, K.shape[0], block_size):
            w = np.exp(K[s:s + block_size] @ q / math.sqrt(q.shape[0]))
            l = l + w.sum()
            acc = acc + w @ V[s:s + block_size]
        return (acc / l).astype(V.dtype)
"""),
    Variant("online_attention", "no shape checks: a longer V is silently truncated", """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    q, K, V = (np.asarray(a, dtype=np.result_type(q, K, V, np.float32)) for a in (q, K, V))
    m, l, acc = -math.inf, 0.0, np.zeros(V.shape[1], dtype=V.dtype)
    for s in range(0, K.shape[0], block_size):
        sc = K[s:s + block_size] @ q / math.sqrt(q.shape[0])
        m_new = max(m, float(sc.max()))
        r = 1.0 if m == m_new else math.exp(m - m_new)
        w = np.exp(sc - m_new)
        l = l * r + float(w.sum())
        acc = acc * r + w @ V[s:s + block_size]
        m = m_new
    return acc / l
"""),
    Variant("softmax", "temperature applied after the exponential: softmax(z) ** (1/T), "
            "renormalised (exp(z - max) underflows where exp((z - max)/T) would not)", """
import numpy as np
def softmax(z, axis=-1, temperature=1.0):
    T = float(temperature)
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"temperature must be finite and > 0, got {temperature!r}")
    z = np.asarray(z)
    dt = z.dtype if np.issubdtype(z.dtype, np.floating) else np.dtype(np.float64)
    w = z.astype(np.float32 if dt == np.float16 else dt)
    m = np.max(w, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(m == -np.inf, 0.0, m)
    e = np.exp(w - m) ** (1.0 / T)
    total = np.sum(e, axis=axis, keepdims=True)
    return (e / np.where(total == 0, 1.0, total)).astype(dt)
"""),
    Variant("online_softmax", "keeps the block's max, not the running max: a block far below "
            "an earlier one rescales the sum by exp(+800)", """
import math
import numpy as np
def online_softmax(z, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    z = np.asarray(z)
    if z.ndim != 1:
        raise ValueError(f"z must be 1-D, got shape {z.shape}")
    dt = z.dtype if z.dtype.kind == "f" else np.dtype(np.float64)
    w = z.astype(np.float32 if dt == np.float16 else dt)
    m, l = -math.inf, 0.0
    for i in range(0, w.shape[0], block_size):
        block = w[i:i + block_size]
        m_new = float(block.max())
        if m_new == -math.inf:
            continue
        l = l * math.exp(m - m_new) + float(np.exp(block - m_new).sum())
        m = m_new
    if l == 0.0:
        return np.zeros(w.shape, dtype=dt)
    with np.errstate(all="ignore"):
        return (np.exp(w - m) / l).astype(dt)
"""),
    Variant("online_attention", "no keys (n = 0): the empty accumulator divided by l = 0 gives NaN",
            """
import math
import numpy as np
def online_attention(q, K, V, block_size):
    q, K, V = np.asarray(q), np.asarray(K), np.asarray(V)
    dt = np.result_type(q, K, V)
    dt = dt if np.issubdtype(dt, np.floating) else np.dtype(np.float64)
    w = np.float32 if dt == np.float16 else dt
    q, K, V = q.astype(w), K.astype(w), V.astype(w)
    scale = 1.0 / math.sqrt(q.shape[0])
    m, l, acc = -np.inf, 0.0, np.zeros(V.shape[1], dtype=w)
    for i in range(0, K.shape[0], block_size):
        s = (K[i:i + block_size] @ q) * scale
        m_new = max(m, s.max())
        p = np.exp(s - m_new)
        shrink = math.exp(m - m_new) if m > -np.inf else 0.0
        l = l * shrink + p.sum()
        acc = acc * shrink + p @ V[i:i + block_size]
        m = m_new
    with np.errstate(invalid="ignore"):
        return (acc / l).astype(dt)
"""),
    # issue 36: tiny tails held to a relative tolerance
    Variant("softmax", "float64 logits computed in float32: tails below 1e-45 become 0 and the "
            "rest lose digits", """
import numpy as np
_reference_softmax = softmax
def softmax(z, axis=-1, temperature=1.0):
    z = np.asarray(z)
    if z.dtype != np.float64:
        return _reference_softmax(z, axis, temperature)
    return _reference_softmax(z.astype(np.float32), axis, temperature).astype(np.float64)
"""),
]
