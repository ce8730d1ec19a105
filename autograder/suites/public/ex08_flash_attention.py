"""Public tests of topic 8 (FlashAttention in Triton), on the lesson's numbers.

These are the checks `course check 8` runs. The kernels run in the worker on CPU tensors through
Triton's interpreter (the sandbox sets ``TRITON_INTERPRET=1``), so every size here is small: the
interpreter spends a few milliseconds per key block per program (docs/design/exercise-api.md,
"How topic 8 is graded"). Expected values are plain attention computed here in float64 from the
very numbers the worker received, never the reference's kernels: the grading process does not
run Triton. The graded suite holds many more cases (ragged blocks, E ≠ Ev, other block sizes,
float16 judged against the FlashAttention-2 recipe, every error) that are not shown.

The helpers below are shared with the hidden suite: float64 attention with the bottom-right
causal mask, and the FlashAttention-2 recipe the half-precision rule measures against.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from autograder.authoring.checks import expect_raises, expect_tensor, fail
from autograder.authoring.strategies import as_torch, rounded, seeded, tensor
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import describe, graded
from autograder.wire import codec

TOPIC = "ex08_flash_attention"

#: cat = [0.8, 0.3] and dog = [0.6, 0.7] as queries and keys (lesson 1's vectors), (B, H, L, E)
CAT_DOG = np.array([[[[0.8, 0.3], [0.6, 0.7]]]])


# ------------------------------------------------------------------ float64 yardsticks


def bottom_right(L: int, S: int) -> torch.Tensor:
    """(L, S) bool, True where query i may see key j: query i sits at absolute position
    S − L + i (topic 5's causal mask, aligned bottom-right)."""
    return torch.arange(S)[None, :] <= torch.arange(S - L, S)[:, None]


def scores64(q, k, causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """``scale · Q Kᵀ`` in float64, −inf where the causal mask hides a key: (..., L, S)."""
    qt, kt = as_torch(q), as_torch(k)
    scale = 1.0 / math.sqrt(qt.shape[-1]) if scale is None else scale
    s = (qt @ kt.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(~bottom_right(qt.shape[-2], kt.shape[-2]), float("-inf"))
    return s


def attention64(q, k, v, causal: bool = False, scale: float | None = None):
    """Plain attention in float64 of the given (already rounded) inputs: ``(O, lse)`` as
    ndarrays ``(B, H, L, Ev)`` and ``(B, H, L)`` (lesson 5's formula; lse = log Σ exp)."""
    s = scores64(q, k, causal, scale)
    o = torch.softmax(s, dim=-1) @ as_torch(v)
    return o.numpy(), torch.logsumexp(s, dim=-1).numpy()


def fa2_recipe(q, k, v, dtype: str, causal: bool = False, scale: float | None = None):
    """FlashAttention-2's numerics done right, for half-precision inputs: float32 scores, P
    rounded to ``dtype`` before the P·V product, float32 sums, O rounded to ``dtype`` once
    (Dao 2023, Algorithm 1). Returns ``(O, lse)``: O as the float64 values of the rounded
    result, lse in float32 (as float64 values). The half-precision rule measures a
    submission against this recipe's error (docs/design/exercise-api.md)."""
    tdt = getattr(torch, dtype)
    q32, k32, v32 = (as_torch(x).float() for x in (q, k, v))
    scale = 1.0 / math.sqrt(q32.shape[-1]) if scale is None else scale
    s = (q32 @ k32.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(~bottom_right(q32.shape[-2], k32.shape[-2]), float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    p = torch.exp(s - m)
    l_sum = p.sum(dim=-1, keepdim=True)
    o = ((p.to(tdt).float() @ v32) / l_sum).to(tdt)
    lse = (m + torch.log(l_sum)).squeeze(-1)
    return o.double().numpy(), lse.double().numpy()


def max_error(a, b) -> float:
    """The largest absolute difference of two arrays (float64)."""
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def qkv(rng: np.random.Generator, lead: tuple, L: int, S: int, E: int, Ev: int,
        dtype: str = "float32", spread: float = 1.0):
    """Random q (…, L, E), k (…, S, E), v (…, S, Ev) already rounded to ``dtype``."""
    q = rounded(rng.standard_normal((*lead, L, E)) * spread, dtype)
    k = rounded(rng.standard_normal((*lead, S, E)) * spread, dtype)
    v = rounded(rng.standard_normal((*lead, S, Ev)), dtype)
    return q, k, v


# ------------------------------------------------------------------ reading results


def safe_fail(message: str) -> None:
    """Fail with a message made of the grader's words and ``describe`` only, so a hidden test
    may show it as it is."""
    fail(message, message)


def pair(got, what: str):
    """``got`` as the two items of ``(O, lse)``; the test fails unless it is a pair."""
    if not isinstance(got, list) or len(got) != 2:
        safe_fail(f"{what}: expected a tuple (O, lse), got {describe(got)}")
    return got[0], got[1]


def triple(got, what: str):
    """``got`` as ``(dq, dk, dv)``; the test fails unless it holds three items."""
    if not isinstance(got, list) or len(got) != 3:
        safe_fail(f"{what}: expected a tuple (dq, dk, dv), got {describe(got)}")
    return got


def expect_forward(got, q, k, v, *, dtype: str, causal: bool = False,
                   scale: float | None = None, what: str, device: str = "cpu") -> None:
    """Judge ``flash_attention_forward``'s ``(O, lse)`` against float64 attention of the same
    inputs: O to its dtype's tolerance (float32) or, in half precision, to within twice the
    FlashAttention-2 recipe's largest error plus 1e-5 (the half-precision rule); lse (float32) to
    float32's tolerance."""
    o, lse = pair(got, what)
    o64, lse64 = attention64(q, k, v, causal, scale)
    if dtype in ("float16", "bfloat16"):
        bound = 2 * max_error(fa2_recipe(q, k, v, dtype, causal, scale)[0], o64) + 1e-5
        expect_tensor(o, o64, dtype=dtype, device=device, rtol=0.0, atol=bound,
                      what=f"O of {what} (within twice the FlashAttention-2 recipe's error)")
    else:
        expect_tensor(o, o64, dtype=dtype, device=device, what=f"O of {what}")
    expect_tensor(lse, lse64, dtype="float32", device=device, what=f"lse of {what}")


def autograd64(q, k, v, do, causal: bool = False, scale: float | None = None):
    """Gradients ``(dq, dk, dv)`` of float64 attention by autograd (SDPA's math, with an
    explicit bottom-right mask under ``causal``), as ndarrays."""
    import torch.nn.functional as F

    qt, kt, vt = (as_torch(x).requires_grad_() for x in (q, k, v))
    mask = bottom_right(qt.shape[-2], kt.shape[-2]) if causal else None
    out = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, scale=scale)
    out.backward(as_torch(do))
    return tuple(t.grad.numpy() for t in (qt, kt, vt))


def flash_apply(sub, q, k, v, do, *, dtype: str, causal: bool):
    """Run ``FlashAttention.apply(q, k, v, causal)`` in the worker on leaf tensors that
    require grad, then ``O.backward(do)``: ``(O, [dq, dk, dv])`` as they came back."""
    leaves = [sub.lib("torch.as_tensor", codec.tensor_spec(x, dtype=dtype, requires_grad=True))
              for x in (q, k, v)]
    out = sub.new("FlashAttention.apply", *leaves, causal)
    o = out.call("detach")
    out.call("backward", tensor(do, dtype))
    return o, [leaf.attribute("grad") for leaf in leaves]


# ------------------------------------------------------------------ softmax_rows


@graded("softmax_rows",
        "cat's logits [0.8, 0.3] give [0.6225, 0.3775]; a row of -inf gives zeros",
        hint=("A row of only -inf has max -inf, and -inf − (-inf) is NaN: where the row max is "
              "-inf subtract 0 instead, and where the sum is 0 divide by 1, so a fully masked "
              "row stores zeros."))
def test_softmax_rows_cat_and_masked_row(sub, ref):
    x = np.array([[0.8, 0.3], [-np.inf, -np.inf]])
    expected = np.array([[1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(0.5))], [0.0, 0.0]])
    expect_tensor(sub.softmax_rows(tensor(x, "float32")), expected, dtype="float32",
                  what="softmax_rows of [[0.8, 0.3], [-inf, -inf]]")


@graded("softmax_rows", "rows of 37 entries (not a power of two): lanes past N are masked")
def test_softmax_rows_ragged(sub, ref):
    x = rounded(seeded(801).standard_normal((4, 37)) * 3.0, "float32")
    expected = torch.softmax(as_torch(x), dim=-1).numpy()
    expect_tensor(sub.softmax_rows(tensor(x, "float32")), expected, dtype="float32",
                  what="softmax_rows of a (4, 37) float32 matrix")


# ------------------------------------------------------------------ flash_attention_forward


@graded("flash_attention_forward",
        "cat and dog, causal, v = I: O rows [1, 0] and [0.4717, 0.5283], lse [0.5162, 1.2392]")
def test_forward_cat_dog(sub, ref):
    x = rounded(CAT_DOG, "float32")
    eye = np.eye(2)[None, None]
    got = sub.flash_attention_forward(tensor(x, "float32"), tensor(x, "float32"),
                                      tensor(eye, "float32"), is_causal=True)
    expect_forward(got, x, x, eye, dtype="float32", causal=True,
                   what="causal attention of cat and dog with v = I")


@graded("flash_attention_forward",
        "ragged blocks: L = 20, S = 37, E = 8, Ev = 12 (rows and keys past the last full "
        "block masked)")
def test_forward_ragged(sub, ref):
    q, k, v = qkv(seeded(802), (1, 1), 20, 37, 8, 12)
    got = sub.flash_attention_forward(tensor(q, "float32"), tensor(k, "float32"),
                                      tensor(v, "float32"))
    expect_forward(got, q, k, v, dtype="float32", what="attention with L = 20, S = 37")


@graded("flash_attention_forward",
        "causal with 5 queries over 40 keys: the diagonal is aligned bottom-right")
def test_forward_causal_kv_cache(sub, ref):
    q, k, v = qkv(seeded(803), (1, 1), 5, 40, 16, 16)
    got = sub.flash_attention_forward(tensor(q, "float32"), tensor(k, "float32"),
                                      tensor(v, "float32"), is_causal=True)
    expect_forward(got, q, k, v, dtype="float32", causal=True,
                   what="causal attention with L = 5, S = 40")


@graded("flash_attention_forward",
        "k wider than q, and is_causal with more queries than keys, raise ValueError")
def test_forward_errors(sub, ref):
    q, k, v = qkv(seeded(804), (1, 1), 4, 6, 8, 8)
    expect_raises("ValueError", sub.flash_attention_forward, tensor(q, "float32"),
                  tensor(np.concatenate([k, k], axis=-1), "float32"), tensor(v, "float32"),
                  what="q (1, 1, 4, 8) with k (1, 1, 6, 16)")
    q, k, v = qkv(seeded(805), (1, 1), 7, 6, 8, 8)
    expect_raises("ValueError", sub.flash_attention_forward, tensor(q, "float32"),
                  tensor(k, "float32"), tensor(v, "float32"), is_causal=True,
                  what="is_causal with L = 7 queries and S = 6 keys")


# ------------------------------------------------------------------ flash_attention_backward


@graded("flash_attention_backward",
        "cat and dog, causal, float64: the gradients rebuilt from lse match autograd's")
def test_backward_cat_dog(sub, ref):
    x, eye = CAT_DOG, np.eye(2)[None, None]
    do = np.array([[[[1.0, -0.5], [0.25, 2.0]]]])
    o, lse = attention64(x, x, eye, causal=True)
    got = triple(sub.flash_attention_backward(tensor(x), tensor(x), tensor(eye), tensor(o),
                                              tensor(lse), tensor(do), is_causal=True),
                 "flash_attention_backward")
    for name, g, e in zip(("dq", "dk", "dv"), got, autograd64(x, x, eye, do, causal=True)):
        expect_tensor(g, e, dtype="float64", what=f"{name} of causal cat and dog")


# ------------------------------------------------------------------ FlashAttention


@graded("FlashAttention",
        "3 queries over 5 keys, causal, float32: O and the gradients match SDPA's with a "
        "bottom-right mask")
def test_flash_attention_gradients(sub, ref):
    rng = seeded(806)
    q, k, v = qkv(rng, (1, 1), 3, 5, 4, 4)
    do = rounded(rng.standard_normal((1, 1, 3, 4)), "float32")
    o, grads = flash_apply(sub, q, k, v, do, dtype="float32", causal=True)
    expect_tensor(o, attention64(q, k, v, causal=True)[0], dtype="float32",
                  what="FlashAttention.apply(q, k, v, True)")
    for name, g, e in zip(("dq", "dk", "dv"), grads, autograd64(q, k, v, do, causal=True)):
        if g is None:
            safe_fail(f"{name}: the input received no gradient (is backward wired?)")
        expect_tensor(g, e, dtype="float32", what=f"{name} after O.backward(dO)")


add_docstring_tests(globals())
