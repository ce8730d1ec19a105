"""Correct alternative implementations of topic 6: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("rotation_matrix", "from the complex number e^{iθ}", """
import numpy as np
def rotation_matrix(theta):
    z = np.exp(1j * float(theta))
    return np.array([[z.real, -z.imag], [z.imag, z.real]])
"""),
    Variant("rotation_matrix", "np.block of cos/sin with no input validation", """
import numpy as np
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.block([[c, -s], [s, c]]).astype(float).reshape(2, 2)
"""),
    Variant("rope_angles",
            "Hugging Face style: 1 / base^(arange(0, d, 2) / d), einsum outer product",
            """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2 != 0:
        raise ValueError(f"rope_angles: rotary_dim must be even, got {rotary_dim}")
    inv_freq = 1.0 / (base ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim))
    return np.einsum("n,f->nf", np.asarray(positions, dtype=np.float64), inv_freq)
"""),
    Variant("rope_angles", "exp/log form of the frequencies", """
import numpy as np
def rope_angles(positions, rotary_dim, base=10000.0):
    if rotary_dim % 2 == 1:
        raise ValueError("odd rotary_dim: " + str(rotary_dim))
    i = np.arange(rotary_dim // 2)
    freq = np.exp(-2.0 * i / rotary_dim * np.log(base))
    return np.asarray(positions, dtype=np.float64)[:, None] * freq[None, :]
"""),
    Variant("apply_rope", "complex numbers: (x1 + i x2) · e^{iθ}", """
import numpy as np
def apply_rope(x, positions, rotary_dim=None, base=10000.0):
    x = np.asarray(x)
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
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"weight {weight.shape} does not match x {x.shape}")
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    h = x.astype(np.float32 if dt == np.float16 else dt)
    h = h * (1.0 / np.sqrt(np.mean(h ** 2, axis=-1, keepdims=True) + eps))
    return (weight.astype(dt) * h.astype(dt)).astype(dt)
"""),
    Variant("rms_norm", "np.linalg.norm / sqrt(d), torch-free", """
import numpy as np
def rms_norm(x, weight, eps=1e-6):
    x = np.asarray(x)
    if np.shape(weight) != x.shape[-1:]:
        raise ValueError("rms_norm: weight shape mismatch")
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
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    xw = x.astype(np.float32 if dt == np.float16 else dt)
    mu = xw.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(xw.var(-1, keepdims=True) + eps)
    return ((xw - mu) * inv * weight + bias).astype(dt)
"""),
    Variant("qk_norm", "inline einsum RMS, each gain on its own input", """
import numpy as np
def qk_norm(q, k, weight_q, weight_k, eps=1e-6):
    q, k = np.asarray(q), np.asarray(k)
    if q.shape[-1] != k.shape[-1]:
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
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"head dim mismatch: {q.shape} vs {k.shape}")
    def norm(x, w):
        dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
        work = torch.float32 if dt == np.float16 else getattr(torch, str(dt))
        xt = torch.from_numpy(np.ascontiguousarray(x)).to(work)
        wt = torch.from_numpy(np.asarray(w)).to(work)
        return torch.nn.functional.rms_norm(xt, xt.shape[-1:], wt, eps).numpy().astype(dt)
    return [norm(q, weight_q), norm(k, weight_k)]
"""),
]
