"""Plausible wrong implementations of topic 5: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

_USES_MASK = ("scaled_dot_product_attention", "MultiHeadAttention")
_USES_HEADS = ("MultiHeadAttention",)

BANK: list[Variant] = [
    # ------------------------------------------------------------------ causal_mask
    Variant("causal_mask", "top-left alignment (PyTorch's is_causal when L ≠ S)", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    return torch.ones(n_q, n_k, dtype=torch.bool, device=device).tril()
""", also=_USES_MASK),
    Variant("causal_mask", "strict: a query may not see its own position", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    q = torch.arange(n_k - n_q, n_k, device=device)
    return torch.arange(n_k, device=device)[None, :] < q[:, None]
""", also=_USES_MASK),
    Variant("causal_mask", "inverted: True marks the forbidden keys", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    q = torch.arange(n_k - n_q, n_k, device=device)
    return torch.arange(n_k, device=device)[None, :] > q[:, None]
""", also=_USES_MASK),
    Variant("causal_mask", "off by one: queries placed one position too early", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    q = torch.arange(n_k - n_q - 1, n_k - 1, device=device)
    return torch.arange(n_k, device=device)[None, :] <= q[:, None]
""", also=_USES_MASK),
    Variant("causal_mask", "ignores device: always built on the CPU", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)
""", also=_USES_MASK),
    Variant("causal_mask", "a Python loop filling one row at a time", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    m = torch.zeros(n_q, n_k, dtype=torch.bool, device=device)
    for i in range(n_q):
        m[i, : n_k - n_q + i + 1] = True
    return m
""", also=_USES_MASK),
    Variant("causal_mask", "no check of n_q > n_k or of non-positive sizes", """
def causal_mask(n_q, n_k, device=None):
    q = torch.arange(n_k - n_q, n_k, device=device)
    return torch.arange(max(n_k, 0), device=device)[None, :] <= q[:, None]
""", also=_USES_MASK),
    Variant("causal_mask", "returns a float mask of ones and zeros instead of bool", """
def causal_mask(n_q, n_k, device=None):
    if n_q < 1 or n_k < 1 or n_q > n_k:
        raise ValueError(f"bad n_q={n_q}, n_k={n_k}")
    return torch.ones(n_q, n_k, device=device).tril(diagonal=n_k - n_q)
""", also=_USES_MASK),
    # ------------------------------------------------------------- scaled_dot_product_attention
    Variant("scaled_dot_product_attention", "forgets the 1/√E scale", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=1.0 if scale is None else scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "scales by the values' width √Ev instead of √E", """
import math as _m
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    s = 1.0 / _m.sqrt(v.shape[-1]) if scale is None else scale
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=s)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "fully masked rows come out as NaN", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    dt = q.dtype
    w = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    L, S = q.shape[-2], k.shape[-2]
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * (scale or 1 / _m.sqrt(q.shape[-1]))
    if is_causal:
        s = s.masked_fill(~causal_mask(L, S, device=q.device), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask.to(w)
    return (torch.softmax(s, -1) @ v.to(w)).to(dt)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "fully masked rows zeroed only where a bool or "
            "causal mask hid them: a float mask's all -inf row comes out as NaN", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    dt = q.dtype
    w = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    L, S = q.shape[-2], k.shape[-2]
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * (1 / _m.sqrt(q.shape[-1]) if scale is None
                                                 else scale)
    allowed = causal_mask(L, S, device=q.device) if is_causal else None
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        s = s + mask.to(w)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    p = torch.softmax(s, -1)
    if allowed is not None:
        p = p.masked_fill((~allowed).all(-1, keepdim=True), 0.0)
    return (p @ v.to(w)).to(dt)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "bool mask read the other way (True = hide)", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if mask is not None and mask.dtype == torch.bool:
        mask = ~mask
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "builds its causal mask top-left (torch.tril) "
            "instead of using causal_mask", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if is_causal:
        L, S = q.shape[-2], k.shape[-2]
        if L > S:
            raise ValueError("more queries than keys")
        tri = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        if mask is None:
            mask = tri
        elif mask.dtype == torch.bool:
            mask = mask & tri
        else:
            mask = mask.masked_fill(~tri, float("-inf"))
    return _sdpa_ok(q, k, v, mask=mask, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "computes in the input dtype: float16 scores "
            "overflow", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    L, S = q.shape[-2], k.shape[-2]
    s = (q @ k.transpose(-2, -1)) * (scale or 1 / _m.sqrt(q.shape[-1]))
    allowed = causal_mask(L, S, device=q.device) if is_causal else None
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        s = s + mask.to(s.dtype)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(s, -1)
    w = w.masked_fill(torch.isneginf(s).all(-1, keepdim=True), 0.0)
    return w @ v
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "upcasts float16 only: bfloat16 scores stay in "
            "bfloat16 (it cannot overflow, but it rounds)", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.dtype == torch.bfloat16:
        s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5 if scale is None else scale)
        allowed = causal_mask(q.shape[-2], k.shape[-2], device=q.device) if is_causal else None
        if mask is not None and mask.dtype == torch.bool:
            allowed = mask if allowed is None else allowed & mask
        elif mask is not None:
            s = s + mask.to(s.dtype)
        if allowed is not None:
            s = s.masked_fill(~allowed, float("-inf"))
        p = torch.softmax(s.float(), -1).masked_fill(torch.isneginf(s).all(-1, keepdim=True), 0.0)
        return (p @ v.float()).to(torch.bfloat16)
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "a Python loop over query positions", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        cm = causal_mask(L, S, device=q.device)
        mask = cm if mask is None else (mask & cm if mask.dtype == torch.bool
                                        else mask.masked_fill(~cm, float("-inf")))
    rows = []
    for i in range(L):
        m = None
        if mask is not None:
            m = mask.expand(*mask.shape[:-2], L, S)[..., i:i + 1, :] if mask.dim() >= 2 else mask
        rows.append(_sdpa_ok(q[..., i:i + 1, :], k, v, mask=m, scale=scale or q.shape[-1] ** -0.5))
    return torch.cat(rows, dim=-2)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "creates the dead-row fill on the CPU "
            "(torch.zeros without device)", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    dt = q.dtype
    w = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    L, S = q.shape[-2], k.shape[-2]
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * (scale or 1 / _m.sqrt(q.shape[-1]))
    allowed = causal_mask(L, S, device=q.device) if is_causal else None
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        s = s + mask.to(w)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    p = torch.softmax(s, -1)
    p = torch.where(torch.isnan(p), torch.zeros(p.shape, dtype=w), p)
    return (p @ v.to(w)).to(dt)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "reads the data back to decide about dead rows "
            "(.any().item())", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    out = _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
    if torch.isnan(out).any().item():
        out = torch.nan_to_num(out)
    return out
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "softmax by hand without subtracting the max", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    dt = q.dtype
    w = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    L, S = q.shape[-2], k.shape[-2]
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * (scale or 1 / _m.sqrt(q.shape[-1]))
    allowed = causal_mask(L, S, device=q.device) if is_causal else None
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        s = s + mask.to(w)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    e = torch.exp(s)
    tot = e.sum(-1, keepdim=True)
    p = torch.where(tot > 0, e / tot, torch.zeros_like(e))
    return (p @ v.to(w)).to(dt)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "returns float32 for float16/bfloat16 inputs", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if q.dtype in (torch.float16, torch.bfloat16):
        q, k, v = q.float(), k.float(), v.float()
        mask = mask.float() if mask is not None and mask.is_floating_point() else mask
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "is_causal replaces the mask instead of combining", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if is_causal:
        mask = None
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "a float mask is treated as a bool mask", """
_sdpa_ok = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if mask is not None and mask.is_floating_point():
        mask = mask != float("-inf")
    return _sdpa_ok(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
""", also=_USES_HEADS),
    Variant("scaled_dot_product_attention", "no shape checks: torch's RuntimeError leaks out", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    dt = q.dtype
    w = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    L, S = q.shape[-2], k.shape[-2]
    s = (q.to(w) @ k.to(w).transpose(-2, -1)) * (scale or 1 / _m.sqrt(q.shape[-1]))
    allowed = causal_mask(L, S, device=q.device) if is_causal else None
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask
    elif mask is not None:
        s = s + mask.to(w)
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    p = torch.softmax(s, -1).masked_fill(torch.isneginf(s).all(-1, keepdim=True), 0.0)
    return (p @ v.to(w)).to(dt)
""", also=_USES_HEADS),
    # ------------------------------------------------------------------ split_heads
    Variant("split_heads", "reshapes straight to (B, h, L, d_h) without the transpose", """
def split_heads(x, n_heads):
    B, L, D = x.shape
    if D % n_heads:
        raise ValueError(f"D = {D} is not divisible by {n_heads}")
    return x.reshape(B, n_heads, L, D // n_heads)
""", also=_USES_HEADS),
    Variant("split_heads", "interleaved heads: head j takes every h-th feature", """
def split_heads(x, n_heads):
    B, L, D = x.shape
    if D % n_heads:
        raise ValueError(f"D = {D} is not divisible by {n_heads}")
    return x.reshape(B, L, D // n_heads, n_heads).permute(0, 3, 1, 2)
""", also=_USES_HEADS),
    Variant("split_heads", "no divisibility check (a RuntimeError from reshape)", """
def split_heads(x, n_heads):
    B, L, D = x.shape
    return x.reshape(B, L, n_heads, D // n_heads).transpose(1, 2)
""", also=_USES_HEADS),
    Variant("split_heads", "moves the wrong axes: (B, h, d_h, L)", """
def split_heads(x, n_heads):
    B, L, D = x.shape
    if D % n_heads:
        raise ValueError(f"D = {D} is not divisible by {n_heads}")
    return x.reshape(B, L, n_heads, D // n_heads).permute(0, 2, 3, 1)
""", also=_USES_HEADS),
    Variant("split_heads", "casts to float32 on the way", """
def split_heads(x, n_heads):
    B, L, D = x.shape
    if D % n_heads:
        raise ValueError(f"D = {D} is not divisible by {n_heads}")
    return x.float().reshape(B, L, n_heads, D // n_heads).transpose(1, 2)
""", also=_USES_HEADS),
    # ------------------------------------------------------------------ merge_heads
    Variant("merge_heads", "reshapes to (B, L, D) without undoing the transpose", """
def merge_heads(x):
    B, h, L, d_h = x.shape
    return x.reshape(B, L, h * d_h)
""", also=_USES_HEADS),
    Variant("merge_heads", "transpose then .view: fails on the non-contiguous result", """
def merge_heads(x):
    B, h, L, d_h = x.shape
    return x.transpose(1, 2).view(B, L, h * d_h)
""", also=_USES_HEADS),
    Variant("merge_heads", "features in d_h-major order (head index fastest)", """
def merge_heads(x):
    B, h, L, d_h = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, L, h * d_h)
""", also=_USES_HEADS),
    Variant("merge_heads", "moves the axes back but forgets to merge them", """
def merge_heads(x):
    return x.transpose(1, 2).contiguous()
""", also=_USES_HEADS),
    # ------------------------------------------------------------------ MultiHeadAttention
    Variant("MultiHeadAttention", "forgets the output projection", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.v_proj(x), self.n_heads)
        return merge_heads(scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal))
"""),
    Variant("MultiHeadAttention", "a (B, L, S) mask gains its head axis in front: (1, B, L, S)", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(0)
        return super().forward(x, mask=mask, is_causal=is_causal)
"""),
    Variant("MultiHeadAttention", "ignores is_causal", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        return super().forward(x, mask=mask, is_causal=False)
"""),
    Variant("MultiHeadAttention", "scales the scores by 1/√d_model instead of 1/√d_h", """
import math as _m
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.v_proj(x), self.n_heads)
        y = scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal,
                                         scale=1 / _m.sqrt(self.d_model))
        return self.o_proj(merge_heads(y))
"""),
    Variant("MultiHeadAttention", "values projected with k_proj", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.k_proj(x), self.n_heads)
        y = scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal)
        return self.o_proj(merge_heads(y))
"""),
    Variant("MultiHeadAttention", "one head of full width, whatever n_heads says", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        y = scaled_dot_product_attention(self.q_proj(x), self.k_proj(x), self.v_proj(x),
                                         mask=mask, is_causal=is_causal)
        return self.o_proj(y)
"""),
    Variant("MultiHeadAttention", "no check that n_heads divides d_model", """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.o_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, is_causal=False):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_heads)
        v = split_heads(self.v_proj(x), self.n_heads)
        y = scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal)
        return self.o_proj(merge_heads(y))
"""),
    Variant("MultiHeadAttention", "casts the input to float32 whatever the module's dtype", """
class MultiHeadAttention(MultiHeadAttention):
    def forward(self, x, mask=None, is_causal=False):
        self.float()
        return super().forward(x.float(), mask=mask, is_causal=is_causal)
"""),
]
