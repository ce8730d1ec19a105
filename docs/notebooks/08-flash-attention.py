# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 8 companion: attention as a GPU kernel
#
# Online softmax by blocks in plain PyTorch, the bytes and FLOPs of plain and tiled attention on
# an H200's roofline, the tile grid of a causal kernel, a first Triton kernel, and the course's
# FlashAttention kernel checked against PyTorch. Uses the reference solutions when present, your
# own `exercises/` otherwise. Without a GPU the Triton kernels run in Triton's interpreter
# (`TRITON_INTERPRET=1`, set below), slowly, so every size here is small.

# %%
import math
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

if not torch.cuda.is_available():
    # Triton reads this when it is first imported: on a machine without CUDA, only the
    # interpreter can run a kernel (on CPU tensors).
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton
import triton.language as tl

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex08_flash_attention as ex
except ImportError:
    from exercises import ex08_flash_attention as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-08",
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
)


def show(fig, name):
    """Save the figure when the lesson site is being built; otherwise Jupyter displays it."""
    if os.environ.get("COURSE_FIGURES"):
        fig.savefig(
            Path(os.environ["COURSE_FIGURES"]) / f"{name}.svg",
            metadata={"Date": None},
            bbox_inches="tight",
        )
        plt.close(fig)


# %% [markdown]
# ## Bytes and FLOPs: plain against tiled attention
#
# One head, half precision (2 bytes a number). Plain attention runs as three kernels:
# `Q Kᵀ` writes the scores to memory, the softmax reads them and writes the probabilities,
# `P V` reads those. A tiled kernel reads Q, K and V and writes O, nothing else.


# %%
# --8<-- [start:traffic]
def plain_bytes(L, S, E, Ev, itemsize=2):
    """HBM traffic of unfused attention: Q, K, V read, O written, and the
    (L, S) scores written, read, written again as P and read once more."""
    return itemsize * (L * E + S * E + S * Ev + L * Ev + 4 * L * S)


def tiled_bytes(L, S, E, Ev, itemsize=2, block_m=None):
    """HBM traffic of a tiled kernel: Q read and O written once; K and V read
    once in all (block_m=None), or once per block of block_m queries."""
    passes = 1 if block_m is None else math.ceil(L / block_m)
    return itemsize * (L * E + L * Ev + passes * S * (E + Ev))


def attention_flops(L, S, E, Ev):
    """Multiply-adds count 2 FLOPs: Q Kᵀ is 2 L S E, P V is 2 L S Ev."""
    return 2 * L * S * E + 2 * L * S * Ev


HBM_BYTES_PER_S = 4.8e12  # H200: about 4.8 TB/s
DENSE_FLOP_PER_S = 990e12  # H200: about 990 TFLOP/s, dense bf16/fp16
ridge = DENSE_FLOP_PER_S / HBM_BYTES_PER_S  # FLOP per byte where the roofs meet

L = S = 4096
E = Ev = 128
flops = attention_flops(L, S, E, Ev)
plain = plain_bytes(L, S, E, Ev)
print(f"plain: {plain / 1e6:.1f} MB, {flops / 1e9:.2f} GFLOP")  # 138.4 MB, 8.59
print(f"{flops / plain:.0f} FLOP/B; ridge point: {ridge:.0f} FLOP/B")  # 62; 206
# --8<-- [end:traffic]

# %% [markdown]
# ## The exponentials are not free
#
# The softmax's L·S exponentials are 512 times fewer than the products' FLOPs, but they do not
# run on the tensor cores: on an H100 or H200 they go through the special-function units, at
# about 3.9 T per second against about 990 TFLOP/s for half-precision matrix products (the
# FlashAttention-3 paper, section 3).

# %%
# --8<-- [start:exponentials]
EXP_PER_S = 3.9e12  # H100 SXM5, H200 (one chip): exponentials per second
matmul_us = flops / DENSE_FLOP_PER_S * 1e6  # Q Kᵀ and P V, tensor cores
exp_us = L * S / EXP_PER_S * 1e6  # one exponential per score
print(f"{flops / (L * S):.0f} times fewer exponentials than FLOPs")  # 512
print(f"matmuls {matmul_us:.1f} us, exponentials {exp_us:.1f} us")  # 8.7, 4.3
print(f"exponentials / matmuls: {exp_us / matmul_us:.2f}")  # 0.50
# --8<-- [end:exponentials]

