#!/usr/bin/env bash
# GPU check for a lent GPU machine (docs/design/interface.md, the GPU): run the gpu-marked repository tests
# (reference attention/LoRA on CUDA, and the suites' gpu=True tests graded through the sandbox),
# then time the reference scaled_dot_product_attention against PyTorch's fused kernel, and topic 8's
# FlashAttention kernel against SDPA's flash backend (time and TFLOP/s), printing markdown tables
# LAST; on a GPU the last table is also written to docs/measured/flash-attention-gpu.md, which
# lesson 8 includes. Run from the repository root; takes a few minutes.
#
#   scripts/gpu_check.sh              # on a CUDA machine (torch with CUDA preinstalled)
#   scripts/gpu_check.sh --cpu-smoke  # anywhere: tiny CPU timing only, to check the script
#   PYTHON=/path/to/python scripts/gpu_check.sh
set -u
cd "$(dirname "$0")/.." || exit 2
PY="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
SMOKE=0
[ "${1:-}" = "--cpu-smoke" ] && SMOKE=1

# Install nothing but the few test dependencies, and only when they are missing.
if ! "$PY" -c "import numpy, pytest, hypothesis, rich, nbformat, triton" 2>/dev/null; then
  echo "gpu_check: installing missing test dependencies" >&2
  "$PY" -m pip install -q numpy pytest hypothesis rich nbformat triton \
    || echo "gpu_check: pip install failed (offline?); continuing with what is installed" >&2
fi

status=0
if [ "$SMOKE" = 0 ]; then
  "$PY" -m pytest -m gpu tests/test_gpu.py -q -p no:cacheprovider || status=$?
fi

"$PY" - "$@" <<'PYEOF' || status=$?
"""Time the course's reference attention against torch.nn.functional.scaled_dot_product_attention."""
import sys
import time

import torch
import torch.nn.functional as F

from solutions.ex05_attention import scaled_dot_product_attention as ours

smoke = "--cpu-smoke" in sys.argv[1:]
if not smoke and not torch.cuda.is_available():
    print("gpu_check: no CUDA device (torch.cuda.is_available() is False); "
          "use --cpu-smoke to try the script on the CPU", file=sys.stderr)
    sys.exit(1)
device = "cpu" if smoke else "cuda"
B, H, D = (1, 2, 16) if smoke else (4, 16, 64)
lengths = (16, 64) if smoke else (512, 1024, 2048, 4096)
warmup, iters = (1, 2) if smoke else (3, 10)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def bench(fn, *args, **kwargs):
    for _ in range(warmup):
        fn(*args, **kwargs)
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(*args, **kwargs)
    sync()
    return (time.perf_counter() - t0) / iters * 1e3  # ms per call


name = torch.cuda.get_device_name() if device == "cuda" else "CPU (smoke test)"
rows = []
gen = torch.Generator(device=device).manual_seed(0)
with torch.inference_mode():
    for dtype in (torch.float16, torch.bfloat16):
        for n in lengths:
            q, k, v = (torch.randn(B, H, n, D, device=device, dtype=dtype, generator=gen)
                       for _ in range(3))
            a = ours(q, k, v, is_causal=True)  # L == S: both causal masks coincide
            b = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            diff = (a.float() - b.float()).abs().max().item()
            t_ours = bench(ours, q, k, v, is_causal=True)
            t_torch = bench(F.scaled_dot_product_attention, q, k, v, is_causal=True)
            rows.append((str(dtype).removeprefix("torch."), n, t_ours, t_torch, diff))
            del q, k, v, a, b
            if device == "cuda":
                torch.cuda.empty_cache()

print()
print(f"Causal attention, B={B}, h={H}, d_h={D}, L = S, on {name} (torch {torch.__version__}):")
print()
print("| dtype | L = S | reference (ms) | torch SDPA (ms) | slowdown | max abs diff |")
print("|---|---:|---:|---:|---:|---:|")
for dt, n, t1, t2, diff in rows:
    print(f"| {dt} | {n} | {t1:.3f} | {t2:.3f} | {t1 / t2:.1f}x | {diff:.1e} |")
