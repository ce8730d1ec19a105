"""Alternative correct implementations of topic 8: each must get full marks on the whole topic.

The kernels reuse the bank's own correct versions (``wrong_ex08_flash_attention``'s
SOFTMAX_KERNEL, FORWARD_KERNEL, BACKWARD), unchanged or changed in ways that keep them right:
other block sizes, another key-block order, exp2 with log2(e) folded into the scale, P kept in
float32, FlashAttention-1's per-step normalisation, D = rowsum(P ∘ dP), a launcher of its own.
"""

from __future__ import annotations

from tests.banks import Variant
from tests.banks.wrong_ex08_flash_attention import (
    BACKWARD,
    FLASH_CLASS,
    FORWARD_EXP2,
    FORWARD_KERNEL,
    FORWARD_NORMALISED,
    SOFTMAX_KERNEL,
    mutate,
)

#: The forward with its own launcher and checks, heads on grid axis 0 and query blocks on 1.
FORWARD_HEADS_FIRST = mutate(
    FORWARD_KERNEL,
    ("    start_m = tl.program_id(0)\n    head = tl.program_id(1).to(tl.int64)\n",
     "    head = tl.program_id(0).to(tl.int64)\n    start_m = tl.program_id(1)\n"),
) + '''

def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    tensors = (q, k, v)
    if any(not isinstance(t, torch.Tensor) or t.dim() != 4 for t in tensors):
        raise ValueError(f"q, k and v must be 4-D tensors (B, H, len, dim), got "
                         f"{[tuple(getattr(t, 'shape', ())) for t in tensors]}")
    if len({t.dtype for t in tensors}) != 1 or q.dtype not in (torch.float32, torch.float16,
                                                                torch.bfloat16):
        raise ValueError(f"one dtype among float32/float16/bfloat16, got "
                         f"{[t.dtype for t in tensors]}")
    if len({t.device for t in tensors}) != 1:
        raise ValueError(f"one device, got {[str(t.device) for t in tensors]}")
    B, H, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    if tuple(k.shape) != (B, H, S, E) or tuple(v.shape[:3]) != (B, H, S):
        raise ValueError(f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    if min(L, S) < 1 or not (0 < E <= 128 and 0 < Ev <= 128):
        raise ValueError(f"need L, S >= 1 and E, Ev in [1, 128]: L={L} S={S} E={E} Ev={Ev}")
    if is_causal and L > S:
        raise ValueError(f"is_causal needs L <= S, got L={L}, S={S}")
    scale = 1 / math.sqrt(E) if scale is None else scale
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not math.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale!r}")
    for b in (block_m, block_n):
        if type(b) is not int or b not in (16, 32, 64, 128):
            raise ValueError(f"block sizes must be 16, 32, 64 or 128, got {b!r}")
    if q.device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("CPU tensors need TRITON_INTERPRET=1")
    o = torch.empty(B, H, L, Ev, dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, L, dtype=torch.float32, device=q.device)
    _flash_forward_kernel[(B * H, triton.cdiv(L, block_m))](
        q.contiguous(), k.contiguous(), v.contiguous(), o, lse, L, S, E, Ev, float(scale),
        IS_CAUSAL=bool(is_causal), BLOCK_M=block_m, BLOCK_N=block_n,
        BLOCK_E=max(16, triton.next_power_of_2(E)), BLOCK_EV=max(16, triton.next_power_of_2(Ev)),
        DOT_F32=q.device.type == "cpu")
    return o, lse
'''