# %%
for name, moved in [
    ("plain", plain_bytes(L, S, E, Ev)),
    ("tiled, K and V re-read", tiled_bytes(L, S, E, Ev, block_m=128)),
    ("tiled, each byte once", tiled_bytes(L, S, E, Ev)),
]:
    memory_us = moved / HBM_BYTES_PER_S * 1e6
    compute_us = flops / DENSE_FLOP_PER_S * 1e6
    print(
        f"{name:24} {moved / 1e6:6.1f} MB  {flops / moved:6.0f} FLOP/B  "
        f"memory {memory_us:5.2f} us, compute {compute_us:4.2f} us"
    )

# %%
lengths = 2 ** np.arange(8, 17)  # L = S from 256 to 65,536
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.6, 3.1), constrained_layout=True)
curves = [
    ("plain", plain_bytes, {}, "tab:red", "-"),
    ("tiled, K and V re-read\n(block_m = 128)", tiled_bytes, {"block_m": 128}, "tab:blue", "--"),
    ("tiled, each byte once", tiled_bytes, {}, "tab:blue", "-"),
]
for label, count, options, colour, style in curves:
    moved = np.array([count(n, n, E, Ev, **options) for n in lengths], dtype=float)
    ax1.loglog(lengths, moved, style, color=colour, lw=1.6, label=label)
# Bytes that take as long to move as the FLOPs take to compute: above this line, memory-bound.
even = np.array([attention_flops(n, n, E, Ev) for n in lengths], dtype=float) / ridge
ax1.loglog(lengths, even, ":", color="black", lw=1.2, label="break-even on an H200")
ax1.set(xlabel="sequence length L = S", ylabel="bytes moved to and from HBM")
ax1.set_title("One head, $d_h$ = 128, 2-byte numbers", fontsize=10)
ax1.legend(fontsize=8, frameon=False, loc="upper left")

intensity = np.logspace(0, 4, 200)
roof = np.minimum(DENSE_FLOP_PER_S, HBM_BYTES_PER_S * intensity) / 1e12
ax2.loglog(intensity, roof, color="black", lw=1.4)
ax2.axvline(ridge, color="grey", lw=0.8, ls=":")
ax2.text(ridge * 1.15, 12, f"ridge\n{ridge:.0f} FLOP/B", fontsize=9, color="dimgrey")
points = [
    ("plain", plain_bytes(L, S, E, Ev), "tab:red"),
    ("re-read", tiled_bytes(L, S, E, Ev, block_m=128), "tab:blue"),
    ("once", tiled_bytes(L, S, E, Ev), "tab:blue"),
]
for label, moved, colour in points:
    x = flops / moved
    y = min(DENSE_FLOP_PER_S, HBM_BYTES_PER_S * x) / 1e12
    ax2.plot([x], [y], "o", color=colour, ms=6)
    ax2.annotate(label, (x, y), textcoords="offset points", xytext=(-6, 8), ha="right", fontsize=9)
ax2.set(xlabel="arithmetic intensity (FLOP per byte)", ylabel="attainable TFLOP/s", ylim=(5, 2e3))
ax2.set_title("H200 roofline at L = S = 4096", fontsize=10)
show(fig, "08-traffic-roofline")

# %% [markdown]
# ## Online softmax by blocks, in plain PyTorch
#
# The loop a FlashAttention kernel runs for one block of queries, written with ordinary tensor
# operations: keys and values arrive `block_n` at a time, and three running quantities (the row
# maximum m, the row sum l, the accumulator) replace the (L, S) matrix.


