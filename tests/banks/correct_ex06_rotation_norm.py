"""Correct alternative implementations of topic 6: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("rotation_matrix", "from the complex number e^{iθ}", """
import numpy as np
def rotation_matrix(theta):
    if np.ndim(theta) != 0 or not np.isfinite(theta):
        raise ValueError(f"theta must be a finite scalar, got {theta!r}")
    z = np.exp(1j * float(theta))
    return np.array([[z.real, -z.imag], [z.imag, z.real]])
"""),
    Variant("rotation_matrix", "np.block of cos/sin, validation by np.isfinite on a 0-D array", """
import numpy as np
def rotation_matrix(theta):
    t = np.asarray(theta, dtype=float)
    if t.shape != () or not np.isfinite(t):
        raise ValueError("rotation_matrix: theta must be one finite real number")
    c, s = np.cos(theta), np.sin(theta)
    return np.block([[c, -s], [s, c]]).astype(float).reshape(2, 2)
"""),
    Variant("rope_angles",
            "Hugging Face style: 1 / base^(arange(0, d, 2) / d), einsum outer product",
            """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if np.ndim(positions) != 1:
        raise ValueError(f"rope_angles: positions must be (n,), got {np.shape(positions)}")
    if not isinstance(rotary_dim, int) or rotary_dim <= 0 or rotary_dim % 2 != 0:
        raise ValueError(f"rope_angles: rotary_dim must be even, got {rotary_dim}")
    if not 0 < base < np.inf:
        raise ValueError(f"rope_angles: base must be finite and > 0, got {base}")
    inv_freq = 1.0 / (base ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim))
    return np.einsum("n,f->nf", np.asarray(positions, dtype=np.float64), inv_freq)
