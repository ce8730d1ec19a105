"""GPU checks: the reference attention and LoRA on CUDA, and the suites' ``gpu=True`` tests
graded through the real sandbox (``pytest -m gpu tests/test_gpu.py``; scripts/gpu_check.sh).

Everything here is skipped, with the reason, where ``torch.cuda.is_available()`` is False.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from autograder.grading import run as runner
from autograder.limits import Limits
from autograder.sandbox.slot import Slot
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