# %%
# --8<-- [start:blocks]
def attention_by_blocks(q, k, v, block_n=16):
    """softmax(q kᵀ / √E) v for q (L, E), k (S, E), v (S, Ev), one key
    block at a time; returns O (L, Ev) and lse (L,)."""
    scale = q.shape[1] ** -0.5
    m = torch.full((q.shape[0], 1), -math.inf, dtype=q.dtype)  # running max
    l = torch.zeros(q.shape[0], 1, dtype=q.dtype)  # running Σ exp(s - m)
    acc = torch.zeros(q.shape[0], v.shape[1], dtype=q.dtype)  # Σ exp(s - m) v
    for start in range(0, k.shape[0], block_n):
        k_blk, v_blk = k[start : start + block_n], v[start : start + block_n]
        s = scale * q @ k_blk.T  # (L, block_n): the only scores that exist
        m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
        alpha = torch.exp(m - m_new)  # rescales what was summed so far
        p = torch.exp(s - m_new)
        l = alpha * l + p.sum(dim=1, keepdim=True)
        acc = alpha * acc + p @ v_blk
        m = m_new
    return acc / l, (m + torch.log(l)).squeeze(1)


torch.manual_seed(0)
q = torch.randn(24, 32, dtype=torch.float64)  # L = 24 queries, E = 32
k = torch.randn(100, 32, dtype=torch.float64)  # S = 100: a ragged last block
v = torch.randn(100, 8, dtype=torch.float64)  # Ev = 8
out, lse = attention_by_blocks(q, k, v)
scores = q @ k.T / 32**0.5
assert torch.allclose(out, torch.softmax(scores, dim=1) @ v)
assert torch.allclose(lse, torch.logsumexp(scores, dim=1))
# lse alone rebuilds any probability later: P = exp(s - lse)
p_full = torch.softmax(scores, dim=1)
assert torch.allclose(torch.exp(scores - lse[:, None]), p_full)
# --8<-- [end:blocks]


# %% [markdown]
# ## Lesson 2's two tokens, one key at a time
#
# The same loop with block_n = 1 on the two tokens that lessons 2, 5 and 7 follow: queries
# q₁ = [3, −3], q₂ = [1, 1], keys k₁ = [−3, 3], k₂ = [1, 1], values v₁ = [1, 2], v₂ = [2, 1].
# Each row's m and l are printed after each key.

# %%
# --8<-- [start:onepass]
q2 = torch.tensor([[3.0, -3.0], [1.0, 1.0]], dtype=torch.float64)  # Q
k2 = torch.tensor([[-3.0, 3.0], [1.0, 1.0]], dtype=torch.float64)  # K
v2 = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)  # V
m = torch.full((2, 1), -math.inf, dtype=torch.float64)
l = torch.zeros(2, 1, dtype=torch.float64)
acc = torch.zeros(2, 2, dtype=torch.float64)
for j in range(2):  # block_n = 1: one key per step
    s = q2 @ k2[j : j + 1].T / math.sqrt(2)  # (2, 1): both rows' score
    m_new = torch.maximum(m, s)
    alpha, p = torch.exp(m - m_new), torch.exp(s - m_new)
    l = alpha * l + p
    acc = alpha * acc + p * v2[j]
    m = m_new
    print(f"key {j + 1}: m = {m.ravel().numpy().round(3)}", end=", ")
    print(f"l = {l.ravel().numpy().round(6)}")
print("O =", (acc / l).numpy().round(3))  # [[2, 1], [1.804, 1.196]]
assert torch.allclose(acc / l, attention_by_blocks(q2, k2, v2, 1)[0])
# --8<-- [end:onepass]


# %% [markdown]
# ## The tile grid of a causal kernel
#
# Query i sits at absolute position S − L + i (lesson 5's bottom-right alignment). A tile of
# (query block, key block) is skipped when every key in it lies in the future of every query,
# computed without a mask when every key is visible to every query, and masked otherwise.


# %%
# --8<-- [start:tiles]
def tile_kinds(L, S, block_m, block_n):
    """'skip', 'mask' or 'full' for each (query block, key block) tile of a
    causal kernel in which query i sits at position S - L + i."""
    kinds = []
    for r0 in range(0, L, block_m):
        first = S - L + r0  # position of the block's first query
        last = S - L + min(r0 + block_m, L) - 1  # ... and of its last
        row = []
        for c0 in range(0, S, block_n):
            c1 = min(c0 + block_n, S) - 1  # the tile's last key
            if c0 > last:
                row.append("skip")  # no query here may see any of these keys
            elif c1 <= first:
                row.append("full")  # every query sees every key: no mask
            else:
                row.append("mask")  # the diagonal runs through this tile
        kinds.append(row)
    return kinds


