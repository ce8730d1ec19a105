"""The topic 8 reference (solutions/ex08_flash_attention.py) against float64 attention.

Everything runs on the CPU through Triton's interpreter, which must be on before ``triton`` is
imported (it decides at ``@triton.jit`` time), hence the environment line above the import.
Sizes stay small: the interpreter costs a few milliseconds per key block per program
(docs/design/exercise-api.md, "How topic 8 is graded").
"""

from __future__ import annotations

import doctest
import math
import os

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import torch
import torch.nn.functional as F
from triton.runtime import interpreter

from solutions import ex08_flash_attention as fa

F32 = {"rtol": 1.3e-6, "atol": 1e-5}  # float32 defaults (docs/design/interface.md)


def _bottom_right(L: int, S: int) -> torch.Tensor:
    """(L, S) bool, True = may attend: query i sits at absolute position S − L + i."""
    return torch.arange(S)[None, :] <= torch.arange(S - L, S)[:, None]


def _attention64(q, k, v, is_causal=False, scale=None):
    """Plain attention in float64: (O, lse), the yardstick for every forward test."""
    q, k, v = q.double(), k.double(), v.double()
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    s = (q @ k.mT) * scale  # (B, H, L, S)
    if is_causal:
        s = s.masked_fill(~_bottom_right(L, S), float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)


def _fa2_recipe(q, k, v, is_causal=False):
    """FlashAttention-2's numerics done right: float32 scores, P rounded to the input dtype
    before P·V, float32 sums, O rounded once (docs/design/exercise-api.md, "How topic 8 is
    graded")."""
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    s = (q.float() @ k.float().mT) / math.sqrt(E)
    if is_causal:
        s = s.masked_fill(~_bottom_right(L, S), float("-inf"))
    p = torch.exp(s - s.amax(dim=-1, keepdim=True))
    o = (p.to(q.dtype).float() @ v.float()) / p.sum(dim=-1, keepdim=True)
    return o.to(q.dtype)


def _qkv(B, H, L, S, E, Ev, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = ((B, H, L, E), (B, H, S, E), (B, H, S, Ev))
    return tuple(torch.randn(sh, generator=g, dtype=torch.float32).to(dtype) for sh in shapes)


def _max_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.double() - b.double()).abs().max().item()


# ------------------------------------------------------------------ softmax_rows


