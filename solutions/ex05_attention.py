"""Topic 5 — Attention on any device.

You build scaled dot-product attention the way production code does: two batched matmuls
(``Q Kᵀ`` and ``A V``) with no loop over positions, boolean or additive masks, the causal mask
aligned bottom-right so that a KV cache with fewer queries than keys works, rows whose every key
is masked coming out as zeros instead of NaN, and float32 scores and softmax for float16 and
bfloat16 inputs. Then you split ``d_model`` into heads, attend, merge, and wrap it all in a
``MultiHeadAttention`` module. Everything runs unchanged on the CPU, a GPU or PyTorch's ``meta``
device, because every tensor is created on the inputs' device and nothing reads data back.

Lesson: docs/lessons/05-attention.md
"""

from __future__ import annotations

import math
from numbers import Integral

import torch
from torch import nn

__all__ = [
    "MultiHeadAttention",
    "causal_mask",
    "merge_heads",
    "scaled_dot_product_attention",
    "split_heads",
]


def causal_mask(n_q: int, n_k: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Boolean causal mask for ``n_q`` queries over ``n_k`` keys, aligned bottom-right.

    The queries are the *last* ``n_q`` of ``n_k`` positions (a KV cache during generation
    holds the earlier keys): query i sits at absolute position ``n_k − n_q + i`` and may attend
    to keys ``j <= n_k − n_q + i``. With ``n_q == n_k`` this is the usual lower-triangular
    mask. PyTorch's ``is_causal=True`` aligns the diagonal top-left instead (query i sees keys
    ``<= i``), which is wrong for a KV cache when ``n_q < n_k``.

    Args:
        n_q: number of queries L, an integer ``>= 1``.
        n_k: number of keys S, an integer with ``n_k >= n_q``.
        device: where to create the mask (``None``: PyTorch's default device).

    Returns:
        Bool tensor of shape ``(n_q, n_k)``; True means "may attend". Every row has at least
        one True (its own position), so a causal mask alone never masks a whole row.

    Raises:
        ValueError: if n_q or n_k is not an integer ``>= 1``, or ``n_q > n_k``.

    Source:
        Vaswani et al. 2017, §3.2.3 (masking out illegal connections); lesson section
        "Masks and the KV cache".

    Example:
        Two new tokens attend over a cache of four (the last two rows of the 4×4 triangle):

        >>> causal_mask(2, 4)
        tensor([[ True,  True,  True, False],
                [ True,  True,  True,  True]])
        >>> causal_mask(3, 3).int()
        tensor([[1, 0, 0],
                [1, 1, 0],
                [1, 1, 1]], dtype=torch.int32)
    """
    ### BEGIN SOLUTION
    for name, n in (("n_q", n_q), ("n_k", n_k)):
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"causal_mask: {name} must be an integer >= 1, got {n!r}")
    if n_q > n_k:
        raise ValueError(f"causal_mask: needs n_q <= n_k (queries are the last n_q of n_k "
                         f"positions), got n_q={n_q}, n_k={n_k}")
    q_pos = torch.arange(n_k - n_q, n_k, device=device)  # (n_q,) absolute query positions
    k_pos = torch.arange(n_k, device=device)  # (n_k,)
    return k_pos[None, :] <= q_pos[:, None]  # (n_q, n_k)
    ### END SOLUTION


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> torch.Tensor:
    """``softmax(q kᵀ · scale + mask) v`` over the last two axes, batched over the rest.

    Leading (batch, head) axes of q, k and v broadcast as in ``torch.matmul``, so a key/value
    tensor with a head axis of size 1 can serve every query head. Computation: scores
    ``q kᵀ · scale`` of shape ``(..., L, S)``; a boolean mask (and the causal mask) sets the
    forbidden scores to −inf, a float mask is added; softmax over the keys; weights times v.
    A query row whose every key is masked (every score −inf) gets all-zero weights and a zero
    output, chosen with ``torch.where``-style masking rather than a Python ``if`` so that no
    data is read back (it works on the ``meta`` device). float16 and bfloat16 inputs are cast
    to float32 for the scores, softmax and weighted sum (an fp16 ``q kᵀ`` overflows past 65504)
    and the result is cast back; other float dtypes are used as they are.

    Args:
        q: queries, shape ``(..., L, E)``, floating point.
        k: keys, shape ``(..., S, E)``, same E as q.
        v: values, shape ``(..., S, Ev)``, same S as k.
        mask: optional, broadcastable to ``(..., L, S)`` without enlarging it; bool (True =
            may attend) or floating point (added to the scores; use −inf to forbid).
        is_causal: if True, also apply ``causal_mask(L, S)`` (bottom-right aligned; needs
            ``L <= S``); combines with ``mask`` (both must allow a pair).
        scale: factor on the scores; default ``1 / sqrt(E)``.

    Returns:
        Tensor of shape ``(..., L, Ev)`` (leading axes broadcast from q, k and v), in the
        promoted dtype of q, k and v, on their device.

    Raises:
        ValueError: if q, k or v has fewer than 2 dimensions or is not floating point; if
            E is 0 or differs between q and k; if S differs between k and v; if the leading
            axes do not broadcast; if the mask is neither bool nor floating point or is not
            broadcastable to ``(..., L, S)``; if ``is_causal`` and ``L > S``.

    Source:
        Vaswani et al. 2017, eq. (1) (scaled dot-product attention); lesson section
        "Scaled dot-product attention".

    Example:
        cat = [0.8, 0.3] and dog = [0.6, 0.7] as queries and keys; with ``v = I`` the output
        rows are the attention weights. Causally, cat sees only itself:

        >>> x = torch.tensor([[0.8, 0.3], [0.6, 0.7]])  # (L, E): cat, dog
        >>> scaled_dot_product_attention(x, x, torch.eye(2), is_causal=True).round(decimals=4)
        tensor([[1.0000, 0.0000],
                [0.4717, 0.5283]])
        >>> no_keys = torch.tensor([[False, False], [True, True]])  # cat's row fully masked
        >>> scaled_dot_product_attention(x, x, torch.eye(2), mask=no_keys).round(decimals=4)
        tensor([[0.0000, 0.0000],
                [0.4717, 0.5283]])
    """
    ### BEGIN SOLUTION
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() < 2:
            raise ValueError(f"scaled_dot_product_attention: {name} needs shape (..., len, dim), "
                             f"got {tuple(t.shape)}")
        if not t.is_floating_point():
            raise ValueError(f"scaled_dot_product_attention: {name} must be floating point, "
                             f"got {t.dtype}")
    L, E = q.shape[-2], q.shape[-1]
    S = k.shape[-2]
    if E == 0 or k.shape[-1] != E:
        raise ValueError(f"scaled_dot_product_attention: q (..., L, E) and k (..., S, E) need "
                         f"the same E >= 1, got q {tuple(q.shape)} and k {tuple(k.shape)}")
    if v.shape[-2] != S:
        raise ValueError(f"scaled_dot_product_attention: k (..., S, E) and v (..., S, Ev) need "
                         f"the same S, got k {tuple(k.shape)} and v {tuple(v.shape)}")
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
        torch.broadcast_shapes(batch, v.shape[:-2])
    except RuntimeError as err:
        raise ValueError(f"scaled_dot_product_attention: leading axes of q {tuple(q.shape)}, "
                         f"k {tuple(k.shape)} and v {tuple(v.shape)} do not broadcast") from err
    score_shape = (*batch, L, S)
    if mask is not None:
        if mask.dtype != torch.bool and not mask.is_floating_point():
            raise ValueError(f"scaled_dot_product_attention: mask must be bool (True = attend) "
                             f"or floating point (added to the scores), got {mask.dtype}")
        try:
            fits = torch.broadcast_shapes(mask.shape, score_shape) == score_shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"scaled_dot_product_attention: mask of shape {tuple(mask.shape)} "
                             f"is not broadcastable to the scores' shape {score_shape}")

    out_dtype = torch.promote_types(torch.promote_types(q.dtype, k.dtype), v.dtype)
    # fp16/bf16: q kᵀ can overflow fp16 and softmax sums lose digits, so work in float32
    work = torch.float32 if out_dtype in (torch.float16, torch.bfloat16) else out_dtype
    if scale is None:
        scale = 1.0 / math.sqrt(E)

    scores = (q.to(work) @ k.to(work).transpose(-2, -1)) * scale  # (..., L, S)
    allowed = causal_mask(L, S, device=q.device) if is_causal else None  # (L, S)
    if mask is not None and mask.dtype == torch.bool:
        allowed = mask if allowed is None else allowed & mask  # broadcastable to (..., L, S)
    elif mask is not None:
        scores = scores + mask.to(work)  # (..., L, S) additive mask, e.g. ALiBi or -inf padding
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))  # (..., L, S)

    weights = torch.softmax(scores, dim=-1)  # (..., L, S) NaN on rows with no allowed key
    # a row with every key masked has no defined softmax; give it zero weight (zero output),
    # decided per element with masked_fill, never with a Python `if` that would read data
    dead = torch.isneginf(scores).all(dim=-1, keepdim=True)  # (..., L, 1)
    weights = weights.masked_fill(dead, 0.0)  # (..., L, S)
    out = weights @ v.to(work)  # (..., L, Ev)
    return out.to(out_dtype)
    ### END SOLUTION


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Split the model width into heads: ``(B, L, D) → (B, n_heads, L, D // n_heads)``.

    Head h owns the contiguous slice ``x[..., h·d_h:(h+1)·d_h]`` of each token, the layout of
    PyTorch's ``nn.MultiheadAttention`` and of GPT-2.

    Args:
        x: tensor of shape ``(B, L, D)``, any dtype and device.
        n_heads: number of heads h, an integer ``>= 1`` dividing D.

    Returns:
        A view of shape ``(B, n_heads, L, d_h)`` with ``d_h = D // n_heads`` (no copy; not
        contiguous).

    Raises:
        ValueError: if x is not 3-D, n_heads is not a positive integer, or ``D % n_heads``.

    Source:
        Vaswani et al. 2017, §3.2.2 (multi-head attention); lesson section "Heads".

    Example:
        GPT-2 small: d_model 768 split into 12 heads of 64.

        >>> x = torch.zeros(2, 10, 768)  # (B, L, d_model)
        >>> split_heads(x, 12).shape
        torch.Size([2, 12, 10, 64])
        >>> split_heads(torch.arange(6.0).reshape(1, 1, 6), 2)  # head 0 gets dims 0-2
        tensor([[[[0., 1., 2.]],
        <BLANKLINE>
                 [[3., 4., 5.]]]])
    """
    ### BEGIN SOLUTION
    if x.dim() != 3:
        raise ValueError(f"split_heads: x must have shape (B, L, D), got {tuple(x.shape)}")
    if isinstance(n_heads, bool) or not isinstance(n_heads, Integral) or n_heads < 1:
        raise ValueError(f"split_heads: n_heads must be an integer >= 1, got {n_heads!r}")
    B, L, D = x.shape
    if D % n_heads:
        raise ValueError(f"split_heads: D = {D} (x of shape {tuple(x.shape)}) is not divisible "
                         f"by n_heads = {n_heads}")
    d_h = D // n_heads
    return x.reshape(B, L, n_heads, d_h).transpose(1, 2)  # (B, h, L, d_h)
    ### END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads back: ``(B, n_heads, L, d_h) → (B, L, n_heads · d_h)``.

    The inverse of ``split_heads``: ``merge_heads(split_heads(x, h))`` equals ``x``.

    Args:
        x: tensor of shape ``(B, n_heads, L, d_h)``, any dtype and device.

    Returns:
        Tensor of shape ``(B, L, n_heads · d_h)`` (a copy when x is not contiguous in the
        needed order, as after ``split_heads``).

    Raises:
        ValueError: if x is not 4-D.

    Source:
        Vaswani et al. 2017, §3.2.2 (``Concat(head_1, …, head_h)``); lesson section "Heads".

    Example:
        >>> x = torch.randn(2, 10, 768)  # (B, L, d_model)
        >>> merge_heads(split_heads(x, 12)).shape
        torch.Size([2, 10, 768])
        >>> torch.equal(merge_heads(split_heads(x, 12)), x)
        True
    """
    ### BEGIN SOLUTION
    if x.dim() != 4:
        raise ValueError(f"merge_heads: x must have shape (B, n_heads, L, d_h), "
                         f"got {tuple(x.shape)}")
    B, h, L, d_h = x.shape
    return x.transpose(1, 2).reshape(B, L, h * d_h)  # (B, L, h·d_h)
    ### END SOLUTION


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with separate Q, K, V and output projections.

    Each projection is an ``nn.Linear(d_model, d_model)``; PyTorch stores its weight as
    ``(d_out, d_in)`` and computes ``x @ Wᵀ + b``, the transpose of the lesson's ``x @ W``.

    Attributes:
        d_model: model width. n_heads: number of heads h. d_h: ``d_model // n_heads``.
        q_proj, k_proj, v_proj, o_proj: the four ``nn.Linear(d_model, d_model)`` layers.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True) -> None:
        """Create the four projections.

        The layers are created on PyTorch's default device and dtype; move the module with
        ``.to(device, dtype)`` or build it inside ``with torch.device("meta"):``.

        Args:
            d_model: model width, an integer ``>= 1``.
            n_heads: number of heads, an integer ``>= 1`` dividing d_model.
            bias: whether the four projections have a bias.

        Raises:
            ValueError: if d_model or n_heads is not a positive integer, or
                ``d_model % n_heads``.

        Source:
            Vaswani et al. 2017, §3.2.2; lesson section "Heads".

        Example:
            Four ``d_model × d_model`` projections with biases hold ``4 · (d_model² +
            d_model)`` parameters: 2,362,368 for a GPT-2-small layer (768 in 12 heads of 64).
            The same at d_model = 64 in 4 heads:

            >>> mha = MultiHeadAttention(64, 4)
            >>> mha.d_h
            16
            >>> sum(p.numel() for p in mha.parameters())  # 4 · (64² + 64)
            16640
        """
        ### BEGIN SOLUTION
        super().__init__()
        for name, n in (("d_model", d_model), ("n_heads", n_heads)):
            if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
                raise ValueError(f"MultiHeadAttention: {name} must be an integer >= 1, "
                                 f"got {n!r}")
        if d_model % n_heads:
            raise ValueError(f"MultiHeadAttention: d_model = {d_model} is not divisible by "
                             f"n_heads = {n_heads}")
        self.d_model = int(d_model)
        self.n_heads = int(n_heads)
        self.d_h = self.d_model // self.n_heads
        self.q_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.k_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.v_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.o_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        ### END SOLUTION

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        is_causal: bool = False,
    ) -> torch.Tensor:
        """Self-attention over the sequence: project, split, attend, merge, project.

        Args:
            x: input of shape ``(B, L, d_model)`` in the module's dtype, on its device.
            mask: optional bool (True = may attend) or float (added) mask broadcastable to
                ``(B, n_heads, L, L)``; a 3-D mask ``(B, L, L)`` is read as ``(B, 1, L, L)``,
                the same for every head (a 2-D ``(L, L)`` mask is shared by the whole batch).
            is_causal: apply the causal mask (combined with ``mask`` if both are given).

        Returns:
            Tensor of shape ``(B, L, d_model)``, same dtype and device as x.

        Raises:
            ValueError: if x is not ``(B, L, d_model)``, or the mask is not broadcastable
                (see ``scaled_dot_product_attention``).

        Source:
            Vaswani et al. 2017, §3.2.2 (``MultiHead(Q, K, V) = Concat(head_1, …, head_h)
            W^O``); lesson section "Heads".

        Example:
            >>> _ = torch.manual_seed(0)
            >>> mha = MultiHeadAttention(64, 4)
            >>> x = torch.randn(2, 10, 64)  # (B, L, d_model)
            >>> mha(x, is_causal=True).shape
            torch.Size([2, 10, 64])
            >>> meta = MultiHeadAttention(768, 12).to("meta")  # shapes only, no data
            >>> meta(torch.empty(1, 1024, 768, device="meta"), is_causal=True).device
            device(type='meta')
        """
        ### BEGIN SOLUTION
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"MultiHeadAttention: x must have shape (B, L, {self.d_model}), "
                             f"got {tuple(x.shape)}")
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)  # (B, 1, L, S): the same mask for every head
        q = split_heads(self.q_proj(x), self.n_heads)  # (B, h, L, d_h)
        k = split_heads(self.k_proj(x), self.n_heads)  # (B, h, L, d_h)
        v = split_heads(self.v_proj(x), self.n_heads)  # (B, h, L, d_h)
        y = scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal)  # (B,h,L,d_h)
        return self.o_proj(merge_heads(y))  # (B, L, d_model)
        ### END SOLUTION