PYEOF

# Topic 8: the reference FlashAttention kernel (Triton) against SDPA's flash backend.
# On the CPU (--cpu-smoke) the kernel runs in Triton's interpreter, at toy sizes.
[ "$SMOKE" = 1 ] && export TRITON_INTERPRET=1
"$PY" - "$@" <<'PYEOF' || status=$?
"""Time and TFLOP/s of solutions.ex08_flash_attention.flash_attention_forward against
torch.nn.functional.scaled_dot_product_attention restricted to its flash backend."""
import sys
import time

import torch
import torch.nn.functional as F

from solutions.ex08_flash_attention import flash_attention_forward

smoke = "--cpu-smoke" in sys.argv[1:]
if not smoke and not torch.cuda.is_available():
    sys.exit(1)  # already said above
device = "cpu" if smoke else "cuda"
B, H = (1, 1) if smoke else (4, 16)
lengths = (32,) if smoke else (1024, 2048, 4096, 8192, 16384)
head_dims = (16,) if smoke else (64, 128)
#: the kernel's tiles on a GPU (the defaults, 16 x 16, suit the interpreter, not an H200)
blocks = {"block_m": 16, "block_n": 16} if smoke else {"block_m": 128, "block_n": 64}
warmup, iters = (1, 1) if smoke else (3, 10)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def bench(fn):
    for _ in range(warmup):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def sdpa(q, k, v, causal):
    if device != "cuda":
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


name = torch.cuda.get_device_name() if device == "cuda" else "CPU, Triton interpreter (smoke)"
rows = []
gen = torch.Generator(device=device).manual_seed(0)
with torch.inference_mode():
    for dtype in (torch.float16, torch.bfloat16):
        for d in head_dims:
            for n in lengths:
                for causal in (False, True):
                    q, k, v = (torch.randn(B, H, n, d, device=device, dtype=dtype, generator=gen)
                               for _ in range(3))
                    o, _ = flash_attention_forward(q, k, v, is_causal=causal, **blocks)
                    diff = (o.float() - sdpa(q, k, v, causal).float()).abs().max().item()
                    t_ours = bench(lambda: flash_attention_forward(q, k, v, is_causal=causal,
                                                                   **blocks))
                    t_sdpa = bench(lambda: sdpa(q, k, v, causal))
                    # 2 matmuls of 2·L·S·d FLOPs each; a causal mask halves the useful work
                    flops = 4 * B * H * n * n * d / (2 if causal else 1)
                    rows.append((str(dtype).removeprefix("torch."), d, n, causal,
                                 t_ours * 1e3, flops / t_ours / 1e12,
                                 t_sdpa * 1e3, flops / t_sdpa / 1e12, diff))
                    del q, k, v, o
                    if device == "cuda":
                        torch.cuda.empty_cache()

lines = [
    f"FlashAttention forward, B={B}, h={H}, L = S, tiles {blocks}, on {name} "
    f"(torch {torch.__version__}):",
    "",
    "| dtype | d_h | L = S | causal | ours (ms) | ours TFLOP/s | SDPA flash (ms) "
    "| SDPA TFLOP/s | ours / SDPA | max abs diff |",
    "|---|---:|---:|:-:|---:|---:|---:|---:|---:|---:|",
]
for dt, d, n, c, t1, f1, t2, f2, diff in rows:
    lines.append(f"| {dt} | {d} | {n} | {'yes' if c else 'no'} | {t1:.3f} | {f1:.1f} | {t2:.3f} "
                 f"| {f2:.1f} | {f1 / f2:.0%} | {diff:.1e} |")
print()
print("\n".join(lines))
if not smoke:
    # Lesson 8 includes this file (docs/lessons/08-flash-attention.md, "What real kernels
    # reach"): commit it to publish the measurement with the lesson.
    from pathlib import Path
    Path("docs/measured/flash-attention-gpu.md").write_text("\n".join(lines) + "\n")
    print("\ngpu_check: wrote docs/measured/flash-attention-gpu.md (lesson 8 includes it)")
PYEOF
exit "$status"