@pytest.mark.parametrize("N", [1, 37, 64, 100])
def test_softmax_rows_matches_float64(N):
    x = torch.randn(6, N, generator=torch.Generator().manual_seed(N)) * 4
    x[1] += 1000.0  # shifted logits must not overflow
    y = fa.softmax_rows(x)
    assert y.shape == x.shape and y.dtype == torch.float32
    torch.testing.assert_close(y, torch.softmax(x.double(), dim=-1).float(), **F32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_softmax_rows_half_precision_keeps_dtype(dtype):
    x = (torch.randn(4, 50, generator=torch.Generator().manual_seed(1)) * 3).to(dtype)
    y = fa.softmax_rows(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y, torch.softmax(x.double(), dim=-1).to(dtype))


def test_softmax_rows_masked_entries_and_all_inf_rows():
    x = torch.randn(3, 20, generator=torch.Generator().manual_seed(2))
    x[0] = float("-inf")  # nothing to attend to: zeros, not NaN
    x[1, :7] = float("-inf")
    y = fa.softmax_rows(x)
    assert torch.equal(y[0], torch.zeros(20))
    assert torch.equal(y[1, :7], torch.zeros(7))
    torch.testing.assert_close(y[1:], torch.softmax(x[1:].double(), dim=-1).float(), **F32)


def test_softmax_rows_widest_row_and_non_contiguous_input():
    wide = torch.randn(1, 2**16, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(fa.softmax_rows(wide), torch.softmax(wide, dim=-1), **F32)
    x = torch.randn(9, 5, generator=torch.Generator().manual_seed(4)).T  # (5, 9) strided
    torch.testing.assert_close(fa.softmax_rows(x), torch.softmax(x, dim=-1), **F32)
    assert fa.softmax_rows(torch.empty(0, 4)).shape == (0, 4)


@pytest.mark.parametrize(("x", "match"), [
    (torch.zeros(5), r"2-D tensor \(M, N\), got \(5,\)"),
    (torch.zeros(2, 3, 4), r"got \(2, 3, 4\)"),
    (torch.zeros(3, 0), r"1 <= N <= 65536.*\(3, 0\)"),
    (torch.zeros(1, 2**16 + 1), r"\(1, 65537\)"),
    (torch.zeros(2, 2, dtype=torch.float64), "float64"),
    (torch.zeros(2, 2, dtype=torch.int32), "int32"),
    (torch.zeros(2, 2, device="meta"), "meta"),
], ids=["1-D", "3-D", "N=0", "N>2^16", "float64", "int32", "meta"])
def test_softmax_rows_rejects_bad_input(x, match):
    with pytest.raises(ValueError, match=match):
        fa.softmax_rows(x)


def test_kernels_refuse_cpu_tensors_without_the_interpreter(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        fa.softmax_rows(torch.zeros(2, 3))
    q, k, v = _qkv(1, 1, 4, 4, 8, 8)
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        fa.flash_attention_forward(q, k, v)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        fa.FlashAttention.apply(q, k, v)


# ------------------------------------------------------------------ flash_attention_forward

FORWARD_CASES = [
    # B, H, L, S, E, Ev, is_causal, block_m, block_n
    (1, 2, 5, 7, 3, 5, False, 16, 16),  # everything ragged, E and Ev tiny
    (2, 1, 33, 70, 20, 9, False, 16, 32),  # E ≠ Ev, neither a power of two
    (1, 2, 40, 40, 16, 16, True, 16, 16),  # causal, L = S, ragged last block
    (1, 1, 17, 90, 24, 40, True, 32, 16),  # causal with L < S: aligned bottom-right
    (1, 1, 64, 64, 32, 32, True, 64, 64),
    (1, 1, 1, 33, 128, 1, True, 16, 32),  # one query (decoding), widest E, Ev = 1
]


@pytest.mark.parametrize("case", FORWARD_CASES, ids=lambda c: "B{}H{}L{}S{}E{}Ev{}{}-{}x{}".format(
    *c[:6], "c" if c[6] else "", *c[7:]))
def test_forward_float32_matches_float64(case):
    B, H, L, S, E, Ev, causal, bm, bn = case
    q, k, v = _qkv(B, H, L, S, E, Ev, seed=L * S)
    o, lse = fa.flash_attention_forward(q, k, v, is_causal=causal, block_m=bm, block_n=bn)
    assert o.shape == (B, H, L, Ev) and o.dtype == torch.float32
    assert lse.shape == (B, H, L) and lse.dtype == torch.float32
    ref_o, ref_lse = _attention64(q, k, v, causal)
    torch.testing.assert_close(o, ref_o.float(), **F32)
    torch.testing.assert_close(lse, ref_lse.float(), **F32)


def test_forward_agrees_with_torch_sdpa_where_its_mask_aligns():
    q, k, v = _qkv(2, 2, 24, 24, 16, 16, seed=5)
    for causal in (False, True):  # L = S: top-left and bottom-right are the same mask
        o, _ = fa.flash_attention_forward(q, k, v, is_causal=causal)
        torch.testing.assert_close(o, F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                   **F32)
    q, k, v = _qkv(1, 2, 8, 40, 16, 8, seed=6)  # L < S: give SDPA the bottom-right mask
    o, _ = fa.flash_attention_forward(q, k, v, is_causal=True)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=_bottom_right(8, 40))
    torch.testing.assert_close(o, sdpa, **F32)


def test_forward_scale_and_strided_inputs():
    q, k, v = _qkv(1, 2, 20, 30, 8, 8, seed=7)
    o, lse = fa.flash_attention_forward(q, k, v, scale=0.7)
    ref_o, ref_lse = _attention64(q, k, v, scale=0.7)
    torch.testing.assert_close(o, ref_o.float(), **F32)
    torch.testing.assert_close(lse, ref_lse.float(), **F32)
    o, lse = fa.flash_attention_forward(q, k, v, scale=0.0)  # uniform weights: mean of v
    torch.testing.assert_close(o, v.mean(dim=2, keepdim=True).expand_as(o), **F32)
    torch.testing.assert_close(lse, torch.full_like(lse, math.log(30)), **F32)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # same values, (B, L, H, E) storage
    torch.testing.assert_close(fa.flash_attention_forward(qt, k, v)[0],
                               fa.flash_attention_forward(q, k, v)[0], rtol=0, atol=0)


@pytest.mark.parametrize(("L", "S", "causal"), [(64, 64, False), (48, 96, True), (16, 512, True)])
def test_forward_float16_within_twice_the_fa2_recipe(L, S, causal):
    """The grader's yardstick (docs/design/exercise-api.md): error ≤ 2 × recipe's + 1e-5."""
    q, k, v = _qkv(1, 1, L, S, 32, 32, dtype=torch.float16, seed=S)
    o, lse = fa.flash_attention_forward(q, k, v, is_causal=causal)
    assert o.dtype == torch.float16 and lse.dtype == torch.float32
    ref_o, ref_lse = _attention64(q, k, v, causal)  # float64 answer for the fp16 inputs
    recipe = _max_err(_fa2_recipe(q, k, v, causal), ref_o)
    assert _max_err(o, ref_o) <= 2 * recipe + 1e-5, (_max_err(o, ref_o), recipe)
    torch.testing.assert_close(lse, ref_lse.float(), **F32)


def _to_bf16_toward_zero(x: torch.Tensor) -> torch.Tensor:
    """float32 → bfloat16 by dropping the low 16 bits, as Triton 3.9's interpreter casts."""
    return (x.float().view(torch.int32) & -65536).view(torch.float32).to(torch.bfloat16)


def test_forward_bfloat16_works_through_the_interpreter():
    """Tiles are cast to float32 before tl.dot on the CPU (the interpreter multiplies
    bfloat16's raw storage otherwise), so bfloat16 is right here too, up to the interpreter's
    float32 → bfloat16 cast, which truncates where a GPU rounds to nearest."""
    q, k, v = _qkv(1, 2, 20, 50, 16, 16, dtype=torch.bfloat16, seed=8)
    o, _ = fa.flash_attention_forward(q, k, v, is_causal=True)
    ref_o, _ = _attention64(q, k, v, True)
    assert o.dtype == torch.bfloat16
    s = (q.float() @ k.float().mT) / 4.0  # the recipe again, with truncating casts
    s = s.masked_fill(~_bottom_right(20, 50), float("-inf"))
    p = torch.exp(s - s.amax(dim=-1, keepdim=True))
    recipe = _to_bf16_toward_zero((_to_bf16_toward_zero(p).float() @ v.float())
                                  / p.sum(dim=-1, keepdim=True))
    assert _max_err(o, ref_o) <= 2 * _max_err(recipe, ref_o) + 1e-5


def _count_dots(monkeypatch) -> list[int]:
    """Count the interpreter's tl.dot calls: two per key block a program visits."""
    calls = [0]
    real = interpreter.InterpreterBuilder.create_dot

    def counting(self, *args, **kwargs):
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(interpreter.InterpreterBuilder, "create_dot", counting)
    return calls


def test_causal_forward_never_visits_key_blocks_wholly_in_the_future(monkeypatch):
    q, k, v = _qkv(1, 1, 64, 64, 16, 16)
    calls = _count_dots(monkeypatch)
    fa.flash_attention_forward(q, k, v)
    assert calls[0] == 2 * 4 * 4  # 4 query blocks × 4 key blocks
    calls[0] = 0
    fa.flash_attention_forward(q, k, v, is_causal=True)
    assert calls[0] == 2 * (1 + 2 + 3 + 4)  # query block i stops after key block i
    calls[0] = 0
    q, k, v = _qkv(1, 1, 16, 64, 16, 16)  # the 16 queries are the last 16 positions
    fa.flash_attention_forward(q, k, v, is_causal=True)
    assert calls[0] == 2 * 4


def test_forward_allocates_no_score_grid():
    """Every tensor the call creates holds at most as many bytes as an input or the output
    (the interpreter copies storages as bytes); an (L, S) float32 grid would hold 12 KiB."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Sizes(TorchDispatchMode):
        largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    Sizes.largest = max(Sizes.largest, t.numel() * t.element_size())
            return out

    q, k, v = _qkv(1, 1, 48, 64, 16, 16)
    with Sizes():
        fa.flash_attention_forward(q, k, v, is_causal=True)
    assert Sizes.largest <= max(t.numel() * 4 for t in (q, k, v)) < 48 * 64 * 4


def test_forward_empty_batch():
    q, k, v = _qkv(0, 2, 4, 4, 8, 8)
    o, lse = fa.flash_attention_forward(q, k, v)
    assert o.shape == (0, 2, 4, 8) and lse.shape == (0, 2, 4)


def _forward_errors():
    q, k, v = _qkv(1, 2, 4, 6, 8, 8)
    half = (q.half(), k.half(), v.half())
    return [
        ((q[0], k, v), {}, r"q must be a 4-D tensor .*\(2, 4, 8\)"),
        ((q, k, v.half()), {}, "one dtype.*float16"),
        (half[:2] + (v.half().double(),), {}, "one dtype"),
        ((q.double(), k.double(), v.double()), {}, "bfloat16, got torch.float64"),
        ((q, k.to("meta"), v), {}, "one device"),
        ((q.to("meta"), k.to("meta"), v.to("meta")), {}, "Triton runs on CUDA"),
        ((q, k[:, :1], v), {}, r"k must be \(B, H, S, E\).*\(1, 1, 6, 8\)"),
        ((q, k[..., :4], v), {}, r"k must be .*\(1, 2, 6, 4\)"),
        ((q, k, v[:, :, :5]), {}, r"v must be .*\(1, 2, 5, 8\)"),
        ((q[:, :, :0], k, v), {}, r"L and S must be >= 1"),
        ((q[..., :0], k[..., :0], v), {}, r"E = 0"),
        ((*_qkv(1, 1, 2, 2, 129, 8),), {}, r"E = 129"),
        ((*_qkv(1, 1, 2, 2, 8, 130),), {}, r"Ev = 130"),
        ((*_qkv(1, 1, 7, 6, 8, 8),), {"is_causal": True}, r"L = 7, S = 6"),
        ((q, k, v), {"scale": float("nan")}, "finite real number, got nan"),
        ((q, k, v), {"scale": float("inf")}, "finite real number, got inf"),
        ((q, k, v), {"scale": True}, "finite real number, got True"),
        ((q, k, v), {"scale": "0.5"}, "finite real number, got '0.5'"),
        ((q, k, v), {"block_m": 8}, "block_m must be 16, 32, 64 or 128, got 8"),
        ((q, k, v), {"block_n": 256}, "block_n must be .* got 256"),
        ((q, k, v), {"block_n": 24}, "got 24"),
        ((q, k, v), {"block_m": 16.0}, r"got 16\.0"),
        ((q, k, v), {"block_m": True}, "got True"),
    ]


@pytest.mark.parametrize(("args", "kwargs", "match"), _forward_errors(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_forward_rejects_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fa.flash_attention_forward(*args, **kwargs)


# ------------------------------------------------------------------ flash_attention_backward


def _autograd64(q, k, v, do, is_causal=False):
    """Gradients of plain float64 attention by autograd, and its (O, lse)."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    o, lse = _attention64(q, k, v, is_causal)
    o.backward(do.double())
    return (q.grad, k.grad, v.grad), o.detach(), lse.detach()


@pytest.mark.parametrize(("L", "S", "E", "Ev", "causal"),
                         [(7, 300, 12, 5, False), (20, 300, 8, 16, True), (33, 33, 16, 16, True)])
def test_backward_float64_matches_autograd(L, S, E, Ev, causal):
    """S = 300 spans three key blocks of the backward's loop."""
    q, k, v = (t.double() for t in _qkv(2, 1, L, S, E, Ev, seed=S + L))
    do = torch.randn(2, 1, L, Ev, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    grads, o, lse = _autograd64(q, k, v, do, causal)
    got = fa.flash_attention_backward(q, k, v, o, lse, do, is_causal=causal)
    for name, g, ref in zip("qkv", got, grads):
        assert g.dtype == torch.float64 and g.shape == ref.shape, name
        torch.testing.assert_close(g, ref, msg=lambda m, n=name: f"d{n}: {m}")


def test_backward_from_the_forward_float32_and_float16():
    q, k, v = _qkv(1, 2, 24, 40, 16, 8, seed=10)
    do = torch.randn(1, 2, 24, 8, generator=torch.Generator().manual_seed(11))
    o, lse = fa.flash_attention_forward(q, k, v, is_causal=True)
    got = fa.flash_attention_backward(q, k, v, o, lse, do, is_causal=True)
    grads, _, _ = _autograd64(q, k, v, do, True)
    for g, ref in zip(got, grads):
        assert g.dtype == torch.float32
        torch.testing.assert_close(g, ref.float(), rtol=1e-4, atol=1e-5)
    h = [t.half() for t in (q, k, v, o, do)]
    dq, dk, dv = fa.flash_attention_backward(*h[:4], lse, h[4], is_causal=True)
    assert (dq.dtype, dk.dtype, dv.dtype) == (torch.float16,) * 3
    assert dk.shape == k.shape and dv.shape == v.shape


def _backward_errors():
    q, k, v = _qkv(1, 2, 4, 6, 8, 8)
    o, do, lse = torch.zeros(1, 2, 4, 8), torch.zeros(1, 2, 4, 8), torch.zeros(1, 2, 4)
    base = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do}

    def given(**changes):
        return tuple({**base, **changes}.values())

    return [
        (given(o=o[0]), {}, r"o must be a 4-D tensor, got \(2, 4, 8\)"),
        (given(lse=o), {}, r"lse must be a 3-D tensor"),
        (given(do=do.double()), {}, "one dtype"),
        (given(lse=lse.long()), {}, "lse must be floating point"),
        (given(q=q.int(), k=k.int(), v=v.int(), o=o.int(), do=do.int()), {}, "int32"),
        (given(v=v.to("meta")), {}, "one device"),
        (given(k=k[:, :, :5]), {}, r"v must have shape \(1, 2, 5, 8\)"),
        (given(o=o[..., :3]), {}, r"o must have shape \(1, 2, 4, 8\)"),
        (given(lse=lse[..., :3]), {}, r"lse must have shape \(1, 2, 4\)"),
        (given(k=k[..., :3]), {}, r"k must have shape \(1, 2, 6, 8\)"),
        (given(q=torch.zeros(1, 2, 7, 8), o=torch.zeros(1, 2, 7, 8), do=torch.zeros(1, 2, 7, 8),
               lse=torch.zeros(1, 2, 7)), {"is_causal": True}, "L = 7, S = 6"),
        (given(), {"scale": float("-inf")}, "finite real number"),
    ]


@pytest.mark.parametrize(("args", "kwargs", "match"), _backward_errors(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_backward_rejects_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fa.flash_attention_backward(*args, **kwargs)


# ------------------------------------------------------------------ FlashAttention


@pytest.mark.parametrize(("L", "S", "causal"), [(20, 20, False), (12, 45, True)])
def test_autograd_function_matches_sdpa_gradients(L, S, causal):
    q, k, v = _qkv(2, 2, L, S, 16, 24, seed=12)
    do = torch.randn(2, 2, L, 24, generator=torch.Generator().manual_seed(13))
    mine = [t.clone().requires_grad_() for t in (q, k, v)]
    theirs = [t.clone().requires_grad_() for t in (q, k, v)]
    o = fa.FlashAttention.apply(*mine, causal)
    mask = _bottom_right(L, S) if causal else None  # SDPA's is_causal is top-left for L < S
    ref = F.scaled_dot_product_attention(*theirs, attn_mask=mask)
    torch.testing.assert_close(o, ref, **F32)
    o.backward(do)
    ref.backward(do)
    for name, a, b in zip("qkv", mine, theirs):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5,
                                   msg=lambda m, n=name: f"d{n}: {m}")


def test_autograd_function_defaults_and_errors():
    q, k, v = (t.requires_grad_() for t in _qkv(1, 1, 16, 16, 8, 8, seed=14))
    o = fa.FlashAttention.apply(q, k, v)  # is_causal defaults to False
    torch.testing.assert_close(o, _attention64(q.detach(), k.detach(), v.detach())[0].float(),
                               **F32)
    assert o.requires_grad
    with pytest.raises(ValueError, match="L = 16, S = 8"):
        fa.FlashAttention.apply(q, k[:, :, :8], v[:, :, :8], True)


def test_docstring_examples_hold():
    result = doctest.testmod(fa, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