"""),
    Variant("rope_angles", "exp/log form of the frequencies", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    pos = np.asarray(positions)
    if pos.ndim != 1:
        raise ValueError(f"positions of shape {pos.shape} are not 1-D")
    if type(rotary_dim) is not int or rotary_dim < 2 or rotary_dim % 2 == 1:
        raise ValueError("bad rotary_dim: " + str(rotary_dim))
    if not (np.isfinite(base) and base > 0):
        raise ValueError("bad base: " + str(base))
    i = np.arange(rotary_dim // 2)
    freq = np.exp(-2.0 * i / rotary_dim * np.log(base))
    return np.asarray(positions, dtype=np.float64)[:, None] * freq[None, :]
"""),
    Variant("apply_rope", "complex numbers: (x1 + i x2) · e^{iθ}", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    if x.ndim < 2 or np.shape(positions) != x.shape[-2:-1]:
        raise ValueError(f"apply_rope: x {x.shape} needs (..., n, d), positions (n,), "
                         f"got {np.shape(positions)}")
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd > d or rd % 2:
        raise ValueError(f"apply_rope: rotary_dim {rd} must be even and <= d = {d}")
    out = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    h = rd // 2
    z = (x[..., :h] + 1j * x[..., h:rd]) * np.exp(1j * rope_angles(positions, rd, base))
    return np.concatenate([z.real, z.imag, x[..., rd:]], axis=-1).astype(out)
"""),
    Variant("apply_rope",
            "Hugging Face rotate_half, cos/sin cast to x's dtype (float16 math in float16)",
            """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x of shape {x.shape} is not (..., n, d)")
    if np.ndim(positions) != 1 or len(positions) != x.shape[-2]:
        raise ValueError(f"positions {np.shape(positions)} do not match x {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd > d:
        raise ValueError(f"rotary_dim {rd} > head dim {d}")
    th = rope_angles(positions, rd, base)
    emb = np.concatenate([th, th], axis=-1)
    cos, sin = np.cos(emb).astype(x.dtype), np.sin(emb).astype(x.dtype)
    xr, xp = x[..., :rd], x[..., rd:]
    x1, x2 = xr[..., : rd // 2], xr[..., rd // 2:]
    rot_half = np.concatenate([-x2, x1], axis=-1)
    return np.concatenate([xr * cos + rot_half * sin, xp], axis=-1)
"""),
    Variant("apply_rope", "a loop over pairs with 2x2 rotation matrices (loops are allowed here)",
            """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
    pos = np.asarray(positions)
    if x.ndim < 2 or pos.shape != (x.shape[-2],):
        raise ValueError(f"x {x.shape} and positions {pos.shape} do not fit")
    out_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    d = x.shape[-1]
    rd = d if rotary_dim is None else rotary_dim
    if rd % 2 or rd > d:
        raise ValueError(f"rotary_dim {rd} must be even and at most {d}")
    th = rope_angles(positions, rd, base)
    out = x.astype(np.float64).copy()
    h = rd // 2
    for i in range(h):
        c, s = np.cos(th[:, i]), np.sin(th[:, i])
        a, b = out[..., i].copy(), out[..., i + h].copy()
        out[..., i] = c * a - s * b
        out[..., i + h] = s * a + c * b
    return out.astype(out_dtype)
"""),
    Variant("rms_norm", "Hugging Face LlamaRMSNorm: float32 maths, cast back, then the gain", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    weight = np.asarray(weight)
    if x.ndim == 0 or x.shape[-1] == 0 or weight.shape != x.shape[-1:]:
        raise ValueError(f"weight {weight.shape} does not match x {x.shape}")
    if not (np.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps}")
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    h = x.astype(np.float32 if dt == np.float16 else dt)
    h = h * (1.0 / np.sqrt(np.mean(h ** 2, axis=-1, keepdims=True) + eps))
    return (weight.astype(dt) * h.astype(dt)).astype(dt)
"""),
    Variant("rms_norm", "np.linalg.norm / sqrt(d), torch-free", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[-1] < 1 or np.shape(weight) != x.shape[-1:]:
        raise ValueError(f"rms_norm: weight shape {np.shape(weight)} mismatch for x {x.shape}")
    if not 0 <= eps < np.inf:
        raise ValueError(f"rms_norm: bad eps {eps}")
    dt = x.dtype if x.dtype.kind == "f" else np.dtype("float64")
    xw = x.astype("float32" if dt == np.float16 else dt)
    d = x.shape[-1]
    rms = np.sqrt(np.linalg.norm(xw, axis=-1, keepdims=True) ** 2 / d + eps)
    return (xw / rms * weight).astype(dt)
"""),
    Variant("layer_norm", "torch.nn.functional.layer_norm", """
import numpy as np
import torch
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[-1] == 0 or not 0 <= eps < float("inf"):
        raise ValueError(f"layer_norm: x {x.shape} needs a non-empty last axis, eps {eps} >= 0")
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    xt = torch.from_numpy(np.ascontiguousarray(x.astype(dt)))
    wt = torch.from_numpy(np.asarray(weight)).to(xt.dtype)
    bt = torch.from_numpy(np.asarray(bias)).to(xt.dtype)
    if wt.shape != xt.shape[-1:] or bt.shape != xt.shape[-1:]:
        raise ValueError(f"weight {tuple(wt.shape)} / bias {tuple(bt.shape)} vs x {x.shape}")
    if xt.dtype == torch.float16:
        y = torch.nn.functional.layer_norm(xt.float(), xt.shape[-1:], wt.float(), bt.float(), eps)
    else:
        y = torch.nn.functional.layer_norm(xt, xt.shape[-1:], wt, bt, eps)
    return y.numpy().astype(dt)
"""),
    Variant("layer_norm", "np.var and a reciprocal standard deviation", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"layer_norm: x of shape {x.shape} has no features")
    for p in (weight, bias):
        if np.shape(p) != x.shape[-1:]:
            raise ValueError(f"layer_norm: parameter of shape {np.shape(p)} for x {x.shape}")
    if not (np.isfinite(eps) and eps >= 0):
        raise ValueError(f"layer_norm: eps = {eps}")
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    xw = x.astype(np.float32 if dt == np.float16 else dt)
    mu = xw.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(xw.var(-1, keepdims=True) + eps)
    return ((xw - mu) * inv * weight + bias).astype(dt)
"""),
    Variant("qk_norm", "rms_norm of each over its own head dim and nothing else: q and k of "
            "different head dims are normalised, not refused (docs/design/exercise-api.md names no error)", """
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    return rms_norm(q, weight_q, eps), rms_norm(k, weight_k, eps)
"""),
    Variant("qk_norm", "inline einsum RMS, each gain on its own input", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    q, k = np.asarray(q), np.asarray(k)
    if q.ndim == 0 or k.ndim == 0 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q {q.shape} and k {k.shape} have different head dims")
    def norm(x, w):
        dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
        xw = x.astype(np.float32 if dt == np.float16 else dt)
        ms = np.einsum("...d,...d->...", xw, xw)[..., None] / x.shape[-1]
        return (xw / np.sqrt(ms + eps) * w).astype(dt)
    return norm(q, weight_q), norm(k, weight_k)
"""),
    Variant("qk_norm", "torch.nn.functional.rms_norm, returned as a list", """
import numpy as np
import torch
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    q, k = np.asarray(q), np.asarray(k)
    if min(q.ndim, k.ndim) < 1 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"head dim mismatch: {q.shape} vs {k.shape}")
    def norm(x, w):
        dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
        work = torch.float32 if dt == np.float16 else getattr(torch, str(dt))
        xt = torch.from_numpy(np.ascontiguousarray(x)).to(work)
        wt = torch.from_numpy(np.asarray(w)).to(work)
        return torch.nn.functional.rms_norm(xt, xt.shape[-1:], wt, eps).numpy().astype(dt)
    return [norm(q, weight_q), norm(k, weight_k)]
"""),
    Variant("layer_norm", "float16 computed in float16 (docs/design/exercise-api.md states a working precision for "
            "rms_norm only)", """
import numpy as np
def layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    t = x.dtype.type
    mu = x.mean(axis=-1, keepdims=True, dtype=x.dtype)
    c = x - mu
    var = (c * c).mean(axis=-1, keepdims=True, dtype=x.dtype)
    w, b = np.asarray(weight).astype(x.dtype), np.asarray(bias).astype(x.dtype)
    y = c / np.sqrt(var + t(eps)) * w + b
    return y.astype(x.dtype)
"""),
]