for row in tile_kinds(L=64, S=64, block_m=16, block_n=16):
    print(" ".join(f"{kind:4}" for kind in row))
grid = tile_kinds(L=4096, S=4096, block_m=128, block_n=128)  # 32 x 32 tiles
kinds = [kind for row in grid for kind in row]
print({kind: kinds.count(kind) for kind in ("skip", "mask", "full")})
# --8<-- [end:tiles]


# %%
def tile_image(L, S, block_m, block_n):
    """(L, S) codes: 0 skipped, 1 full, 2 masked tile and visible, 3 masked tile and hidden."""
    kinds = tile_kinds(L, S, block_m, block_n)
    visible = np.arange(S)[None, :] <= (S - L + np.arange(L))[:, None]
    codes = np.zeros((L, S), dtype=int)
    for a, row in enumerate(kinds):
        for b, kind in enumerate(row):
            rows = slice(a * block_m, (a + 1) * block_m)
            cols = slice(b * block_n, (b + 1) * block_n)
            if kind == "full":
                codes[rows, cols] = 1
            elif kind == "mask":
                codes[rows, cols] = np.where(visible[rows, cols], 2, 3)
    return codes


colours = ListedColormap(["#e8e8e8", "#4c72b0", "#dd8452", "#f6dccb"])
fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.3), constrained_layout=True)
for ax, (Lq, Sk) in zip(axes, [(64, 64), (40, 64)]):
    image = tile_image(Lq, Sk, 16, 16)
    # extent: cell (i, j) covers [j, j + 1] x [i, i + 1], so tile edges fall on multiples of 16
    ax.imshow(image, cmap=colours, vmin=0, vmax=3, extent=(0, Sk, Lq, 0), interpolation="nearest")
    for edge in range(16, Sk, 16):  # tile boundaries
        ax.axvline(edge, color="white", lw=2)
    for edge in range(16, Lq, 16):
        ax.axhline(edge, color="white", lw=2)
    kinds = tile_kinds(Lq, Sk, 16, 16)
    for a, row in enumerate(kinds):
        for b, kind in enumerate(row):
            if kind == "skip":
                centre = (b * 16 + 8, (a * 16 + min((a + 1) * 16, Lq)) / 2)
                ax.text(*centre, "skip", ha="center", va="center", fontsize=9, color="dimgrey")
    ax.set(xlabel="key j", ylabel="query i", xticks=range(0, Sk + 1, 16))
    ax.set_yticks([*range(0, Lq, 16), Lq])
    ax.tick_params(length=0)
    offset = f"query i at position {Sk - Lq} + i" if Lq < Sk else "query i at position i"
    ax.set_title(f"L = {Lq}, S = {Sk}: {offset}", fontsize=10)
fig.legend(
    handles=[
        Patch(color=colours(1), label="full tile: no mask"),
        Patch(color=colours(2), label="masked tile: visible"),
        Patch(color=colours(3), label="masked tile: hidden"),
        Patch(color=colours(0), label="skipped: never loaded"),
    ],
    loc="outside lower center",
    ncols=4,
    fontsize=8,
    frameon=False,
)
show(fig, "08-causal-tiles")


# %% [markdown]
# ## A first Triton kernel: the maximum of each row
#
# One program per row; each program loads its row as one block of lanes, the lanes past the
# row's end masked, and stores one number. The same shape of kernel, with a few more lines, is
# the exercise's row softmax.


# %%
# --8<-- [start:rowmax]
device = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: the interpreter


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # which row this program owns
    lanes = tl.arange(0, BLOCK)  # 0 .. BLOCK-1; BLOCK is a power of two
    in_row = lanes < n_cols  # lanes past the end of the row
    ptrs = x_ptr + row * stride_row + lanes  # one pointer per lane
    # masked lanes read -inf, which can never win a maximum
    vals = tl.load(ptrs, mask=in_row, other=-float("inf"))
    tl.store(out_ptr + row, tl.max(vals.to(tl.float32), axis=0))


