"""Topic 8's banks checked directly, without the sandbox (fast; tests/test_banks.py grades them).

The wrong kernels are text edits of the bank's own correct ones (tests/banks/
wrong_ex08_flash_attention.py): here the edits are shown to apply exactly, each base to be
correct on its own, and each wrong forward kernel to differ from float64 attention on one small
input chosen to expose it. Kernels run through Triton's interpreter on CPU tensors, switched on
before any kernel is decorated.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import torch

from tests.banks import correct_ex08_flash_attention as correct
from tests.banks import wrong_ex08_flash_attention as wrong
from tests.helpers import with_replacement

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                reason="triton is not installed (topic 8 needs it)")

TOPIC = "ex08_flash_attention"


def _module(code: str, tmp_path, name: str):
    """The reference with ``code`` appended, imported from a file (Triton reads kernel source)."""
    path = tmp_path / f"{name}.py"
    path.write_text(with_replacement(TOPIC, code), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _attention64(q, k, v, causal: bool):
    """Float64 attention with the bottom-right causal mask: (O, lse)."""
    q, k, v = q.double(), k.double(), v.double()
    L, S = q.shape[-2], k.shape[-2]
    s = (q @ k.mT) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.arange(S)[None, :] > torch.arange(S - L, S)[:, None], -math.inf)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def _qkv(L: int, S: int, E: int = 8, Ev: int = 8, seed: int = 0, scale: float = 1.0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 2, n, d, generator=g) * (scale if i < 2 else 1.0)
            for i, (n, d) in enumerate(((L, E), (S, E), (S, Ev)))]


def test_mutate_refuses_an_edit_that_does_not_match_exactly_once():
    assert wrong.mutate("a b", ("a", "c")) == "c b"
    with pytest.raises(ValueError, match="occurs 0 times"):
        wrong.mutate("a b", ("x", "y"))
    with pytest.raises(ValueError, match="occurs 2 times"):
        wrong.mutate("a a", ("a", "y"))


def test_every_variant_appended_to_the_reference_is_valid_python():
    for bank in (wrong.BANK, correct.BANK):
        for v in bank:
            compile(with_replacement(TOPIC, v.code), v.why, "exec")


def test_the_bases_of_the_mistakes_are_correct(tmp_path):
    base = _module(wrong.SOFTMAX_KERNEL + wrong.FORWARD_KERNEL + wrong.BACKWARD, tmp_path,
                   "ex08_bank_bases")
    x = torch.randn(3, 37, generator=torch.Generator().manual_seed(1))
    x[1] = -math.inf
    expected = torch.softmax(x.double(), -1).nan_to_num(0.0)
    torch.testing.assert_close(base.softmax_rows(x).double(), expected, rtol=1.3e-6, atol=1e-5)
    for causal in (False, True):
        q, k, v = _qkv(20, 37)
        o, lse = base.flash_attention_forward(q, k, v, is_causal=causal)
        o64, lse64 = _attention64(q, k, v, causal)
        torch.testing.assert_close(o.double(), o64, rtol=1.3e-6, atol=1e-5)
        torch.testing.assert_close(lse.double(), lse64, rtol=1.3e-6, atol=1e-5)
        do = torch.randn(1, 2, 20, 8, dtype=torch.float64)
        leaves = [t.double().requires_grad_() for t in (q, k, v)]
        _attention64(*leaves, causal)[0].backward(do)
        grads = base.flash_attention_backward(q.double(), k.double(), v.double(), o64, lse64,
                                              do, is_causal=causal)
        for g, leaf in zip(grads, leaves):
            torch.testing.assert_close(g, leaf.grad)


#: A small input that exposes each wrong forward kernel: (L, S, causal, q/k spread, what is off)
EXPOSED_BY = {
    "the accumulator is not rescaled": (20, 37, False, 3.0, "O"),
    "lse without the max": (20, 37, False, 1.0, "lse"),
    "causal tiles aligned top-left": (5, 40, True, 1.0, "O"),
    "keys past S in the ragged": (20, 37, False, 1.0, "O"),
    "off by one on the ragged tail": (20, 37, False, 1.0, "O"),
    "off by one on the diagonal": (20, 20, True, 1.0, "O"),
    "the scale applied twice": (20, 37, False, 1.0, "O"),
    "the scale never applied": (20, 37, False, 1.0, "O"),
    "exp2 kernel whose lse stays": (20, 37, False, 1.0, "lse"),
    "normalises by l at every step": (20, 37, False, 1.0, "O"),
}


@pytest.mark.parametrize("why", sorted(EXPOSED_BY))
def test_each_wrong_forward_kernel_is_wrong(tmp_path, why):
    (variant,) = [v for v in wrong.BANK if v.why.startswith(why)]
    L, S, causal, spread, part = EXPOSED_BY[why]
    module = _module(variant.code, tmp_path, "ex08_bank_" + why.replace(" ", "_")[:20])
    q, k, v = _qkv(L, S, scale=spread, seed=2)
    got = module.flash_attention_forward(q, k, v, is_causal=causal)
    expected = _attention64(q, k, v, causal)
    index = 0 if part == "O" else 1
    error = (got[index].double() - expected[index]).abs().max().item()
    assert error > 1e-3, f"{why}: {part} is within {error:.2g} of float64 attention"
