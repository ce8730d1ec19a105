"""Alternative correct implementations of topic 5: each must get full marks on the whole topic."""

from __future__ import annotations

from tests.banks import Variant

BANK: list[Variant] = [
    Variant("causal_mask", "tril of a ones matrix with the diagonal offset n_k − n_q", """
def causal_mask(n_q, n_k, device=None):
    if not (isinstance(n_q, int) and isinstance(n_k, int)) or min(n_q, n_k) < 1:
        raise ValueError(f"sizes must be positive integers: n_q={n_q}, n_k={n_k}")
    if n_q > n_k:
        raise ValueError(f"{n_q} queries cannot be the last positions of {n_k} keys")
    return torch.ones(n_q, n_k, dtype=torch.bool, device=device).tril(diagonal=n_k - n_q)
"""),
    Variant("causal_mask", "the complement of a strict upper triangle (triu + logical_not)", """
def causal_mask(n_q, n_k, device=None):
    if type(n_q) is not int or type(n_k) is not int or n_q <= 0 or n_k <= 0 or n_q > n_k:
        raise ValueError(f"causal_mask({n_q}, {n_k}): need 1 <= n_q <= n_k")
    future = torch.ones(n_q, n_k, dtype=torch.bool, device=device).triu(diagonal=n_k - n_q + 1)
    return future.logical_not()
"""),
    Variant("scaled_dot_product_attention", "only docs/design/exercise-api.md's shape checks, their messages "
            "quoting torch's own torch.Size([...]) spelling, then the reference's maths", """
_sdpa_reference = scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if min(q.dim(), k.dim(), v.dim()) < 2:
        raise ValueError(f"q {q.shape}, k {k.shape} and v {v.shape} need (..., len, dim)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q {q.shape} and k {k.shape} differ in their last dim")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k {k.shape} and v {v.shape} hold different numbers of keys")
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(f"q {q.shape}, k {k.shape} and v {v.shape}: batch axes clash") from None
    if mask is not None:
        scores = torch.Size((*lead, q.shape[-2], k.shape[-2]))
        try:
            fits = torch.broadcast_shapes(mask.shape, scores) == scores
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"mask {mask.shape} does not broadcast to the scores {scores}")
    return _sdpa_reference(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
"""),
    Variant("scaled_dot_product_attention", "einsum, an additive -inf mask, softmax in float32 "
            "then NaN rows zeroed with nan_to_num, weighted sum in the input dtype", """
import math as _m
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    if min(q.dim(), k.dim(), v.dim()) < 2 or not all(t.is_floating_point() for t in (q, k, v)):
        raise ValueError(f"need float (..., len, dim) tensors, got q {tuple(q.shape)}, "
                         f"k {tuple(k.shape)}, v {tuple(v.shape)}")
    if q.shape[-1] != k.shape[-1] or q.shape[-1] == 0:
        raise ValueError(f"q {tuple(q.shape)} and k {tuple(k.shape)} disagree on E")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k {tuple(k.shape)} and v {tuple(v.shape)} disagree on S")
    L, S = q.shape[-2], k.shape[-2]
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(f"batch axes of q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)} clash") from None
    if mask is not None and (mask.dim() > len(lead) + 2 or any(
            m not in (1, n) for m, n in zip(mask.shape[::-1], (S, L, *lead[::-1])))):
        raise ValueError(f"mask {tuple(mask.shape)} does not fit scores {(*lead, L, S)}")
    half = q.dtype in (torch.float16, torch.bfloat16)
    acc = torch.float32 if half else q.dtype
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.einsum("...le,...se->...ls", q.to(acc), k.to(acc)) * scale
    bias = torch.zeros(L, S, dtype=acc, device=q.device)
    if is_causal:
        bias = bias.masked_fill(~causal_mask(L, S, device=q.device), float("-inf"))
    if mask is not None:
        if mask.dtype == torch.bool:
            bias = bias.masked_fill(~mask, float("-inf"))
        else:
            bias = bias + mask.to(acc)
    p = torch.softmax(s + bias, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)  # rows with every key hidden: 0/0
    return torch.einsum("...ls,...sd->...ld", p.to(v.dtype), v)
"""),
    Variant("scaled_dot_product_attention", "log-sum-exp by hand with a finite stand-in max, "
            "torch.where for dead rows, matmul in float32", """
def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, scale=None):
    for t in (q, k, v):
        if t.dim() < 2 or not t.dtype.is_floating_point:
            raise ValueError(f"need float (..., len, dim) tensors, got {tuple(t.shape)}")
    if k.shape[-1] != q.shape[-1] or q.shape[-1] < 1:
        raise ValueError(f"E mismatch: q {tuple(q.shape)} vs k {tuple(k.shape)}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"S mismatch: k {tuple(k.shape)} vs v {tuple(v.shape)}")
    shapes = (q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n = max(map(len, shapes))
    padded = [(1,) * (n - len(sh)) + tuple(sh) for sh in shapes]
    lead = tuple(max(col) for col in zip(*padded))
    if any(a not in (1, b) for sh in padded for a, b in zip(sh, lead)):
        raise ValueError(f"leading axes of q {tuple(q.shape)}, k {tuple(k.shape)} and "
                         f"v {tuple(v.shape)} do not broadcast")
    scores = (*lead, q.shape[-2], k.shape[-2])
    if mask is not None:
        ms = (1,) * (len(scores) - mask.dim()) + tuple(mask.shape)
        if len(ms) != len(scores) or any(a not in (1, b) for a, b in zip(ms, scores)):
            raise ValueError(f"mask {tuple(mask.shape)} cannot broadcast to scores {scores}")
    out_dtype = q.dtype
    w = torch.float32 if out_dtype in (torch.float16, torch.bfloat16) else out_dtype
    q, k, v = q.to(w), k.to(w), v.to(w)
    L, S = q.shape[-2], k.shape[-2]
    scale = scale if scale is not None else 1 / q.shape[-1] ** 0.5
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    ok = None
    if is_causal:
        ok = causal_mask(L, S, device=q.device)
    if mask is not None:
        if mask.dtype == torch.bool:
            ok = mask if ok is None else torch.logical_and(ok, mask)
        else:
            s = s + mask.to(w)
    if ok is not None:
        s = torch.where(ok, s, torch.full((), float("-inf"), dtype=w, device=q.device))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    z = e.sum(dim=-1, keepdim=True)
    p = torch.where(z > 0, e / torch.where(z > 0, z, torch.ones_like(z)), torch.zeros_like(e))
    return (p @ v).to(out_dtype)
"""),
    Variant("split_heads", "view + permute, different error message", """
def split_heads(x, n_heads):
    if x.dim() != 3:
        raise ValueError(f"expected (B, L, D), got {tuple(x.shape)}")
    B, L, D = x.shape
    if not isinstance(n_heads, int) or n_heads < 1 or D % n_heads != 0:
        raise ValueError(f"cannot split width {D} into {n_heads} equal heads")
    return x.contiguous().view(B, L, n_heads, D // n_heads).permute(0, 2, 1, 3)
"""),
    Variant("split_heads", "unflatten the last axis, then swap", """
def split_heads(x, n_heads):
    if x.ndim != 3 or type(n_heads) is not int or n_heads <= 0:
        raise ValueError(f"need a 3-D x and a positive integer n_heads, got x {tuple(x.shape)} "
                         f"and {n_heads!r}")
    if x.shape[-1] % n_heads:
        raise ValueError(f"{x.shape[-1]} % {n_heads} != 0 (x {tuple(x.shape)})")
    return x.unflatten(-1, (n_heads, x.shape[-1] // n_heads)).transpose(1, 2)
"""),
    Variant("merge_heads", "permute + flatten", """
def merge_heads(x):
    if x.dim() != 4:
        raise ValueError(f"merge_heads wants (B, h, L, d_h), got {tuple(x.shape)}")
    return x.permute(0, 2, 1, 3).flatten(start_dim=2)
"""),
    Variant("merge_heads", "concatenate the heads along the features (a loop over heads)", """
def merge_heads(x):
    if len(x.shape) != 4:
        raise ValueError(f"expected 4 axes, got x of shape {tuple(x.shape)}")
    return torch.cat(x.unbind(dim=1), dim=-1)
"""),
    Variant("MultiHeadAttention", "a loop over heads with per-head slices of the projections, "
            "mask[:, None] for a 3-D mask", """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if not (type(d_model) is type(n_heads) is int) or d_model < 1 or n_heads < 1 \
                or d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be a positive multiple of n_heads={n_heads}")
        self.d_model, self.n_heads, self.d_h = d_model, n_heads, d_model // n_heads
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, name, nn.Linear(d_model, d_model, bias=bias))

    def forward(self, x, mask=None, is_causal=False):
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x {tuple(x.shape)} is not (B, L, {self.d_model})")
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        heads = []
        for j in range(self.n_heads):
            sl = slice(j * self.d_h, (j + 1) * self.d_h)
            m = mask
            if m is not None and m.dim() == 4:
                m = m[:, j if m.shape[1] > 1 else 0]
            heads.append(scaled_dot_product_attention(q[..., sl], k[..., sl], v[..., sl],
                                                      mask=m, is_causal=is_causal))
        return self.o_proj(torch.cat(heads, dim=-1))
"""),
]