def row_max(x):
    """The largest entry of each row of x (M, N), as float32 (M,)."""
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(x.shape[1])
    row_max_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=block)
    return out


x = torch.randn(6, 50, device=device).half()  # 50 columns: 64 lanes
assert torch.equal(row_max(x), x.float().amax(dim=1))
# --8<-- [end:rowmax]

# %% [markdown]
# ## Two-dimensional tiles: the scores of one block of queries
#
# The pieces the forward kernel needs, in a kernel that computes only the scores Q Kᵀ and each
# row's maximum: 2-D pointer tiles, 2-D masks, a transposed key tile for `tl.dot`, `tl.maximum`
# against `tl.max`, a loop whose bound is known only at run time, and a launcher that flattens
# (B, H) into one grid axis.


# %%
# --8<-- [start:tiles2d]
@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, m_ptr, L, S, E: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m, bh = tl.program_id(0), tl.program_id(1)  # query block, B·H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)  # (BLOCK_M,) rows
    offs_e = tl.arange(0, E)  # (E,) columns: a power of two, >= 16
    q_ptrs = q_ptr + bh * L * E + offs_m[:, None] * E + offs_e[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < L, other=0.0)  # (BLOCK_M, E)
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)  # running row max
    for start_n in range(0, S, BLOCK_N):  # S is known only at run time
        offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,) key rows
        kt_ptrs = k_ptr + bh * S * E + offs_e[:, None] + offs_n[None, :] * E
        kt = tl.load(kt_ptrs, mask=offs_n[None, :] < S, other=0.0)  # (E, BN)
        s = tl.dot(q, kt)  # (BLOCK_M, BLOCK_N), accumulated in float32
        s = tl.where(offs_n[None, :] < S, s, float("-inf"))  # past S: lose
        m = tl.maximum(m, tl.max(s, axis=1))  # element-wise, of a reduction
        s_ptrs = s_ptr + bh * L * S + offs_m[:, None] * S + offs_n[None, :]
        ok = (offs_m[:, None] < L) & (offs_n[None, :] < S)  # (BM, BN)
        tl.store(s_ptrs, s, mask=ok)
    tl.store(m_ptr + bh * L + offs_m, m, mask=offs_m < L)


def scores_and_row_max(q, k, block_m=16, block_n=16):
    """q (B, H, L, E), k (B, H, S, E), E a power of two >= 16: the
    scores q kᵀ (B, H, L, S) and each row's maximum (B, H, L), float32."""
    B, H, L, E = q.shape
    S = k.shape[2]
    # one contiguous (B·H, L, E) block: head bh starts at bh·L·E
    q_flat = q.contiguous().view(B * H, L, E)
    k_flat = k.contiguous().view(B * H, S, E)
    s = torch.empty(B * H, L, S, dtype=torch.float32, device=q.device)
    m = torch.empty(B * H, L, dtype=torch.float32, device=q.device)
    n_blocks = triton.cdiv(L, block_m)  # ⌈L / block_m⌉ query blocks
    scores_kernel[(n_blocks, B * H)](q_flat, k_flat, s, m, L, S, E,
                                     BLOCK_M=block_m, BLOCK_N=block_n)
    return s.reshape(B, H, L, S), m.reshape(B, H, L)


torch.manual_seed(0)
q = torch.randn(2, 3, 20, 16, device=device).half()  # L = 20: ragged
k = torch.randn(2, 3, 37, 16, device=device).half()  # S = 37: ragged
s, m = scores_and_row_max(q, k)
expected = q.float() @ k.float().transpose(-1, -2)
assert torch.allclose(s, expected, atol=1e-3)
assert torch.equal(m, s.amax(dim=-1))
# --8<-- [end:tiles2d]

# %% [markdown]
# ## Looking inside a kernel
#
# At L = S = 16, with one block, a kernel's values are small enough to read.
# `tl.static_print` runs once, when the kernel is compiled (on a GPU it shows shapes and
# dtypes; the interpreter shows the values); `tl.device_print` runs in every program.


