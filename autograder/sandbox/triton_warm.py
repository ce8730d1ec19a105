"""A tiny Triton kernel of our own that the zygote launches once through the interpreter
(:func:`autograder.sandbox.zygote._warm_triton`), so that its workers' first launch skips the
interpreter's one-time set-up. Imported only there, after ``TRITON_INTERPRET=1`` is set: Triton
reads the flag when ``@triton.jit`` decorates, i.e. when this module is imported.

The kernel touches what topic 8's kernels do (loads and stores under a mask, a loop of
``tl.dot``, a call of another jitted function, row reductions, ``tl.where``, casts); what it
computes does not matter.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _rescale(x):
    return tl.exp2(x - tl.max(x, 1)[:, None])


@triton.jit
def _kernel(x_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    rows = r[:, None] < n
    x = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :], mask=rows, other=0.0)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for _ in range(0, 2):
        acc += tl.dot(_rescale(x), x.to(tl.float16).to(tl.float32))
    acc = tl.where(rows, acc / (tl.sum(acc, 1)[:, None] + 1.0), 0.0)
    tl.store(x_ptr + r[:, None] * BLOCK + r[None, :], acc, mask=rows)


def launch() -> None:
    """Launch the kernel once on a (16, 16) float32 CPU tensor of ones (no randomness drawn).

    Raises:
        whatever Triton raises (the caller treats the warm-up as optional).
    """
    with np.errstate(all="ignore"):
        _kernel[(1,)](torch.ones(16, 16), 4, BLOCK=16)
