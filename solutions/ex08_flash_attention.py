"""Topic 8 — Attention as a GPU kernel: FlashAttention in Triton.

Plain attention writes the whole (L, S) grid of scores and probabilities to GPU main memory and
reads it back, so it spends its time moving bytes, not multiplying. FlashAttention keeps a block
of queries on chip while blocks of keys and values stream past, and folds them in with topic 3's
online softmax (a running max ``m``, a running sum ``l`` and a rescaled accumulator), so no
(L, S) tensor ever exists. You write it in Triton: first a row softmax (one program per row),
then the forward kernel (one program per block of queries), then the backward pass, which
rebuilds the probabilities from the saved log-sum-exp instead of storing them, and finally an
autograd function that joins the two.

Triton kernels run on CUDA tensors; on CPU tensors they run only through Triton's interpreter,
which must be switched on before ``triton`` is imported (``TRITON_INTERPRET=1`` in the
environment). That is how this module is graded on machines without a GPU.

Lesson: docs/lessons/08-flash-attention.md
"""

from __future__ import annotations

import math
import os
from numbers import Integral, Real

import torch
import triton
import triton.language as tl
from torch.autograd.function import FunctionCtx

__all__ = [
    "FlashAttention",
    "flash_attention_backward",
    "flash_attention_forward",
    "softmax_rows",
]


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    """Triton kernel: the softmax of one row of a contiguous ``(M, n_cols)`` matrix.

    Program ``r = tl.program_id(0)`` handles row r, so the grid is ``(M,)``. It loads the row's
    ``n_cols`` entries into ``BLOCK`` lanes (lanes past ``n_cols`` read ``-inf``, which adds
    nothing to the sum), subtracts the row maximum, exponentiates and divides by the sum, all in
    float32, and stores the row in ``y``'s dtype. A row holding only ``-inf`` stores zeros.

    Args:
        x_ptr: pointer to the input, row-major ``(M, n_cols)`` (row r starts at ``r · n_cols``),
            float32, float16 or bfloat16.
        y_ptr: pointer to the output, same layout and dtype as the input.
        n_cols: N, the length of a row.
        BLOCK: constexpr, a power of two ``>= n_cols`` (``tl.arange`` needs a power of two).
    """
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)  # (BLOCK,)
    inside = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=inside, other=float("-inf"))
    x = x.to(tl.float32)  # (BLOCK,) half-precision sums lose digits
    row_max = tl.max(x, axis=0)
    # an all -inf row: shift by 0 instead, so exp(-inf - 0) = 0 rather than exp(-inf + inf) = NaN
    row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
    e = tl.exp(x - row_max)  # (BLOCK,) every exponent <= 0, so nothing overflows
    total = tl.sum(e, axis=0)
    y = e / tl.where(total == 0.0, 1.0, total)  # an all -inf row: 0 / 1 = zeros
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=inside)
    ### END SOLUTION


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax ``y[r, j] = exp(x[r, j]) / Σ_k exp(x[r, k])`` by a Triton kernel.

    One Triton program per row (grid ``(M,)``); each loads its whole row into one block of
    ``BLOCK = next power of two >= N`` lanes, masks the lanes past N with ``-inf``, and works
    in float32 whatever the input dtype. A row whose every entry is ``-inf`` comes out as zeros,
    not NaN.

    Args:
        x: tensor of shape ``(M, N)``, float32, float16 or bfloat16, on a CUDA device or on the
            CPU (then Triton's interpreter must be on: ``TRITON_INTERPRET=1`` set before
            ``triton`` is imported).

    Returns:
        Tensor of shape ``(M, N)`` in x's dtype, on x's device; each row sums to 1 (or is all
        zeros for an all ``-inf`` row).

    Raises:
        ValueError: if x is not a 2-D tensor, its dtype is not float32/float16/bfloat16, N < 1,
            N > 2¹⁶ (a row must fit in one block), or it is on a device Triton cannot use.
        RuntimeError: for a CPU tensor while ``TRITON_INTERPRET`` is not ``1``.

    Source:
        Lesson 08, "A row softmax in Triton"; the max-subtraction trick of lesson 03; Tillet,
        Kung & Cox 2019, "Triton: an intermediate language and compiler for tiled neural
        network computations".

    Example:
        cat = [0.8, 0.3] as logits, and a fully masked row (CPU tensors: run with
        ``TRITON_INTERPRET=1``):

        >>> x = torch.tensor([[0.8, 0.3], [float("-inf"), float("-inf")]])  # (M, N)
        >>> softmax_rows(x)
        tensor([[0.6225, 0.3775],
                [0.0000, 0.0000]])
    """
    ### BEGIN SOLUTION
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"softmax_rows: x must be a 2-D tensor (M, N), got {shape}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"softmax_rows: x must be float32, float16 or bfloat16, got {x.dtype}")
    M, N = x.shape
    if not 1 <= N <= 2**16:
        raise ValueError(f"softmax_rows: rows must have 1 <= N <= 65536 entries (one block per "
                         f"row), got x of shape {tuple(x.shape)}")
    if x.device.type not in ("cuda", "cpu"):
        raise ValueError(f"softmax_rows: Triton runs on CUDA (or the CPU through its "
                         f"interpreter), got a tensor on {x.device}")
    if x.device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("softmax_rows: a Triton kernel runs on CPU tensors only through "
                           "Triton's interpreter; set TRITON_INTERPRET=1 before importing triton")
    x = x.contiguous()  # the kernel finds row r at r · N
    y = torch.empty_like(x)  # (M, N)
    if M == 0:
        return y
    block = triton.next_power_of_2(N)
    _softmax_rows_kernel[(M,)](x, y, N, BLOCK=block)
    return y
    ### END SOLUTION


@triton.jit
def _flash_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, E, Ev, scale,
                          IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                          BLOCK_EV: tl.constexpr, DOT_F32: tl.constexpr):
    """Triton kernel: FlashAttention's forward pass for one block of queries of one head.

    The grid is ``(cdiv(L, BLOCK_M), B·H)``: program ``(i, bh)`` handles queries
    ``i·BLOCK_M … i·BLOCK_M + BLOCK_M − 1`` of head ``bh``. It keeps its query tile on chip,
    walks over the keys ``BLOCK_N`` at a time with the online-softmax recurrence (running max
    ``m``, running sum ``l``, float32 accumulator rescaled by ``exp(m_old − m_new)``), then
    writes ``O = acc / l`` and ``lse = m + log l``. Rows past L, keys past S and columns past
    E or Ev are masked. With ``IS_CAUSAL`` query i sits at absolute position ``S − L + i``:
    key blocks wholly after the query block are never loaded, and the rest are masked.

    Args:
        q_ptr: queries, contiguous ``(B·H, L, E)``, float32, float16 or bfloat16.
        k_ptr: keys, contiguous ``(B·H, S, E)``, q's dtype.
        v_ptr: values, contiguous ``(B·H, S, Ev)``, q's dtype.
        o_ptr: output, contiguous ``(B·H, L, Ev)``, q's dtype.
        lse_ptr: output, contiguous ``(B·H, L)`` float32, each row's log-sum-exp of the scaled
            scores over its visible keys.
        L, S, E, Ev: query length, key length, query/key width, value width.
        scale: the factor on the scores (float32).
        IS_CAUSAL: constexpr, apply the bottom-right causal mask.
        BLOCK_M, BLOCK_N: constexpr tile sizes (queries per program, keys per step), powers of
            two >= 16 (``tl.dot`` needs every side >= 16).
        BLOCK_E, BLOCK_EV: constexpr, E and Ev padded to a power of two >= 16.
        DOT_F32: constexpr, cast tiles to float32 before ``tl.dot`` (for the CPU interpreter,
            whose ``tl.dot`` multiplies bfloat16's raw 16-bit storage as integers).
    """
    ### BEGIN SOLUTION
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)  # int64: B·H·L·E may pass 2³¹ on a big GPU
    # shape comments: BM, BN = BLOCK_M, BLOCK_N; BE, BEv = BLOCK_E, BLOCK_EV
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # (BM,) query indices
    offs_n = tl.arange(0, BLOCK_N)  # (BN,)
    offs_e = tl.arange(0, BLOCK_E)  # (BE,)
    offs_ev = tl.arange(0, BLOCK_EV)  # (BEv,)
    row_ok = rows < L
    e_ok = offs_e < E  # (BE,) the padding columns of q and k load as 0 and add nothing
    ev_ok = offs_ev < Ev  # (BEv,)
    q_ptrs = q_ptr + bh * L * E + rows[:, None] * E + offs_e[None, :]
    q = tl.load(q_ptrs, mask=row_ok[:, None] & e_ok[None, :], other=0.0)  # (BM, BE)
    if DOT_F32:
        q = q.to(tl.float32)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # (BM,) running max of the scores
    l_i = tl.zeros([BLOCK_M], tl.float32)  # (BM,) running sum of exp(score − m_i)
    acc = tl.zeros([BLOCK_M, BLOCK_EV], tl.float32)  # (BM, BEv) running Σ exp(score − m_i)·v
    if IS_CAUSAL:
        # the block's last query sits at S − L + (pid_m + 1)·BLOCK_M − 1: later keys are unseen
        hi = tl.minimum(S, S - L + (pid_m + 1) * BLOCK_M)
    else:
        hi = S
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n  # (BN,) key indices
        col_ok = cols < S
        kt_ptrs = k_ptr + bh * S * E + cols[None, :] * E + offs_e[:, None]
        kt = tl.load(kt_ptrs, mask=e_ok[:, None] & col_ok[None, :], other=0.0)  # (BE, BN)
        v_ptrs = v_ptr + bh * S * Ev + cols[:, None] * Ev + offs_ev[None, :]
        v = tl.load(v_ptrs, mask=col_ok[:, None] & ev_ok[None, :], other=0.0)  # (BN, BEv)
        if DOT_F32:
            kt = kt.to(tl.float32)
        s = tl.dot(q, kt, input_precision="ieee") * scale  # (BM, BN) float32 scores

        visible = col_ok[None, :]  # (1, BN)
        if IS_CAUSAL:
            # only diagonal blocks really need it, but a where on every block is cheap and plain
            visible = visible & (cols[None, :] <= S - L + rows[:, None])  # (BM, BN)
        s = tl.where(visible, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))  # (BM,)
        # a row that has seen no key yet keeps m = −inf; shift it by 0 so no −inf − (−inf) = NaN
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)  # (BM,) rescales what was summed under the old max
        p = tl.exp(s - m_use[:, None])  # (BM, BN) masked scores give exactly 0
        l_i = l_i * alpha + tl.sum(p, 1)
        # FlashAttention-2: round P to the input dtype so P·V runs on 16-bit tensor cores
        p = p.to(v.dtype)
        if DOT_F32:
            p = p.to(tl.float32)
            v = v.to(tl.float32)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")  # (BM, BEv)
        m_i = m_new

    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # cannot happen for a stored row; never divide by 0
    o = acc / l_safe[:, None]  # (BM, BEv)
    o_ptrs = o_ptr + bh * L * Ev + rows[:, None] * Ev + offs_ev[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None] & ev_ok[None, :])
    tl.store(lse_ptr + bh * L + rows, m_i + tl.log(l_i), mask=row_ok)  # (BM,)
    ### END SOLUTION


def flash_attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    is_causal: bool = False,
    scale: float | None = None,
    block_m: int = 16,
    block_n: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """FlashAttention's forward pass: ``O = softmax(scale · Q Kᵀ) V`` and each row's lse.

    One Triton program per (batch·head, block of ``block_m`` queries); each walks over the keys
    ``block_n`` at a time with the online softmax, so no (L, S) tensor is allocated. Scores,
    running max, running sum and accumulator are float32. P is rounded to the input dtype before
    the ``P·V`` product, as FlashAttention-2 does (so that product runs on 16-bit tensor cores;
    for float32 inputs nothing is rounded). O is rounded to the input dtype once, at the end.
    float32 ``tl.dot`` is IEEE float32, never TF32. On the CPU (Triton's interpreter) every tile
    is cast to float32 before ``tl.dot``, which gives the same products a GPU forms and makes
    bfloat16 work there too.

    Args:
        q: queries ``(B, H, L, E)``, float32, float16 or bfloat16.
        k: keys ``(B, H, S, E)``, q's dtype and device.
        v: values ``(B, H, S, Ev)``, q's dtype and device.
        is_causal: mask the future, aligned bottom-right: query i sits at absolute position
            ``S − L + i`` and sees keys ``j <= S − L + i`` (needs ``L <= S``); key blocks wholly
            after a query block are never visited.
        scale: factor on the scores, a finite real number; default ``1 / sqrt(E)``.
        block_m: queries per program, one of 16, 32, 64, 128.
        block_n: keys per step of the inner loop, one of 16, 32, 64, 128.

    Returns:
        ``(O, lse)``: O ``(B, H, L, Ev)`` in q's dtype, and lse ``(B, H, L)`` float32 with
        ``lse_i = log Σ_j exp(scale · q_i·k_j)`` over the keys row i may see; both on q's
        device.

    Raises:
        ValueError: if q, k or v is not a 4-D tensor; their dtypes or devices differ; the dtype
            is not float32/float16/bfloat16; B, H or E differ between q and k, or B, H or S
            between k and v; L or S is 0; E or Ev is outside [1, 128]; ``is_causal`` with
            ``L > S``; scale is not a finite real number; block_m or block_n is not a power of
            two in [16, 128]; the device is neither CUDA nor the CPU.
        RuntimeError: for CPU tensors while ``TRITON_INTERPRET`` is not ``1`` (it must be set
            before ``triton`` is imported).

    Source:
        Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with
        IO-Awareness", Algorithm 1; Dao 2023, "FlashAttention-2", Algorithm 1 (lse output, one
        normalisation at the end); Milakov & Gimelshein 2018 (online softmax); lesson 08, "The
        forward kernel".

    Example:
        cat = [0.8, 0.3] and dog = [0.6, 0.7] as queries and keys; with ``v = I`` the rows of O
        are the attention weights (CPU tensors: run with ``TRITON_INTERPRET=1``):

        >>> x = torch.tensor([[[[0.8, 0.3], [0.6, 0.7]]]])  # (B, H, L, E) = (1, 1, 2, 2)
        >>> o, lse = flash_attention_forward(x, x, torch.eye(2)[None, None], is_causal=True)
        >>> o.round(decimals=4)
        tensor([[[[1.0000, 0.0000],
                  [0.4717, 0.5283]]]])
        >>> lse.round(decimals=4)  # row 0 sees only cat: 0.73 / √2
        tensor([[[0.5162, 1.2392]]])
    """
    ### BEGIN SOLUTION
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"flash_attention_forward: {name} must be a 4-D tensor "
                             f"(B, H, len, dim), got {shape}")
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"flash_attention_forward: q, k and v need one dtype, got {q.dtype}, "
                         f"{k.dtype} and {v.dtype}")
    if q.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"flash_attention_forward: dtype must be float32, float16 or "
                         f"bfloat16, got {q.dtype}")
    if not q.device == k.device == v.device:
        raise ValueError(f"flash_attention_forward: q, k and v need one device, got {q.device}, "
                         f"{k.device} and {v.device}")
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    if k.shape[:2] != q.shape[:2] or k.shape[3] != E:
        raise ValueError(f"flash_attention_forward: k must be (B, H, S, E) for q (B, H, L, E) = "
                         f"{tuple(q.shape)}, got k {tuple(k.shape)}")
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(f"flash_attention_forward: v must be (B, H, S, Ev) for k (B, H, S, E) = "
                         f"{tuple(k.shape)}, got v {tuple(v.shape)}")
    if L < 1 or S < 1:
        raise ValueError(f"flash_attention_forward: L and S must be >= 1, got q {tuple(q.shape)} "
                         f"and k {tuple(k.shape)}")
    if not (1 <= E <= 128 and 1 <= Ev <= 128):
        raise ValueError(f"flash_attention_forward: E and Ev must lie in [1, 128], got E = {E} "
                         f"and Ev = {Ev}")
    if is_causal and L > S:
        raise ValueError(f"flash_attention_forward: is_causal needs L <= S (the queries are the "
                         f"last L of S positions), got L = {L}, S = {S}")
    if scale is None:
        scale = 1.0 / math.sqrt(E)
    if isinstance(scale, bool) or not isinstance(scale, Real) or not math.isfinite(scale):
        raise ValueError(f"flash_attention_forward: scale must be a finite real number, "
                         f"got {scale!r}")
    for name, b in (("block_m", block_m), ("block_n", block_n)):
        if isinstance(b, bool) or not isinstance(b, Integral) or b not in (16, 32, 64, 128):
            raise ValueError(f"flash_attention_forward: {name} must be 16, 32, 64 or 128, "
                             f"got {b!r}")
    if q.device.type not in ("cuda", "cpu"):
        raise ValueError(f"flash_attention_forward: Triton runs on CUDA (or the CPU through its "
                         f"interpreter), got tensors on {q.device}")
    if q.device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("flash_attention_forward: a Triton kernel runs on CPU tensors only "
                           "through Triton's interpreter; set TRITON_INTERPRET=1 before "
                           "importing triton")

    o = torch.empty((B, H, L, Ev), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, L), dtype=torch.float32, device=q.device)
    if B * H == 0:
        return o, lse
    # contiguous (B·H, len, dim) views, so the kernel finds row r of head bh at (bh·len + r)·dim
    q3 = q.reshape(B * H, L, E).contiguous()
    k3 = k.reshape(B * H, S, E).contiguous()
    v3 = v.reshape(B * H, S, Ev).contiguous()
    grid = (triton.cdiv(L, block_m), B * H)
    block_e = max(16, triton.next_power_of_2(E))
    _flash_forward_kernel[grid](
        q3, k3, v3, o, lse, L, S, E, Ev, float(scale),
        IS_CAUSAL=bool(is_causal), BLOCK_M=int(block_m), BLOCK_N=int(block_n),
        BLOCK_E=block_e, BLOCK_EV=max(16, triton.next_power_of_2(Ev)),
        DOT_F32=q.device.type == "cpu",
        # How a GPU runs a program (the interpreter ignores both): 8 warps share a 128-row
        # query tile, and 3 pipeline stages load the next K/V tile during the two dots while
        # shared memory allows it (a 128-wide head: 2). Not tuned on a GPU yet.
        num_warps=8 if block_m >= 128 else 4, num_stages=3 if block_e <= 64 else 2,
    )
    return o, lse
    ### END SOLUTION


#: Keys per step of ``flash_attention_backward``: it holds (B, H, L, 128) blocks, never (L, S).
BACKWARD_BLOCK_N = 128


def flash_attention_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    is_causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of attention by recomputation from the saved log-sum-exp (plain PyTorch).

    The forward kept only O and lse; P is rebuilt from them one block of keys at a time
    (``BACKWARD_BLOCK_N`` keys per step, so at most a ``(B, H, L, BACKWARD_BLOCK_N)`` block
    exists), with the same bottom-right causal mask as the forward::

        P  = exp(scale · Q Kᵀ − lse)
        D  = rowsum(dO ∘ O)            (equal to rowsum(P ∘ dP))
        dV = Pᵀ dO
        dS = P ∘ (dO Vᵀ − D)
        dQ = scale · dS K
        dK = scale · dSᵀ Q

    No autograd and no Triton. Work is float32 (float64 for float64 inputs, accepted here for
    gradient checks); the results are cast back to the inputs' dtype once.

    Args:
        q: queries ``(B, H, L, E)``, float16, bfloat16, float32 or float64.
        k: keys ``(B, H, S, E)``, q's dtype.
        v: values ``(B, H, S, Ev)``, q's dtype.
        o: the forward's output ``(B, H, L, Ev)``, q's dtype.
        lse: the forward's log-sum-exp ``(B, H, L)``, any floating dtype (float32 from
            ``flash_attention_forward``).
        do: the gradient of the loss with respect to O, ``(B, H, L, Ev)``, q's dtype.
        is_causal: the forward's ``is_causal`` (bottom-right aligned; needs ``L <= S``).
        scale: the forward's scale, finite; default ``1 / sqrt(E)``.

    Returns:
        ``(dq, dk, dv)`` shaped and typed like ``q, k, v``, on their device.

    Raises:
        ValueError: if any input is not a tensor of the stated rank; their shapes disagree;
            q, k, v, o and do do not share one dtype among float16/bfloat16/float32/float64,
            or lse is not floating point; the inputs are on different devices; ``is_causal``
            with ``L > S``; scale is not a finite real number.

    Source:
        Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism and Work
        Partitioning", Algorithm 2 (backward pass, D = rowsum(dO ∘ O)); lesson 08, "The
        backward pass by recomputation".

    Example:
        The gradients agree with autograd through a plain float64 attention:

        >>> _ = torch.manual_seed(0)
        >>> q, k, v = (torch.randn(1, 2, 8, 16, dtype=torch.float64) for _ in range(3))
        >>> qr = q.clone().requires_grad_()
        >>> o = torch.softmax(qr @ k.mT / 4.0, dim=-1) @ v  # (B, H, L, Ev), scale 1/√16
        >>> do = torch.randn_like(o)
        >>> o.backward(do)
        >>> lse = torch.logsumexp(q @ k.mT / 4.0, dim=-1)  # (B, H, L)
        >>> dq, dk, dv = flash_attention_backward(q, k, v, o.detach(), lse, do)
        >>> torch.allclose(dq, qr.grad), dq.dtype, dk.shape
        (True, torch.float64, torch.Size([1, 2, 8, 16]))
    """
    ### BEGIN SOLUTION
    given = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do}
    for name, t in given.items():
        rank = 3 if name == "lse" else 4
        if not isinstance(t, torch.Tensor) or t.dim() != rank:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"flash_attention_backward: {name} must be a {rank}-D tensor, "
                             f"got {shape}")
    dtypes = {name: t.dtype for name, t in given.items() if name != "lse"}
    if len(set(dtypes.values())) != 1:
        raise ValueError(f"flash_attention_backward: q, k, v, o and do need one dtype, "
                         f"got {dtypes}")
    if q.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise ValueError(f"flash_attention_backward: dtype must be float16, bfloat16, float32 "
                         f"or float64, got {q.dtype}")
    if not lse.is_floating_point():
        raise ValueError(f"flash_attention_backward: lse must be floating point, "
                         f"got {lse.dtype}")
    devices = {name: t.device for name, t in given.items()}
    if len(set(devices.values())) != 1:
        raise ValueError(f"flash_attention_backward: all inputs need one device, got {devices}")
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    expected = {"k": (B, H, S, E), "v": (B, H, S, Ev), "o": (B, H, L, Ev), "lse": (B, H, L),
                "do": (B, H, L, Ev)}
    for name, shape in expected.items():
        if tuple(given[name].shape) != shape:
            got = ", ".join(f"{n} {tuple(t.shape)}" for n, t in given.items())
            raise ValueError(f"flash_attention_backward: {name} must have shape {shape} "
                             f"(B, H, L, E, S, Ev from q and k, v), got {got}")
    if is_causal and L > S:
        raise ValueError(f"flash_attention_backward: is_causal needs L <= S, got L = {L}, "
                         f"S = {S}")
    if scale is None:
        scale = 1.0 / math.sqrt(E) if E else 1.0
    if isinstance(scale, bool) or not isinstance(scale, Real) or not math.isfinite(scale):
        raise ValueError(f"flash_attention_backward: scale must be a finite real number, "
                         f"got {scale!r}")

    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    qw, kw, vw, ow, dow = (t.to(work) for t in (q, k, v, o, do))
    lse_w = lse.to(work)[..., None]  # (B, H, L, 1)
    delta = (dow * ow).sum(dim=-1, keepdim=True)  # (B, H, L, 1) D = rowsum(dO ∘ O)
    dq = torch.zeros_like(qw)  # (B, H, L, E) summed over the key blocks
    dk = torch.empty_like(kw)  # (B, H, S, E) one block at a time
    dv = torch.empty_like(vw)  # (B, H, S, Ev)
    q_pos = torch.arange(S - L, S, device=q.device)[:, None]  # (L, 1) absolute query positions
    for j0 in range(0, S, BACKWARD_BLOCK_N):
        j1 = min(j0 + BACKWARD_BLOCK_N, S)
        k_blk, v_blk = kw[:, :, j0:j1], vw[:, :, j0:j1]  # (B, H, n, E), (B, H, n, Ev)
        s = (qw @ k_blk.transpose(-2, -1)) * scale  # (B, H, L, n)
        if is_causal:
            future = torch.arange(j0, j1, device=q.device)[None, :] > q_pos  # (L, n)
            s = s.masked_fill(future, float("-inf"))  # exp gives exactly 0 there
        p = torch.exp(s - lse_w)  # (B, H, L, n) the forward's probabilities, rebuilt
        dv[:, :, j0:j1] = p.transpose(-2, -1) @ dow  # (B, H, n, Ev)
        dp = dow @ v_blk.transpose(-2, -1)  # (B, H, L, n)
        ds = p * (dp - delta)  # (B, H, L, n)
        dq += scale * (ds @ k_blk)  # (B, H, L, E)
        dk[:, :, j0:j1] = scale * (ds.transpose(-2, -1) @ qw)  # (B, H, n, E)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
    ### END SOLUTION


