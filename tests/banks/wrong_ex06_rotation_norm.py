"""Plausible wrong implementations of topic 6: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    # ------------------------------------------------------------ rotation_matrix
    Variant("rotation_matrix", "clockwise: the transpose of the rotation matrix", """
import numpy as np
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]], dtype=np.float64)
"""),
    Variant("rotation_matrix", "theta read as degrees", """
import numpy as np
def rotation_matrix(theta):
    t = np.deg2rad(theta)
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s], [s, c]])
"""),
    Variant("rotation_matrix", "returns float32", """
import numpy as np
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]], dtype=np.float32)
"""),
    Variant("rotation_matrix", "sin and cos swapped", """
import numpy as np
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[s, -c], [c, s]])
"""),
    # ------------------------------------------------------------ rope_angles
    Variant("rope_angles", "frequencies base^(-i/rotary_dim): the factor 2 forgotten", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2:
        raise ValueError(f"odd rotary_dim {rotary_dim}")
    i = np.arange(rotary_dim // 2)
    return np.outer(np.asarray(positions, dtype=np.float64), base ** (-i / rotary_dim))
""", also=("apply_rope",)),
    Variant("rope_angles", "off by one: frequencies start at base^(-2/rotary_dim)", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2:
        raise ValueError(f"odd rotary_dim {rotary_dim}")
    i = np.arange(1, rotary_dim // 2 + 1)
    return np.outer(np.asarray(positions, dtype=np.float64), base ** (-2.0 * i / rotary_dim))
""", also=("apply_rope",)),
    Variant("rope_angles", "no check for an odd rotary_dim (silently rounds down)", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    i = np.arange(rotary_dim // 2)
    return np.outer(np.asarray(positions, dtype=np.float64), base ** (-2.0 * i / rotary_dim))
""", also=("apply_rope",)),
    Variant("rope_angles",
            "Hugging Face's duplicated table: (n, rotary_dim) instead of (n, rotary_dim/2)",
            """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2:
        raise ValueError(f"odd rotary_dim {rotary_dim}")
    i = np.arange(rotary_dim // 2)
    f = np.outer(np.asarray(positions, dtype=np.float64), base ** (-2.0 * i / rotary_dim))
    return np.concatenate([f, f], axis=-1)
""", also=("apply_rope",)),
    Variant("rope_angles", "float32 angles", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2:
        raise ValueError(f"odd rotary_dim {rotary_dim}")
    i = np.arange(rotary_dim // 2, dtype=np.float32)
    inv = (np.float32(base) ** (-2.0 * i / rotary_dim)).astype(np.float32)
    return np.outer(np.asarray(positions, dtype=np.float32), inv)
""", also=("apply_rope",)),
    Variant("rope_angles", "base ignored (always 10000)", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2:
        raise ValueError(f"odd rotary_dim {rotary_dim}")
    i = np.arange(rotary_dim // 2)
    return np.outer(np.asarray(positions, dtype=np.float64), 10000.0 ** (-2.0 * i / rotary_dim))
""", also=("apply_rope",)),
    # ------------------------------------------------------------ apply_rope
    Variant("apply_rope", "interleaved pairs (2i, 2i + 1), GPT-J style", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    th = rope_angles(positions, rd, base)
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    x1, x2 = xf[..., 0:rd:2], xf[..., 1:rd:2]
    rot = np.stack([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).reshape(*x.shape[:-1], rd)
    return np.concatenate([rot, xf[..., rd:]], axis=-1).astype(out_dtype)
"""),
    Variant("apply_rope", "clockwise: the sine terms' signs flipped", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    th = rope_angles(positions, rd, base)
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    h = rd // 2
    x1, x2 = xf[..., :h], xf[..., h:rd]
    return np.concatenate([x1 * c + x2 * s, x2 * c - x1 * s, xf[..., rd:]], -1).astype(out_dtype)
"""),
    Variant("apply_rope", "partial rotary: frequencies computed with d instead of rotary_dim", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    h = rd // 2
    th = rope_angles(positions, d - d % 2, base)[:, :h]
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    x1, x2 = xf[..., :h], xf[..., h:rd]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, xf[..., rd:]], -1).astype(out_dtype)
"""),
    Variant("apply_rope", "partial rotary: pairs i with i + d/2 and rotates every dimension", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    h = d // 2
    th = rope_angles(positions, 2 * h, base)
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    x1, x2 = xf[..., :h], xf[..., h:2 * h]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, xf[..., 2 * h:]], -1).astype(out_dtype)
"""),
    Variant("apply_rope", "positions ignored: uses 0 .. n-1", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    n, d = x.shape[-2], x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    if len(positions) != n:
        raise ValueError("positions length")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    th = rope_angles(np.arange(n), rd, base)
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    h = rd // 2
    x1, x2 = xf[..., :h], xf[..., h:rd]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, xf[..., rd:]], -1).astype(out_dtype)
"""),
    Variant("apply_rope", "always returns float64 (float32/float16 not kept)", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"bad rotary_dim {rd} for d = {d}")
    th = rope_angles(positions, rd, base)
    c, s = np.cos(th), np.sin(th)
    h = rd // 2
    x1, x2 = x[..., :h], x[..., h:rd]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, x[..., rd:]], -1)
"""),
    Variant("apply_rope", "rotary_dim > d not rejected: rotates what there is", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    rd = d if rotary_dim is None else min(rotary_dim, d)
    if rd % 2:
        raise ValueError(f"odd rotary_dim {rd}")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    th = rope_angles(positions, rd, base)
    c, s = np.cos(th), np.sin(th)
    xf = x.astype(np.float64)
    h = rd // 2
    x1, x2 = xf[..., :h], xf[..., h:rd]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, xf[..., rd:]], -1).astype(out_dtype)
