"""GPU checks: the reference attention and LoRA on CUDA, and the suites' ``gpu=True`` tests
graded through the real sandbox (``pytest -m gpu tests/test_gpu.py``; scripts/gpu_check.sh).

Everything here is skipped, with the reason, where ``torch.cuda.is_available()`` is False.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from autograder.grading import runner
from autograder.limits import Limits
from autograder.driver.slot import Slot
from tests.helpers import SOLUTIONS, grade_folder

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="needs a CUDA device: torch.cuda.is_available() is False"),
]

GPU_TOPICS = ["ex04_svd_lora", "ex05_attention"]
HALF = (torch.float16, torch.bfloat16)
#: (rtol, atol relative to max|v|): half-precision output of float32 scores and softmax
TOL = {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}


def _close(got: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype, scale: float,
           what: str) -> None:
    rtol, c = TOL[dtype]
    torch.testing.assert_close(got.double().cpu(), expected.double().cpu(), rtol=rtol,
                               atol=c * scale, msg=lambda m: f"{what}: {m}")


def test_reference_attention_on_cuda():
    from solutions import ex05_attention as ref

    gen = torch.Generator().manual_seed(0)
    mask = ref.causal_mask(3, 7, device="cuda")
    assert mask.device.type == "cuda" and mask.dtype == torch.bool
    for dtype in HALF:
        cu = {"device": "cuda", "dtype": dtype}
        for L, S in ((128, 128), (16, 128)):
            q, k, v = (torch.randn(2, 8, n, 64, generator=gen) for n in (L, S, S))
            q, k, v = (t.to(**cu) for t in (q, k, v))
            out = ref.scaled_dot_product_attention(q, k, v, is_causal=True)
            assert out.dtype == dtype and out.device.type == "cuda" and out.shape == (2, 8, L, 64)
            assert torch.isfinite(out).all()
            expected = ref.scaled_dot_product_attention(q.double().cpu(), k.double().cpu(),
                                                        v.double().cpu(), is_causal=True)
            scale = float(v.abs().max())
            _close(out, expected, dtype, scale, f"{dtype} L={L} S={S} vs float64")
            # PyTorch's is_causal aligns top-left when L != S: compare there with our mask
            if L == S:
                theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                explicit = ref.causal_mask(L, S, device="cuda")
                theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=explicit)
            _close(out, theirs, dtype, 2 * scale, f"{dtype} L={L} S={S} vs torch")
        # scores past float16's 65504 must not overflow: computed in float32
        k = (torch.randn(2, 16, 32, generator=gen) * 200).to(**cu)
        q = k[:, torch.randperm(16, generator=gen)]
        v = torch.randn(2, 16, 8, generator=gen).to(**cu)
        out = ref.scaled_dot_product_attention(q, k, v)
        assert torch.isfinite(out).all(), f"{dtype}: large scores overflowed"
        # a fully masked row gives zeros
        m = torch.ones(16, 16, dtype=torch.bool, device="cuda")
        m[3] = False
        out = ref.scaled_dot_product_attention(q, k, v, mask=m)
        assert torch.equal(out[:, 3], torch.zeros_like(out[:, 3]))


def test_reference_mha_on_cuda():
    from solutions import ex05_attention as ref

    torch.manual_seed(0)
    mha = ref.MultiHeadAttention(256, 8).to("cuda", torch.bfloat16)
    x = torch.randn(2, 64, 256, device="cuda", dtype=torch.bfloat16)
    pad = torch.ones(2, 64, 64, dtype=torch.bool, device="cuda")
    pad[1, :, 60:] = False
    out = mha(x, mask=pad, is_causal=True)
    assert out.shape == x.shape and out.dtype == torch.bfloat16 and out.device.type == "cuda"
    expected = mha.double()(x.double(), mask=pad, is_causal=True)
    _close(out, expected, torch.bfloat16, 2 * float(expected.abs().max()), "MHA bf16 vs float64")


def test_reference_lora_on_cuda():
    from solutions import ex04_svd_lora as ref

    torch.manual_seed(0)
    base = torch.nn.Linear(128, 64, device="cuda", dtype=torch.float16)
    lora = ref.LoRALinear(base, r=8, alpha=16)
    assert lora.lora_A.device.type == "cuda" and lora.lora_A.dtype == torch.float16
    x = torch.randn(4, 128, device="cuda", dtype=torch.float16)
    assert torch.equal(lora(x), base(x))
    with torch.no_grad():
        lora.lora_B.normal_(std=0.1)
    merged = lora.merged()
    assert merged.weight.device.type == "cuda" and merged is not base
    _close(merged(x), lora(x), torch.float16, 4 * float(lora(x).abs().max()), "merged vs unmerged")


def _plain_attention(q, k, v, is_causal):
    """float64 attention with topic 5's bottom-right causal mask: the yardstick for topic 8."""
    q, k, v = (t.double() for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if is_causal:
        L, S = scores.shape[-2:]
        keep = torch.arange(S, device=q.device) <= torch.arange(S - L, S, device=q.device)[:, None]
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, -1) @ v