# %%
# --8<-- [start:peek]
@triton.jit
def peek_kernel(q_ptr, E: tl.constexpr, BLOCK_M: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_e = tl.arange(0, E)
    offsets = offs_m[:, None] * E + offs_e[None, :]  # (BLOCK_M, E)
    tl.static_print("offsets of the q tile:", offsets)
    q = tl.load(q_ptr + offsets)
    tl.device_print("row sums", tl.sum(q, axis=1))


x16 = torch.arange(256, dtype=torch.float32, device=device).reshape(16, 16)
peek_kernel[(1,)](x16, E=16, BLOCK_M=16)  # one program, 16 rows of 16
# --8<-- [end:peek]

# %% [markdown]
# ## An autograd function of your own
#
# The pattern `FlashAttention` follows, on the smallest example: exp's forward saves its output,
# which is all its backward needs, as the attention forward saves O and lse.


# %%
# --8<-- [start:function]
class Exp(torch.autograd.Function):
    """y = exp(x), with the gradient read from the saved output."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)  # keep what the backward pass will need
        return y

    @staticmethod
    def backward(ctx, grad_y):  # receives dLoss/dy, returns dLoss/dx
        (y,) = ctx.saved_tensors
        return grad_y * y  # d exp(x) / dx = exp(x) = y


x = torch.randn(5, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(Exp.apply, (x,))  # against finite differences
# --8<-- [end:function]

# %% [markdown]
# ## The course's kernels against PyTorch
#
# Small sizes, so that the interpreter finishes in a moment: B = 1, H = 2, L = 16 new queries
# against S = 48 keys, causal, E = Ev = 32.

# %%
# --8<-- [start:kernel]
x = torch.randn(4, 300, device=device)  # 4 rows of 300: 512 lanes each
assert torch.allclose(ex.softmax_rows(x), torch.softmax(x, dim=1), atol=1e-6)

q = torch.randn(1, 2, 16, 32, device=device)  # (B, H, L, E)
k = torch.randn(1, 2, 48, 32, device=device)  # (B, H, S, E)
v = torch.randn(1, 2, 48, 32, device=device)  # (B, H, S, Ev)
out, lse = ex.flash_attention_forward(q, k, v, is_causal=True)

# bottom-right causal mask: query i at position S - L + i = 32 + i
keep = torch.ones(16, 48, dtype=torch.bool, device=device).tril(diagonal=32)
sdpa = torch.nn.functional.scaled_dot_product_attention
expected = sdpa(q, k, v, attn_mask=keep)
assert torch.allclose(out, expected, atol=1e-5)
scores = (q @ k.transpose(-1, -2) / 32**0.5).masked_fill(~keep, -math.inf)
assert torch.allclose(lse, torch.logsumexp(scores, dim=-1), atol=1e-5)
# --8<-- [end:kernel]

# %% [markdown]
# ## Gradients through the autograd function
#
# The backward pass rebuilds P from lse; its gradients match PyTorch's own attention.

# %%
# --8<-- [start:autograd]
q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
ex.FlashAttention.apply(q, k, v, True).square().sum().backward()
ours = [t.grad for t in (q, k, v)]

q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
sdpa(q2, k2, v2, attn_mask=keep).square().sum().backward()
for got, want in zip(ours, [q2.grad, k2.grad, v2.grad]):
    assert torch.allclose(got, want, atol=1e-4)
# --8<-- [end:autograd]

# %% [markdown]
# ## Why D = rowsum(dO ∘ O)
#
# D_i = Σ_j P_ij dP_ij with dP = dO Vᵀ, and Σ_j P_ij v_j is o_i: the backward pass gets D from
# two (L, Ev) tensors instead of an (L, S) one.

# %%
# --8<-- [start:delta]
torch.manual_seed(1)
s = torch.randn(24, 100, dtype=torch.float64)  # scores (L, S)
p = torch.softmax(s, dim=1)
v = torch.randn(100, 8, dtype=torch.float64)  # (S, Ev)
o = p @ v  # (L, Ev)
d_o = torch.randn(24, 8, dtype=torch.float64)  # upstream gradient of O
d_p = d_o @ v.T  # (L, S)
assert torch.allclose((p * d_p).sum(dim=1), (d_o * o).sum(dim=1))
# --8<-- [end:delta]