BANK: list[Variant] = [
    # ------------------------------------------------------------------ softmax_rows
    Variant("softmax_rows", "the bank's own kernel: same recipe, written apart", SOFTMAX_KERNEL),
    Variant("softmax_rows", "exp2 with log2(e) folded in", mutate(
        SOFTMAX_KERNEL, ("w = tl.exp(row - top)", "w = tl.exp2((row - top) * 1.4426950408889634)"))),
    Variant("softmax_rows", "two passes over 16-lane chunks of the row: an online max and sum "
            "per lane (topic 3's streaming softmax), then the outputs", """
@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    lane_max = tl.full([16], float("-inf"), tl.float32)
    lane_sum = tl.zeros([16], tl.float32)
    for start in range(0, n_cols, 16):
        cols = start + tl.arange(0, 16)
        x = tl.load(x_ptr + r * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        x = x.to(tl.float32)
        new_max = tl.maximum(lane_max, x)
        shift = tl.where(new_max == float("-inf"), 0.0, new_max)
        lane_sum = lane_sum * tl.exp(lane_max - shift) + tl.exp(x - shift)
        lane_max = new_max
    top = tl.max(lane_max, 0)
    top = tl.where(top == float("-inf"), 0.0, top)
    total = tl.sum(lane_sum * tl.exp(lane_max - top), 0)
    total = tl.where(total == 0.0, 1.0, total)
    for start in range(0, n_cols, 16):
        cols = start + tl.arange(0, 16)
        x = tl.load(x_ptr + r * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        y = tl.exp(x.to(tl.float32) - top) / total
        tl.store(y_ptr + r * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)
"""),
    # ------------------------------------------------------------------ flash_attention_forward
    Variant("flash_attention_forward", "the bank's own kernel: K tiles transposed by tl.trans",
            FORWARD_KERNEL),
    Variant("flash_attention_forward", "block_m = 64 and block_n = 32 as defaults", """
_forward_16 = flash_attention_forward
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=64, block_n=32):
    return _forward_16(q, k, v, is_causal=is_causal, scale=scale, block_m=block_m,
                       block_n=block_n)
"""),
    Variant("flash_attention_forward", "key blocks visited last to first (the online softmax "
            "does not depend on the order)", mutate(
                FORWARD_KERNEL,
                ("    for n0 in range(0, end, BLOCK_N):\n",
                 ("    n_blocks = (end + BLOCK_N - 1) // BLOCK_N\n"
                 "    for j in range(0, n_blocks):\n"
                 "        n0 = (n_blocks - 1 - j) * BLOCK_N\n")))),
    Variant("flash_attention_forward", "exp2 with log2(e) folded into the scale, lse converted "
            "back with ln 2", FORWARD_EXP2),
    Variant("flash_attention_forward", "P kept in float32 for the P·V product (V widened)",
            mutate(FORWARD_KERNEL,
                   (("        p = p.to(v.dtype)\n"
                    "        if DOT_F32:\n"
                    "            p = p.to(tl.float32)\n"
                    "            v = v.to(tl.float32)\n"),
                    "        v = v.to(tl.float32)\n"))),
    Variant("flash_attention_forward", "the output normalised at every step (FlashAttention-1's "
            "update), nothing divided at the end", FORWARD_NORMALISED),
    Variant("flash_attention_forward", "its own launcher and checks, heads on grid axis 0",
            FORWARD_HEADS_FIRST),
    # ------------------------------------------------------------------ flash_attention_backward
    Variant("flash_attention_backward", "one block: the whole (L, S) grid at once",
            BACKWARD),
    Variant("flash_attention_backward", "D = rowsum(P ∘ dP) instead of rowsum(dO ∘ O)",
            mutate(BACKWARD, ("d = (do_ * o_).sum(-1, keepdim=True)",
                              "d = (p * dp).sum(-1, keepdim=True)"))),
    # Natural validation, only what docs/design/exercise-api.md lists: messages in torch's torch.Size([...])
    # spelling, no isinstance checks (a list fails with AttributeError), L = 0 answered.
    Variant("softmax_rows", "checks only rank and N (a NumPy array fails on x.dim()), torch.Size "
            "in the messages", """
_softmax_rows_reference = softmax_rows
def softmax_rows(x):
    if x.dim() != 2:
        raise ValueError(f"softmax_rows needs a 2-D tensor, got {x.shape}")
    if not 1 <= x.shape[1] <= 65536:
        raise ValueError(f"rows must hold 1 to 65536 entries, got {x.shape}")
    return _softmax_rows_reference(x)
"""),
    Variant("flash_attention_forward", "rank errors quote torch.Size; L = 0 queries get empty "
            "O and lse (docs/design/exercise-api.md lists no error for them)", """
_forward_reference = flash_attention_forward
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"{name} must be (B, H, len, dim), got {t.shape}")
    B, H, L, E = q.shape
    if L == 0 and k.shape[2] >= 1:
        # every other rule checked by a one-query call, then the empty answer
        probe = torch.zeros((B, H, 1, E), dtype=q.dtype, device=q.device)
        _forward_reference(probe, k, v, is_causal, scale, block_m, block_n)
        return (torch.empty((B, H, 0, v.shape[3]), dtype=q.dtype, device=q.device),
                torch.empty((B, H, 0), dtype=torch.float32, device=q.device))
    return _forward_reference(q, k, v, is_causal, scale, block_m, block_n)
"""),
    Variant("flash_attention_backward", "no isinstance checks: an lse that is not a tensor fails "
            "on lse.dim() (AttributeError)", """
_backward_reference = flash_attention_backward
def flash_attention_backward(q, k, v, o, lse, do, is_causal=False, scale=None):
    if lse.dim() != 3:
        raise ValueError(f"lse must be (B, H, L), got {lse.shape}")
    return _backward_reference(q, k, v, o, lse, do, is_causal=is_causal, scale=scale)
"""),
    # ------------------------------------------------------------------ FlashAttention
    Variant("FlashAttention", "written apart: is_causal kept on ctx, grads unpacked",
            FLASH_CLASS),
    Variant("FlashAttention", "saves q, k, v and lse only; backward rebuilds O from lse "
            "(P = exp(scale·QKᵀ − lse), O = P V) before calling the backward", """
class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        o, lse = flash_attention_forward(q, k, v, is_causal=is_causal)
        ctx.save_for_backward(q, k, v, lse)
        ctx.is_causal = is_causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, lse = ctx.saved_tensors
        L, S = q.shape[2], k.shape[2]
        s = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
        if ctx.is_causal:
            future = torch.ones(L, S, dtype=torch.bool, device=q.device).triu(S - L + 1)
            s = s.masked_fill(future, float("-inf"))
        o = (torch.exp(s - lse.unsqueeze(-1)) @ v.float()).to(q.dtype)
        dq, dk, dv = flash_attention_backward(q, k, v, o, lse, do, is_causal=ctx.is_causal)
        return dq, dk, dv, None
"""),
]