"""),
    # ------------------------------------------------------------ rms_norm
    Variant("rms_norm", "eps outside the square root", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    y = xw / (np.sqrt(np.mean(xw * xw, axis=-1, keepdims=True)) + eps) * np.asarray(weight)
    return y.astype(out)
""", also=("qk_norm",)),
    Variant("rms_norm", "mean of squares over every axis, not per vector", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    y = xw / np.sqrt(np.mean(xw * xw) + eps) * np.asarray(weight)
    return y.astype(out)
""", also=("qk_norm",)),
    Variant("rms_norm", "divides by the L2 norm (sum of squares) instead of the RMS", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    y = xw / np.sqrt(np.sum(xw * xw, axis=-1, keepdims=True) + eps) * np.asarray(weight)
    return y.astype(out)
""", also=("qk_norm",)),
    Variant("rms_norm", "float16 squared in float16 (overflows past 256)", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    w = np.asarray(weight).astype(x.dtype)
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return (x / np.sqrt(ms + x.dtype.type(eps)) * w).astype(x.dtype)
""", also=("qk_norm",)),
    Variant("rms_norm", "float16 returned as float32", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    y = xw / np.sqrt(np.mean(xw * xw, axis=-1, keepdims=True) + eps) * np.asarray(weight).astype(w)
    return y
""", also=("qk_norm",)),
    Variant("rms_norm", "centres x first (LayerNorm without the bias)", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    xw = xw - xw.mean(axis=-1, keepdims=True)
    y = xw / np.sqrt(np.mean(xw * xw, axis=-1, keepdims=True) + eps) * np.asarray(weight)
    return y.astype(out)
""", also=("qk_norm",)),
    # ------------------------------------------------------------ layer_norm
    Variant("layer_norm", "unbiased variance (divide by d - 1)", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    mu = xw.mean(axis=-1, keepdims=True)
    var = xw.var(axis=-1, keepdims=True, ddof=1) if xw.shape[-1] > 1 else 0.0 * mu
    return ((xw - mu) / np.sqrt(var + eps) * weight + bias).astype(out)
"""),
    Variant("layer_norm", "eps outside the square root", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    mu = xw.mean(axis=-1, keepdims=True)
    return ((xw - mu) / (xw.std(axis=-1, keepdims=True) + eps) * weight + bias).astype(out)
"""),
    Variant("layer_norm", "adds the bias before scaling", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    mu = xw.mean(axis=-1, keepdims=True)
    var = xw.var(axis=-1, keepdims=True)
    return (((xw - mu) / np.sqrt(var + eps) + bias) * weight).astype(out)
"""),
    Variant("layer_norm", "one-pass variance E[x²] − E[x]² (cancels when the mean is large)", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    mu = xw.mean(axis=-1, keepdims=True)
    var = np.maximum((xw * xw).mean(axis=-1, keepdims=True) - mu * mu, 0.0)
    return ((xw - mu) / np.sqrt(var + eps) * weight + bias).astype(out)
"""),
    Variant("layer_norm", "normalises over the first axis (the batch) instead of the last", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    w = np.float32 if out == np.float16 else out
    xw = x.astype(w)
    mu = xw.mean(axis=0, keepdims=True)
    var = xw.var(axis=0, keepdims=True)
    return ((xw - mu) / np.sqrt(var + eps) * weight + bias).astype(out)
"""),
    # ------------------------------------------------------------ qk_norm
    Variant("qk_norm", "weight_q used for the keys too", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    return rms_norm(q, weight_q, eps), rms_norm(k, weight_q, eps)
"""),
    Variant("qk_norm", "gains swapped", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    return rms_norm(q, weight_k, eps), rms_norm(k, weight_q, eps)
"""),
    Variant("qk_norm", "one RMS per head over (n, d_h), not per vector", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    def norm(x, w):
        x = np.asarray(x)
        out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
        xw = x.astype(np.float32 if out == np.float16 else out)
        ms = np.mean(xw * xw, axis=(-2, -1), keepdims=True)
        return (xw / np.sqrt(ms + eps) * w).astype(out)
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    return norm(q, weight_q), norm(k, weight_k)
"""),
    Variant("qk_norm", "LayerNorm (centred) instead of RMSNorm", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    d = np.shape(q)[-1]
    return (layer_norm(q, weight_q, np.zeros(d), eps), layer_norm(k, weight_k, np.zeros(d), eps))
"""),
    Variant("qk_norm", "unit length (F.normalize) instead of unit RMS", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    def norm(x, w):
        x = np.asarray(x)
        out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
        xw = x.astype(np.float32 if out == np.float16 else out)
        n = np.sqrt(np.sum(xw * xw, axis=-1, keepdims=True) + eps)
        return (xw / n * w).astype(out)
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    return norm(q, weight_q), norm(k, weight_k)
"""),
    Variant("qk_norm", "the eps argument is not passed on (always rms_norm's default)", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    if np.shape(q)[-1] != np.shape(k)[-1]:
        raise ValueError("head dims differ")
    return rms_norm(q, weight_q), rms_norm(k, weight_k)
"""),
]