class FlashAttention(torch.autograd.Function):
    """Differentiable FlashAttention: the Triton forward and the recomputing backward.

    ``FlashAttention.apply(q, k, v, is_causal=False)`` returns O ``(B, H, L, Ev)`` like
    ``flash_attention_forward`` (default scale ``1/√E``, 16 × 16 blocks); autograd then calls
    ``backward``, which hands the saved q, k, v, O and lse to ``flash_attention_backward``.
    Only O and the ``(B, H, L)`` lse are kept between the passes, never P.

    Source:
        Dao 2023, "FlashAttention-2", §3 (forward saves O and lse, backward recomputes P);
        PyTorch, "Extending torch.autograd"; lesson 08, "An autograd function".

    Example:
        >>> _ = torch.manual_seed(0)
        >>> q, k, v = (torch.randn(1, 2, 16, 32, requires_grad=True) for _ in range(3))
        >>> o = FlashAttention.apply(q, k, v, True)  # (B, H, L, Ev), causal
        >>> o.sum().backward()
        >>> o.shape, q.grad.shape, v.grad.dtype
        (torch.Size([1, 2, 16, 32]), torch.Size([1, 2, 16, 32]), torch.float32)
    """

    @staticmethod
    def forward(ctx: FunctionCtx, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                is_causal: bool = False) -> torch.Tensor:
        """Run ``flash_attention_forward`` and save q, k, v, O and lse for ``backward``.

        Args:
            ctx: autograd's context object (``save_for_backward``, attributes).
            q: queries ``(B, H, L, E)``; q, k and v share one dtype (float32, float16 or
                bfloat16) and one device.
            k: keys ``(B, H, S, E)``.
            v: values ``(B, H, S, Ev)``.
            is_causal: bottom-right causal mask, as in ``flash_attention_forward``.

        Returns:
            O ``(B, H, L, Ev)`` in q's dtype.

        Raises:
            ValueError, RuntimeError: as ``flash_attention_forward``.
        """
        ### BEGIN SOLUTION
        o, lse = flash_attention_forward(q, k, v, is_causal=is_causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = bool(is_causal)
        return o
        ### END SOLUTION

    @staticmethod
    def backward(ctx: FunctionCtx,
                 do: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None]:
        """Gradients for ``(q, k, v, is_causal)`` from the saved tensors.

        Args:
            ctx: the context ``forward`` filled.
            do: the gradient of the loss with respect to O, ``(B, H, L, Ev)``.

        Returns:
            ``(dq, dk, dv, None)``: shaped and typed like q, k, v; None for ``is_causal``.
        """
        ### BEGIN SOLUTION
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = flash_attention_backward(q, k, v, o, lse, do, is_causal=ctx.is_causal)
        return dq, dk, dv, None
        ### END SOLUTION