def test_reference_flash_attention_on_cuda():
    """Topic 8's reference kernels compiled for the GPU (not interpreted), in half precision
    and float32, at tile sizes a GPU likes."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("TRITON_INTERPRET=1 in this process: the kernels would be interpreted")
    from solutions import ex08_flash_attention as ref

    gen = torch.Generator().manual_seed(8)
    for dtype in (torch.float32, *HALF):
        cu = {"device": "cuda", "dtype": dtype}
        for L, S, causal, blocks in ((256, 256, True, (64, 64)), (100, 300, True, (128, 64)),
                                     (64, 1000, False, (32, 128))):
            q, k, v = (torch.randn(2, 4, n, 64, generator=gen).to(**cu) for n in (L, S, S))
            o, lse = ref.flash_attention_forward(q, k, v, is_causal=causal, block_m=blocks[0],
                                                 block_n=blocks[1])
            assert o.dtype == dtype and o.device.type == "cuda" and lse.dtype == torch.float32
            expected = _plain_attention(q, k, v, causal)
            tol = TOL.get(dtype, (1.3e-6, 1e-5))
            torch.testing.assert_close(o.double(), expected, rtol=tol[0],
                                       atol=tol[1] * float(v.abs().max()))
        x = torch.randn(37, 1000, generator=gen).to(**cu)
        x[5] = float("-inf")
        y = ref.softmax_rows(x)
        expected = torch.softmax(x.double(), -1).nan_to_num(0.0)
        torch.testing.assert_close(y.double(), expected, rtol=TOL.get(dtype, (1.3e-6,))[0],
                                   atol=1e-3 if dtype != torch.float32 else 1e-6)
    # gradients against SDPA's, bottom-right causal mask given explicitly
    q, k, v = (torch.randn(1, 2, n, 64, generator=gen).to("cuda", torch.float16).requires_grad_()
               for n in (96, 160, 160))
    ref.FlashAttention.apply(q, k, v, True).float().square().sum().backward()
    ours = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    keep = torch.arange(160, device="cuda") <= torch.arange(64, 160, device="cuda")[:, None]
    F.scaled_dot_product_attention(q, k, v, attn_mask=keep).float().square().sum().backward()
    for name, a, t in zip("qkv", ours, (q, k, v)):
        _close(a, t.grad, torch.float16, 4 * float(t.grad.abs().max()), f"d{name} vs SDPA")


def test_flash_attention_gpu_tests_pass_in_a_compiling_slot():
    """Topic 8's gpu=True tests, graded through the sandbox by workers that compile Triton
    kernels for CUDA (Slot(triton_interpret=False)), the way scripts/gpu_check.sh runs them."""
    with Slot(0, limits=_worker_limits(), triton_interpret=False) as slot:
        results = grade_folder(slot, SOLUTIONS, ["ex08_flash_attention"])
    gpu = {n: r for n, r in results.items() if r.spec.gpu}
    assert gpu, "no gpu=True tests in topic 8"
    failed = {n: r.message for n, r in gpu.items() if not r.passed}
    assert not failed, f"failed through a compiling slot: {failed}"


def _worker_limits() -> Limits:
    """The sandbox's default limits; COURSE_GPU_WORKER_AS_GIB overrides the address space
    (to diagnose a CUDA context that cannot start under the default cap)."""
    gib = os.environ.get("COURSE_GPU_WORKER_AS_GIB")
    return Limits(address_space=int(float(gib) * 2**30)) if gib else Limits()


def test_gpu_suite_tests_pass_through_the_sandbox():
    """The solutions pass every test of the torch topics, the gpu=True ones included, when
    graded through the sandbox on this machine."""
    assert runner.cuda_available()
    with Slot(0, limits=_worker_limits()) as slot:
        results = grade_folder(slot, SOLUTIONS, GPU_TOPICS)
    gpu = {n: r for n, r in results.items() if r.spec.gpu}
    assert gpu, "no gpu=True tests were collected"
    failed = {n: r.message for n, r in results.items() if not r.passed}
    assert not failed, f"failed through the sandbox: {failed}"
