"""Hidden tests of topic 8: a row softmax, FlashAttention's forward kernel, its backward pass
and the autograd function that joins them.

How they run: the kernels run in the worker on CPU tensors through Triton's interpreter
(``TRITON_INTERPRET=1``, set by the sandbox), which costs a few milliseconds per key block per
program, so sizes stay small (L ≤ 40, S ≤ 300, E ≤ 32 except in the one test of the widest
heads, E = Ev = 128, and at most five programs per call; docs/design/exercise-api.md, "How
topic 8 is graded"). The grading process never runs Triton: every expected value is plain
float64 attention of the very numbers the worker received (inputs are rounded to their dtype
first), or the reference's backward formulas in float64.

Tolerances: float32 and float64 results use their dtype's defaults (docs/design/interface.md).
Half-precision results follow the course's half-precision rule (docs/design/exercise-api.md,
"How topic 8 is graded") instead of a fixed tolerance: the largest error of O may be at most
twice the error of the FlashAttention-2 recipe computed here (float32 scores and sums, P
rounded to the input dtype before P·V, O rounded once) plus 1e-5; gradients likewise,
the recipe being the backward formulas in float32 from the same O and lse, rounded once, and
the error being measured against the exact float64 gradients. bfloat16 is graded on CUDA only
(``gpu=True``, no points): Triton 3.9's interpreter multiplies bfloat16 tiles' raw storage in
``tl.dot``. That a Triton kernel did the work (launches, the elements its programs load, and
no matrix product or exponential of PyTorch's beside them) is counted in the worker
(advisory). The RuntimeError for CPU tensors while
``TRITON_INTERPRET`` is unset is not graded: the worker's triton was imported with the
interpreter on, and a correct function may ask triton, not the environment, whether it is.

Messages never show inputs: generated inputs are described by their shapes only.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from autograder.authoring.checks import (
    expect_message_names,
    expect_raises,
    expect_rule,
    expect_tensor,
)
from autograder.authoring.strategies import as_torch, rounded, seeded, tensor
from autograder.authoring.suite import describe, graded
from autograder.wire import codec
from autograder.suites.public.ex08_flash_attention import (
    attention64,
    autograd64,
    expect_forward,
    fa2_recipe,
    flash_apply,
    max_error,
    pair,
    qkv,
    safe_fail,
    triple,
)

TOPIC = "ex08_flash_attention"

#: float16 on the CPU; bfloat16 only on CUDA (module docstring)
HALF = ("float16", "bfloat16")


def _forward(sub, q, k, v, *, dtype: str = "float32", device: str = "cpu", what: str,
             causal: bool = False, **kw) -> None:
    """Run the submission's forward on (q, k, v) and judge (O, lse) (expect_forward)."""
    if causal:
        kw["is_causal"] = True
    got = sub.flash_attention_forward(tensor(q, dtype, device), tensor(k, dtype, device),
                                      tensor(v, dtype, device), **kw)
    if device == "cuda":
        o = got[0] if isinstance(got, list) and got else None
        if not isinstance(o, codec.TensorData) or not o.device.startswith("cuda"):
            safe_fail(f"{what}: expected O on CUDA, got {describe(o)}")
        device = o.device  # "cuda:0"
    expect_forward(got, q, k, v, dtype=dtype, causal=causal, scale=kw.get("scale"),
                   what=what, device=device)


def _shapes(q, k, v) -> str:
    return f"q {q.shape}, k {k.shape}, v {v.shape}"


# ------------------------------------------------------------------ softmax_rows


def _softmax64(x: np.ndarray) -> np.ndarray:
    """Row softmax in float64; a row of only -inf gives zeros (the exercise's rule)."""
    y = torch.softmax(as_torch(x), dim=-1).numpy()
    return np.where(np.isneginf(x).all(axis=-1, keepdims=True), 0.0, y)


#: The hint of the tests with fully masked rows.
MASKED_ROW_HINT = ("A row of only -inf has max -inf, and -inf − (-inf) is NaN: where the row max "
                   "is -inf subtract 0 instead, and where the sum is 0 divide by 1, so a fully "
                   "masked row stores zeros.")


def _strided(sub, a: np.ndarray, dtype: str, order: tuple[int, ...]):
    """``a`` as a tensor of ``a``'s shape held in the worker, but laid out in memory with its
    axes in ``order`` (built contiguous that way, then permuted back): a view such as
    ``x.T`` or ``q.transpose(1, 2)``, which a kernel that assumes contiguous rows misreads.
    Every tensor a test sends otherwise reaches the worker contiguous (fifth review: launchers
    without their ``.contiguous()`` were graded right)."""
    stored = sub.lib("torch.as_tensor",
                     codec.tensor_spec(np.ascontiguousarray(a.transpose(order)), dtype=dtype))
    return stored.call("permute", *(int(i) for i in np.argsort(order)), keep=True)


@graded("softmax_rows", "random float32 rows of N = 1, 5, 37, 64 and 100 entries match float64")
def test_softmax_random(sub, ref):
    rng = seeded(810)
    for N in (1, 5, 37, 64, 100):
        x = rounded(rng.standard_normal((2, N)) * 2.0, "float32")  # 2 rows show the row offset
        expect_tensor(sub.softmax_rows(tensor(x, "float32")), _softmax64(x), dtype="float32",
                      what=f"softmax_rows of a generated (2, {N}) float32 matrix")


@graded("softmax_rows", "-inf entries get 0, a row of only -inf gives zeros (not NaN), a row "
        "with one finite entry gives 1 there",
        hint=MASKED_ROW_HINT)
def test_softmax_masked(sub, ref):
    rng = seeded(811)
    x = rounded(rng.standard_normal((5, 13)), "float32")
    x[0, ::2] = -np.inf  # every other key masked
    x[1, :] = -np.inf  # nothing to attend to
    x[2, :] = -np.inf
    x[2, 7] = 0.5  # exactly one finite entry
    x[4, 12] = -np.inf  # the last lane before the padding
    expect_tensor(sub.softmax_rows(tensor(x, "float32")), _softmax64(x), dtype="float32",
                  what="softmax_rows of a generated (5, 13) matrix with -inf entries")


@graded("softmax_rows", "a non-contiguous x (a transposed view, float32 and float16) gives "
        "the softmax of its rows")
def test_softmax_strided(sub, ref):
    rng = seeded(818)
    for dtype, (M, N) in (("float32", (3, 37)), ("float16", (4, 20))):
        x = rounded(rng.standard_normal((M, N)) * 2.0, dtype)
        expect_tensor(sub.softmax_rows(_strided(sub, x, dtype, (1, 0))), _softmax64(x),
                      dtype=dtype, what=f"softmax_rows of a generated ({M}, {N}) {dtype} "
                                        "matrix stored transposed (x.T of an ({N}, {M}))")


def _narrowed(sub, a: np.ndarray, dtype: str, extra: int, fill: np.ndarray):
    """``a`` as a view of the first columns of a wider tensor held in the worker (its last
    axis padded with ``extra`` columns of ``fill``): rows ``extra`` entries further apart than
    their length, as ``x[:, :N]`` of a wider ``x``."""
    wide = np.concatenate([a, np.broadcast_to(fill, a.shape[:-1] + (extra,))], axis=-1)
    stored = sub.lib("torch.as_tensor", codec.tensor_spec(wide, dtype=dtype))
    return stored.call("narrow", a.ndim - 1, 0, a.shape[-1], keep=True)


@graded("softmax_rows", "rows further apart than their length (x[:, :N] of a wider x) give "
        "the softmax of each row's own N entries")
def test_softmax_narrowed(sub, ref):
    rng = seeded(819)
    x = rounded(rng.standard_normal((5, 19)), "float32")
    # the columns past N hold a large logit: read as part of a row, they take its mass
    expect_tensor(sub.softmax_rows(_narrowed(sub, x, "float32", 6, np.float32(30.0))),
                  _softmax64(x), dtype="float32",
                  what="softmax_rows of the first 19 columns of a generated (5, 25) matrix")


@graded("softmax_rows", "large logits (about ±1e4) do not overflow: the row maximum is "
        "subtracted first (loosened to float32's rounding of logits near 9000: rtol 2.1e-3)")
def test_softmax_large(sub, ref):
    rng = seeded(812)
    x = rounded(rng.standard_normal((3, 20)) * 1e4, "float32")
    x[1] = rounded(9000.0 + rng.standard_normal(20), "float32")  # a large common offset
    # What is graded is overflow. A kernel may scale the logits before subtracting the max
    # (exp2 of x·log2 e, FlashAttention's habit): rounding x·log2 e to float32 moves each
    # exponent by up to 2⁻²⁴·|x·log2 e|, a relative error of up to 2·2⁻²⁴·max|x| in the result
    # (1e-3 at 9000). Allowed twice over (second fairness review); no max subtracted gives NaN.
    expect_tensor(sub.softmax_rows(tensor(x, "float32")), _softmax64(x), dtype="float32",
                  rtol=4 * 2.0**-24 * float(np.abs(x[1]).max()),
                  what="softmax_rows of a generated (3, 20) matrix of large logits")


@graded("softmax_rows", "rows of only large negative logits (−200 to −1e4), N not a power of "
        "two: the padding lanes (−inf) do not count in the row maximum",
        hint=("Load the lanes past N as −inf for the maximum too: a padding lane read as 0 "
              "makes the maximum 0 for a row of negative logits, and every exp(x − 0) "
              "underflows to 0."))
def test_softmax_negative(sub, ref):
    rng = seeded(816)
    for x in (np.array([[-200.0, -201.0, -202.0]]),
              np.stack([-200.0 - np.arange(5.0), -1e4 + 3.0 * rng.standard_normal(5),
                        -120.0 + rng.standard_normal(5)])):
        x = rounded(x, "float32")
        expect_tensor(sub.softmax_rows(tensor(x, "float32")), _softmax64(x), dtype="float32",
                      what=f"softmax_rows of a {x.shape} float32 matrix of negative logits")


# Not graded: float16 arithmetic in the kernel (docs/design/exercise-api.md asks for float32). With the row
# maximum subtracted, float16 sums overflow only past 65504 entries, and a correct kernel that
# walks a 65536-entry row in chunks takes longer than a call's 10 s under the interpreter
# (fourth review); below that, float16 exp and sums stay within float16's tolerance.


@graded("softmax_rows", "float16 rows of 300 and 2000 entries: float16 out, to float16's tolerance")
def test_softmax_float16(sub, ref):
    rng = seeded(813)
    for M, N in ((2, 300), (1, 2000)):
        x = rounded(rng.standard_normal((M, N)) * 0.5, "float16")
        expect_tensor(sub.softmax_rows(tensor(x, "float16")), _softmax64(x), dtype="float16",
                      what=f"softmax_rows of a generated ({M}, {N}) float16 matrix")


@graded("softmax_rows", "float16 with -inf entries, a fully masked row and a row of logits "
        "near −300: float16 out, zeros where masked",
        hint=MASKED_ROW_HINT)
def test_softmax_float16_masked(sub, ref):
    rng = seeded(814)
    x = rounded(rng.standard_normal((4, 9)) * 2.0, "float16")
    x[0, 1::3] = -np.inf
    x[2, :] = -np.inf
    x[3] = rounded(-300.0 + rng.standard_normal(9), "float16")  # its maximum is far below 0
    expect_tensor(sub.softmax_rows(tensor(x, "float16")), _softmax64(x), dtype="float16",
                  what="softmax_rows of a generated (4, 9) float16 matrix with -inf entries")


def _expect_softmax_errors(sub, dtype: str, shapes) -> None:
    """softmax_rows of zeros of each shape raises ValueError naming what was wrong: the shape
    of a tensor that is not 2-D; for a row length outside [1, 2¹⁶] the shape or N, which is how
    the row states that rule (docs/design/exercise-api.md: "the offending shapes or values"; fourth review)."""
    for shape in shapes:
        expect_rule("ValueError", sub.softmax_rows, tensor(np.zeros(shape), dtype),
                    what=f"{'' if dtype == 'float32' else dtype + ' '}x of shape {shape}",
                    naming=(str(shape) if len(shape) != 2 else (str(shape), str(shape[1])),))


@graded("softmax_rows", "input that is not 2-D, rows of N = 0 and rows longer than 65536 "
        "raise ValueError with a message")
def test_softmax_errors(sub, ref):
    _expect_softmax_errors(sub, "float32", ((5,), (2, 3, 4), (3, 0), (1, 65537)))
    # Not graded: a NumPy array instead of a tensor (the docstring refuses it, docs/design/exercise-api.md's row
    # takes a tensor and names no error for anything else: natural x.dim() code raises
    # AttributeError there).


@graded("softmax_rows", "float16 input that is not 2-D, has rows of N = 0 or rows longer than "
        "65536 raises ValueError with a message too")
def test_softmax_errors_float16(sub, ref):
    _expect_softmax_errors(sub, "float16", ((7,), (1, 2, 3), (2, 0), (1, 65540)))


def _expect_loads(out: dict, needed: int, name: str, inputs: str) -> None:
    """Fail unless the interpreted kernels of a launch-counting probe loaded at least
    ``needed`` elements: a kernel that does the work reads every element of its inputs at
    least once (masked lanes are not counted), PyTorch's maths beside an empty or copying
    kernel reads none of them. Skipped where the kernels were compiled (``loaded`` is None:
    no Python code sees their loads)."""
    loaded = out.get("loaded")
    if loaded is None:
        return
    if not isinstance(loaded, int) or loaded < needed:
        # The count is the submission's number: not shown (it could spell a hidden input).
        safe_fail(f"{name}'s Triton kernels loaded fewer elements than the {needed} of "
                  f"{inputs}: the kernel must read its inputs and compute the result, not "
                  f"only be launched beside PyTorch's maths")


def _expect_no_torch_maths(out: dict, name: str) -> None:
    """Fail if PyTorch did the maths during the call: a matrix product, an exponential, a
    softmax or a log-sum-exp dispatched beside the kernels (``torch_maths``, counted in the
    worker). docs/design/exercise-api.md's row asks the kernel to compute the result; the launcher only
    allocates, lays out and casts. A kernel that loads every input and throws it away passes
    the load count; this is what it cannot hide."""
    maths = out.get("torch_maths", 0)
    if not isinstance(maths, int) or maths > 0:
        # The count is the submission's number: not shown (it could spell a hidden input).
        safe_fail(f"{name} ran PyTorch's own matrix products, exponentials or softmax during "
                  f"the call: the Triton kernel must compute the result, not PyTorch beside it")


@graded("softmax_rows", "a Triton kernel computes it (kernel launches, the elements its "
        "programs load and PyTorch's maths beside them counted in the worker)", advisory=True)
def test_softmax_launches(sub, ref):
    x = rounded(seeded(814).standard_normal((3, 10)), "float32")
    out = sub.probe("triton_launches", TOPIC, "softmax_rows", tensor(x, "float32"))
    if not isinstance(out, dict) or "launches" not in out:
        safe_fail(f"could not count the Triton launches of softmax_rows (got {describe(out)})")
    expect_tensor(out["result"], _softmax64(x), dtype="float32",
                  what="softmax_rows of a generated (3, 10) float32 matrix")
    if out["launches"] < 1:
        safe_fail("softmax_rows launched no Triton kernel: the softmax must be computed by a "
                  "@triton.jit kernel, one program per row")
    _expect_loads(out, x.size, "softmax_rows", "x")
    _expect_no_torch_maths(out, "softmax_rows")


@graded("softmax_rows", "on CUDA: float16 and bfloat16 rows match float64 (to their rounding)",
        gpu=True)
def test_softmax_cuda(sub, ref):
    rng = seeded(815)
    for dtype in HALF:
        x = rounded(rng.standard_normal((64, 1000)) * 3.0, dtype)
        got = sub.softmax_rows(tensor(x, dtype, "cuda"))
        if not isinstance(got, codec.TensorData) or not got.device.startswith("cuda"):
            safe_fail(f"softmax_rows of a CUDA tensor: expected a CUDA tensor, got "
                      f"{describe(got)}")
        expect_tensor(got, _softmax64(x), dtype=dtype, device=got.device,
                      what=f"softmax_rows of a generated (64, 1000) {dtype} matrix on CUDA")


# ------------------------------------------------------------------ flash_attention_forward


@graded("flash_attention_forward",
        "ragged float32 shapes: E and Ev not powers of two, E ≠ Ev, several batches and heads")
def test_forward_ragged(sub, ref):
    rng = seeded(820)
    # every case ragged somewhere, at most two query and two key blocks per head; the first
    # has two heads (B = 2) of two query blocks, so that a store past a row's last column
    # lands in a row that another program has already written; the second two heads (H = 2)
    for lead, L, S, E, Ev in (((2, 1), 17, 9, 5, 3), ((1, 2), 7, 24, 12, 20),
                              ((1, 1), 1, 1, 1, 1)):
        q, k, v = qkv(rng, lead, L, S, E, Ev)
        _forward(sub, q, k, v, what=f"attention on generated {_shapes(q, k, v)}")


@graded("flash_attention_forward", "non-contiguous q, k and v (transposed views of (B, L, H, E) "
        "tensors, one batch and two heads; causal too) give the same attention")
def test_forward_strided(sub, ref):
    rng = seeded(829)
    # B = 1: q.reshape(B·H, L, E) is then a view, not a copy, and keeps the odd strides
    q, k, v = qkv(rng, (1, 2), 16, 16, 8, 4)
    for causal in (False, True):
        got = sub.flash_attention_forward(*(_strided(sub, a, "float32", (0, 2, 1, 3))
                                            for a in (q, k, v)), is_causal=causal)
        expect_forward(got, q, k, v, dtype="float32", causal=causal, scale=None,
                       what=f"{'causal ' if causal else ''}attention on generated "
                            f"{_shapes(q, k, v)} held as (B, L, H, E) tensors, transposed",
                       device="cpu")


@graded("flash_attention_forward", "q, k and v whose rows lie further apart than E or Ev "
        "(the first columns of wider heads) give the same attention")
def test_forward_narrowed(sub, ref):
    rng = seeded(830)
    q, k, v = qkv(rng, (1, 2), 9, 16, 6, 5)
    # the hidden columns hold large values: read as part of q, k or v, they swamp the result
    args = [_narrowed(sub, a, "float32", 3, np.float32(9.0)) for a in (q, k, v)]
    expect_forward(sub.flash_attention_forward(*args), q, k, v, dtype="float32", causal=False,
                   scale=None, device="cpu",
                   what=f"attention on generated {_shapes(q, k, v)}, each the first columns "
                        "of heads 3 wider")


@graded("flash_attention_forward",
        "causal, L < S (S − L = 1 too) and L = S: query i sees keys up to S − L + i "
        "(bottom-right), ragged, on two heads with Ev > E, and block_m = 32 over block_n = 16 "
        "(one program of 32 queries)")
def test_forward_causal(sub, ref):
    rng = seeded(821)
    # S − L = 1 puts the last query of block 0 on key 16, the first of key block 1: a loop
    # bound one short skips that block; the two heads have L ≠ S and Ev > E (per-head offsets)
    for lead, L, S, E, Ev, blocks in (((1, 1), 20, 20, 4, 6, {}), ((1, 1), 1, 20, 8, 8, {}),
                                      ((1, 2), 16, 17, 4, 24, {}),
                                      ((1, 1), 32, 32, 8, 8, {"block_m": 32, "block_n": 16})):
        q, k, v = qkv(rng, lead, L, S, E, Ev)
        _forward(sub, q, k, v, causal=True, **blocks,
                 what=f"causal attention on generated {_shapes(q, k, v)}"
                      + "".join(f", {n} = {b}" for n, b in blocks.items()))


@graded("flash_attention_forward",
        "large scores (q and k spread 4×; float16 spread 2.5×, scores kept in float32), and "
        "scores all below −100: the running max starts at −inf and keeps exp finite, lse stays "
        "exact (O to float32's rounding of such scores)")
def test_forward_large_scores(sub, ref):
    rng = seeded(822)
    q, k, v = qkv(rng, (1, 1), 16, 32, 16, 16, spread=4.0)  # one query block, 2 key blocks
    _forward(sub, q, k, v, what=f"attention with large scores on generated {_shapes(q, k, v)}")
    # q > 0 > k: every score lies in [−127, −101], where exp underflows float32 (e^−104 is
    # its smallest subnormal), so a running max started at 0 loses every row. Scores that
    # large carry float32 rounding: a 16-term dot product of same-sign terms may be off by
    # 16·2⁻²⁴·|s|, and O by that times the largest |v| (the default atol, 1e-5, is about the
    # rounding a correct kernel shows here; an exp2 kernel shows more).
    # (16 keys: one key block is enough for that)
    q = rounded(4.5 + 0.25 * np.abs(q), "float32")
    k, v = rounded(-4.5 - 0.25 * np.abs(k[..., :16, :]), "float32"), v[..., :16, :]
    what = f"attention with every score below −100 on generated {_shapes(q, k, v)}"
    o, lse = pair(sub.flash_attention_forward(*(tensor(a, "float32") for a in (q, k, v))), what)
    o64, lse64 = attention64(q, k, v)
    scores = np.abs(q @ np.swapaxes(k, -1, -2)).max() / 4.0
    expect_tensor(o, o64, dtype="float32", rtol=0.0,
                  atol=1e-5 + 16 * 2.0**-24 * scores * np.abs(v).max(), what=f"O of {what}")
    expect_tensor(lse, lse64, dtype="float32", what=f"lse of {what}")
    # float16 inputs, scores up to about ±20: rounding them to float16 (steps of 1/64 there)
    # moves P by about 1 %, far past the FlashAttention-2 recipe's error (float32 scores)
    q, k, v = qkv(rng, (1, 1), 16, 16, 16, 16, dtype="float16", spread=2.5)
    _forward(sub, q, k, v, dtype="float16", what=f"float16 attention with large scores on "
                                                 f"generated {_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "one query over keys scored −200 and −205 (scale = 1): O and lse exact; scale = 0 gives "
        "the mean of v and lse = log S")
def test_forward_extreme_rows(sub, ref):
    # scores exact in float32 (10 · −20.5), so float32 kernels agree with float64 to rounding
    q = np.array([[[[10.0]]]])
    k = np.array([[[[-20.0], [-20.5]]]])
    v = np.array([[[[1.0, -1.0], [3.0, 5.0]]]])
    _forward(sub, q, k, v, scale=1.0, what="attention of one query over two keys scored −200 "
                                           "and −205, scale = 1")
    q, k, v = qkv(seeded(835), (1, 1), 2, 5, 3, 2)
    _forward(sub, q, k, v, scale=0.0, what=f"attention with scale = 0 on generated "
                                           f"{_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "the default scale is 1/√E (E = 9, Ev = 4); scale = 0.3, 2.0 and 0 replace it")
def test_forward_scale(sub, ref):
    rng = seeded(823)
    # one program and one key block: the scale does not depend on the blocking
    q, k, v = qkv(rng, (1, 1), 16, 13, 9, 4, spread=1.5)
    _forward(sub, q, k, v, what="attention with E = 9, Ev = 4 and the default scale")
    for scale in (0.3, 2.0, 0.0):
        _forward(sub, q, k, v, scale=scale, what=f"attention with scale = {scale}")


@graded("flash_attention_forward",
        "block sizes 16, 32, 64 and 128 in other pairings give the same result, causal or not")
def test_forward_blocks(sub, ref):
    rng = seeded(824)
    q, k, v = qkv(rng, (1, 1), 33, 40, 16, 16)
    # each size once as block_m and once as block_n; every last block is ragged
    for block_m, block_n, causal in ((32, 64, False), (64, 32, True), (16, 128, True),
                                     (128, 16, False)):
        _forward(sub, q, k, v, causal=causal, block_m=block_m, block_n=block_n,
                 what=f"{'causal ' if causal else ''}attention with block_m = {block_m}, "
                      f"block_n = {block_n} on generated {_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "float16 (ragged, causal with S − L = 1, E ≠ Ev, two heads): O within twice the "
        "FlashAttention-2 recipe's error, lse to float32's tolerance")
def test_forward_float16(sub, ref):
    rng = seeded(825)
    # the causal case: S − L = 1 and two heads with Ev > E (as in test_forward_causal)
    for lead, L, S, E, Ev, causal in (((1, 1), 16, 32, 32, 32, False),
                                      ((1, 2), 16, 17, 16, 24, True)):
        q, k, v = qkv(rng, lead, L, S, E, Ev, dtype="float16")
        _forward(sub, q, k, v, dtype="float16", causal=causal,
                 what=f"float16 {'causal ' if causal else ''}attention on generated "
                      f"{_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "long and thin float16: 16 queries over 128 keys in 16-wide key blocks, values +8 on "
        "the first 64 keys and −8 on the last 64 under nearly uniform attention, so the running "
        "P·V sum climbs and cancels (the running sums must be float32)")
def test_forward_long_thin(sub, ref):
    # The running P·V sum peaks halfway (64 keys of about +8) and cancels to an O near 0, so
    # float16 rounding at the peak stays in O: 5 to 10 times the bound for the seeds tried
    # (512 random keys without the offset: about 2).
    q, k, v = qkv(seeded(826), (1, 1), 16, 128, 32, 32, dtype="float16", spread=0.3)
    v = rounded(v + np.where(np.arange(128) < 64, 8.0, -8.0)[:, None], "float16")
    _forward(sub, q, k, v, dtype="float16", block_m=16, block_n=16,
             what=f"float16 attention on generated {_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "mismatched shapes (rank, B, H, E, S), dtypes or devices raise ValueError with a message")
def test_forward_mismatch(sub, ref):
    rng = seeded(827)
    q, k, v = qkv(rng, (1, 2), 4, 6, 8, 8)
    cases = [
        ("q of rank 3", (q[0], k, v), {}),
        ("k with another E", (q, k[..., :5], v), {}),
        ("v with another S", (q, k, v[:, :, :5]), {}),
        ("v with 7 keys where k has 6", (q, k, np.concatenate([v, v[:, :, :1]], axis=2)), {}),
        ("k with another H", (q, k[:, :1], v[:, :1]), {}),
        ("k with another B", (q, np.concatenate([k, k]), np.concatenate([v, v])), {}),
        ("k of rank 3", (q, k[..., 0], v), {}),
        ("v of rank 5", (q, k, v[..., None]), {}),
    ]
    for what, args, kw in cases:
        exc = expect_raises("ValueError", sub.flash_attention_forward,
                            *(tensor(a, "float32") for a in args), what=what, **kw)
        # a tensor of the wrong rank: the message names its shape (interface rule)
        expect_message_names(exc, *(str(a.shape) for a in args if a.ndim != 4))
    exc = expect_raises("ValueError", sub.flash_attention_forward, tensor(q, "float32"),
                        tensor(k, "float16"), tensor(v, "float32"),
                        what="q float32 with k float16")
    expect_message_names(exc)
    for devices, what in ((("cpu", "meta", "cpu"), "k on the meta device, q and v on the CPU"),
                          (("cpu", "meta", "meta"), "k and v on the meta device, q on the CPU"),
                          (("cpu", "cpu", "meta"), "v on the meta device, q and k on the CPU")):
        exc = expect_raises("ValueError", sub.flash_attention_forward,
                            *(tensor(a, "float32", d) for a, d in zip((q, k, v), devices)),
                            what=what)
        expect_message_names(exc)


@graded("flash_attention_forward",
        "E or Ev outside [1, 128], and is_causal with more queries than keys, raise ValueError")
def test_forward_bad_sizes(sub, ref):
    rng = seeded(828)
    for L, S, E, Ev in ((2, 3, 129, 4), (2, 3, 8, 129), (2, 3, 0, 4), (2, 3, 8, 0)):
        q, k, v = qkv(rng, (1, 1), L, S, E, Ev)
        expect_raises("ValueError", sub.flash_attention_forward, tensor(q, "float32"),
                      tensor(k, "float32"), tensor(v, "float32"), what=f"E = {E}, Ev = {Ev}")
    for L, S in ((3, 2), (17, 16)):
        q, k, v = qkv(rng, (1, 1), L, S, 8, 8)
        expect_raises("ValueError", sub.flash_attention_forward, tensor(q, "float32"),
                      tensor(k, "float32"), tensor(v, "float32"), is_causal=True,
                      what=f"is_causal with L = {L}, S = {S}")


# Not graded: L = 0 or S = 0. The docstring refuses both, but docs/design/exercise-api.md's row only says "any
# L, S >= 1" and lists no error for them, and L = 0 has a well-defined empty answer that
# natural code returns (docs/design/suite-strength.md, "What a test may demand").


@graded("flash_attention_forward", "heads wider than 128 (E = 160 or Ev = 130) raise ValueError "
        "in float16 too, on two heads")
def test_forward_too_wide(sub, ref):
    rng = seeded(834)
    for E, Ev, dtype in ((160, 8, "float16"), (8, 130, "float32"), (256, 256, "float16")):
        q, k, v = qkv(rng, (1, 2), 3, 5, E, Ev, dtype=dtype)
        expect_raises("ValueError", sub.flash_attention_forward, tensor(q, dtype),
                      tensor(k, dtype), tensor(v, dtype), what=f"{dtype} E = {E}, Ev = {Ev}")


@graded("flash_attention_forward", "the widest heads allowed, E = Ev = 128, are accepted and "
        "match float64")
def test_forward_widest_heads(sub, ref):
    q, k, v = qkv(seeded(833), (1, 1), 5, 9, 128, 128)
    _forward(sub, q, k, v, causal=True, what=f"causal attention on generated {_shapes(q, k, v)}")


@graded("flash_attention_forward",
        "causal with block_m = block_n = 16: a key block wholly after a query block is not "
        "visited (NaN keys and values there leave that block's O and lse untouched)",
        hint=("Under is_causal the program of query block i stops at key S − L + (i + 1)·block_m "
              "(exclusive): the key blocks after it are never loaded."))
def test_forward_causal_skips_future(sub, ref):
    # L = 20 queries over S = 36 keys in 16 × 16 blocks: query block 0 sits at positions
    # 16..31, so key block 2 (keys 32..35, NaN here) lies wholly after it; E = 12 leaves
    # padding lanes in every key tile. Only query block 0's rows are judged: block 1's rows
    # see the NaN keys.
    L, S, E, Ev, n = 20, 36, 12, 8, 16
    q, k, v = qkv(seeded(834), (1, 1), L, S, E, Ev)
    k[..., 32:, :] = np.nan
    v[..., 32:, :] = np.nan
    what = (f"causal attention on generated {_shapes(q, k, v)} whose last 4 keys and values "
            f"are NaN (rows 0–15, 16 × 16 blocks)")
    o, lse = pair(sub.flash_attention_forward(tensor(q, "float32"), tensor(k, "float32"),
                                              tensor(v, "float32"), is_causal=True,
                                              block_m=16, block_n=16), what)
    o64, lse64 = attention64(q[..., :n, :], k[..., :32, :], v[..., :32, :], causal=True)
    for name, got, shape, expected in (("O", o, (1, 1, L, Ev), o64),
                                       ("lse", lse, (1, 1, L), lse64)):
        if not isinstance(got, codec.TensorData) or got.shape != shape or got.values is None:
            safe_fail(f"{name} of {what}: expected tensor {shape}, got {describe(got)}")
        rows = dataclasses.replace(got, values=got.values[:, :, :n], shape=expected.shape)
        expect_tensor(rows, expected, dtype="float32", what=f"{name} of {what}")


@graded("flash_attention_forward",
        "float64 input, a non-finite scale, or a block size other than 16, 32, 64 or 128 "
        "raises ValueError")
def test_forward_bad_options(sub, ref):
    q, k, v = qkv(seeded(829), (1, 1), 4, 6, 8, 8)
    args = [tensor(a, "float32") for a in (q, k, v)]
    expect_raises("ValueError", sub.flash_attention_forward,
                  *(tensor(a, "float64") for a in (q, k, v)), what="float64 q, k and v")
    for scale in (float("nan"), float("inf"), float("-inf")):
        expect_raises("ValueError", sub.flash_attention_forward, *args, scale=scale,
                      what=f"scale = {scale}")
    for kw in ({"block_m": 8}, {"block_n": 24}, {"block_m": 256}, {"block_n": 48}):
        expect_raises("ValueError", sub.flash_attention_forward, *args, **kw,
                      what=", ".join(f"{n} = {b}" for n, b in kw.items()))


@graded("flash_attention_forward",
        "on two heads with is_causal too: float64 input, a NaN scale, block_m = 12 or k on the "
        "meta device raise ValueError")
def test_forward_bad_options_heads(sub, ref):
    q, k, v = qkv(seeded(836), (2, 2), 5, 7, 4, 6)
    args = [tensor(a, "float32") for a in (q, k, v)]
    expect_raises("ValueError", sub.flash_attention_forward,
                  *(tensor(a, "float64") for a in (q, k, v)), is_causal=True,
                  what="float64 q, k and v, is_causal")
    expect_raises("ValueError", sub.flash_attention_forward, *args, is_causal=True,
                  scale=float("nan"), what="scale = nan, is_causal")
    expect_raises("ValueError", sub.flash_attention_forward, *args, block_m=12,
                  what="block_m = 12")
    expect_raises("ValueError", sub.flash_attention_forward, args[0],
                  tensor(k, "float32", "meta"), args[2], is_causal=True,
                  what="k on the meta device, q and v on the CPU, is_causal")


@graded("flash_attention_forward", "a Triton kernel computes it (kernel launches, the "
        "elements its programs load and PyTorch's maths beside them counted in the worker)",
        advisory=True)
def test_forward_launches(sub, ref):
    q, k, v = qkv(seeded(830), (1, 1), 16, 20, 8, 8)
    out = sub.probe("triton_launches", TOPIC, "flash_attention_forward",
                    *(tensor(a, "float32") for a in (q, k, v)), is_causal=True)
    if not isinstance(out, dict) or "launches" not in out:
        safe_fail(f"could not count the Triton launches of flash_attention_forward "
                  f"(got {describe(out)})")
    expect_forward(out["result"], q, k, v, dtype="float32", causal=True,
                   what=f"causal attention on generated {_shapes(q, k, v)}")
    if out["launches"] < 1:
        safe_fail("flash_attention_forward launched no Triton kernel: the attention must be "
                  "computed by a @triton.jit kernel, not by PyTorch")
    _expect_loads(out, q.size + k.size + v.size, "flash_attention_forward", "q, k and v")
    _expect_no_torch_maths(out, "flash_attention_forward")


@graded("flash_attention_forward", "on CUDA: float16 and bfloat16 at L = S = 2048, causal or "
        "not, within twice the FlashAttention-2 recipe's error", gpu=True)
def test_forward_cuda(sub, ref):
    rng = seeded(831)
    for dtype in HALF:
        q, k, v = qkv(rng, (1, 2), 2048, 2048, 64, 64, dtype=dtype)
        for causal in (False, True):
            _forward(sub, q, k, v, dtype=dtype, device="cuda", causal=causal,
                     what=f"{dtype} {'causal ' if causal else ''}attention at L = S = 2048 "
                          f"on CUDA")


# ------------------------------------------------------------------ flash_attention_backward


def _backward(sub, ref, q, k, v, do, *, dtype: str, causal: bool = False,
              scale: float | None = None, what: str) -> None:
    """Hand the submission the inputs and the exact (O, lse), rounded to ``dtype`` (lse to
    float32, or float64 for float64 inputs), and judge (dq, dk, dv).

    float64/float32: against the backward formulas in float64 from the same rounded inputs, to
    the dtype's tolerance. float16: each gradient's largest error against the exact float64
    gradients must be at most twice the error of the formulas in float32 from the same O and
    lse rounded once (the half-precision rule), plus 1e-5.
    """
    o64, lse64 = attention64(q, k, v, causal, scale)
    o = rounded(o64, dtype)
    lse_dtype = "float64" if dtype == "float64" else "float32"
    lse = rounded(lse64, lse_dtype)
    kw = {"is_causal": causal} if causal else {}
    if scale is not None:
        kw["scale"] = scale
    got = triple(sub.flash_attention_backward(
        *(tensor(a, dtype) for a in (q, k, v, o)), tensor(lse, lse_dtype), tensor(do, dtype),
        **kw), what)
    if dtype in HALF:
        tdt = getattr(torch, dtype)
        exact = ref.flash_attention_backward(*(as_torch(a) for a in (q, k, v, o64, lse64, do)),
                                             **kw)
        recipe = ref.flash_attention_backward(
            *(as_torch(a).to(tdt) for a in (q, k, v, o)), as_torch(lse).float(),
            as_torch(do).to(tdt), **kw)
        for name, g, e, r in zip(("dq", "dk", "dv"), got, exact, recipe):
            bound = 2 * max_error(r.double().numpy(), e.numpy()) + 1e-5
            expect_tensor(g, e.numpy(), dtype=dtype, rtol=0.0, atol=bound,
                          what=f"{name} of {what} (within twice the float32 formulas' error)")
    else:
        expected = ref.flash_attention_backward(*(as_torch(a) for a in (q, k, v, o, lse, do)),
                                                **kw)
        for name, g, e in zip(("dq", "dk", "dv"), got, expected):
            expect_tensor(g, e.numpy(), dtype=dtype, what=f"{name} of {what}")


@graded("flash_attention_backward", "float64 inputs stay float64 and match the formulas "
        "(ragged, E ≠ Ev, S over several key blocks, causal L < S, an lse near 30)")
def test_backward_float64(sub, ref):
    rng = seeded(840)
    # the last case spreads q and k 3×: lse near 30, where rounding it to float32 shows
    for lead, L, S, E, Ev, causal, spread in (((2, 1), 7, 300, 12, 5, False, 1.0),
                                              ((1, 2), 20, 300, 8, 16, True, 1.0),
                                              ((1, 1), 1, 1, 3, 2, False, 1.0),
                                              ((1, 1), 6, 40, 8, 8, False, 3.0)):
        q, k, v = qkv(rng, lead, L, S, E, Ev, dtype="float64", spread=spread)
        do = rng.standard_normal((*lead, L, Ev))
        _backward(sub, ref, q, k, v, do, dtype="float64", causal=causal,
                  what=f"{'causal ' if causal else ''}gradients for generated {_shapes(q, k, v)}")


@graded("flash_attention_backward", "float32 inputs give float32 gradients matching the float64 "
        "formulas (causal with L = S and L < S; an explicit scale 0.6)")
def test_backward_float32(sub, ref):
    rng = seeded(841)
    for lead, L, S, E, Ev, causal, scale in (((2, 2), 33, 33, 16, 16, True, None),
                                             ((1, 3), 9, 70, 10, 6, True, 0.6),
                                             ((1, 1), 40, 25, 16, 24, False, None)):
        q, k, v = qkv(rng, lead, L, S, E, Ev)
        do = rounded(rng.standard_normal((*lead, L, Ev)), "float32")
        _backward(sub, ref, q, k, v, do, dtype="float32", causal=causal, scale=scale,
                  what=f"{'causal ' if causal else ''}gradients for generated {_shapes(q, k, v)}"
                       + ("" if scale is None else f", scale = {scale}"))


@graded("flash_attention_backward", "float16 inputs: each gradient within twice the error of "
        "the formulas in float32 rounded once (and with D = rowsum(dO ∘ O) past 65504)")
def test_backward_float16(sub, ref):
    rng = seeded(842)
    for lead, L, S, E, Ev, causal in (((1, 2), 24, 200, 16, 8, True),
                                      ((2, 1), 32, 32, 32, 32, False)):
        q, k, v = qkv(rng, lead, L, S, E, Ev, dtype="float16")
        do = rounded(rng.standard_normal((*lead, L, Ev)), "float16")
        _backward(sub, ref, q, k, v, do, dtype="float16", causal=causal,
                  what=f"float16 {'causal ' if causal else ''}gradients for generated "
                       f"{_shapes(q, k, v)}")
    q, k, v, do = _large_d(rng, (1, 2), 5, 9, causal=True)
    _backward(sub, ref, q, k, v, do, dtype="float16", causal=True,
              what=f"float16 causal gradients for generated {_shapes(q, k, v)} with values and "
                   f"dO near 50")


@graded("flash_attention_backward", "float16 with O and dO near 50 in 32 columns: "
        "D = rowsum(dO ∘ O) ≈ 80 000 is past float16's largest value, so it is formed in "
        "float32; the gradients stay float16")
def test_backward_float16_large(sub, ref):
    q, k, v, do = _large_d(seeded(846), (1, 1), 8, 12, causal=False)
    _backward(sub, ref, q, k, v, do, dtype="float16",
              what=f"float16 gradients for generated {_shapes(q, k, v)} with values and dO "
                   f"near 50")


def _large_d(rng, lead: tuple, L: int, S: int, causal: bool):
    """float16 (q, k, v, dO) with D = rowsum(dO ∘ O) near 80 000, past float16's 65504:
    nearly uniform attention over 32-wide values 50 ± 1 makes O ≈ 50, and dO = O ± 1, so D is
    large while dP − D, and with it every gradient, stays small."""
    q, k, _ = qkv(rng, lead, L, S, 8, 32, dtype="float16", spread=0.1)
    v = rounded(50.0 + rng.standard_normal((*lead, S, 32)), "float16")
    o = attention64(q, k, v, causal)[0]
    return q, k, v, rounded(o + rng.standard_normal(o.shape), "float16")


@graded("flash_attention_backward",
        "the default scale is 1/√E (E = 9, Ev = 4); an explicit scale replaces it")
def test_backward_scale(sub, ref):
    rng = seeded(843)
    q, k, v = qkv(rng, (1, 1), 6, 11, 9, 4, dtype="float64", spread=1.5)
    do = rng.standard_normal((1, 1, 6, 4))
    _backward(sub, ref, q, k, v, do, dtype="float64", what="gradients with E = 9, Ev = 4")
    for scale in (0.25, 1.7):
        _backward(sub, ref, q, k, v, do, dtype="float64", causal=True, scale=scale,
                  what=f"causal gradients with scale = {scale}")


@graded("flash_attention_backward",
        "mismatched shapes, dtypes or devices raise ValueError with a message")
def test_backward_errors(sub, ref):
    rng = seeded(844)
    q, k, v = qkv(rng, (1, 2), 4, 6, 8, 8)
    o, lse, do = np.zeros((1, 2, 4, 8)), np.zeros((1, 2, 4)), np.ones((1, 2, 4, 8))
    base = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do}
    cases = [
        ("o of shape (1, 2, 4, 3)", {"o": o[..., :3]}, {}),
        ("lse of shape (1, 2, 3)", {"lse": lse[..., :3]}, {}),
        ("do of shape (1, 2, 5, 8)", {"do": np.ones((1, 2, 5, 8))}, {}),
        ("v with 5 keys where k has 6", {"v": v[:, :, :5]}, {}),
        ("q of rank 3", {"q": q[0]}, {}),
        ("v of rank 3", {"v": v[..., 0]}, {}),
        ("do in float64, the rest in float32", {}, {"do": "float64"}),
        ("v in float16, the rest in float32", {}, {"v": "float16"}),
        ("v on the meta device", {}, {"v": "meta"}),
        # Not graded: an lse that is a list, not a tensor (the docstring refuses it; docs/design/exercise-api.md
        # names errors for shapes, dtypes and devices only, and natural code raises
        # AttributeError there).
    ]
    for what, arrays, kinds in cases:
        given = {**base, **arrays}
        args = []
        for name, a in given.items():
            kind = kinds.get(name, "float32")
            args.append(tensor(a, "float32", "meta") if kind == "meta" else tensor(a, kind))
        expect_rule("ValueError", sub.flash_attention_backward, *args, what=what)


@graded("flash_attention_backward", "q and k of different widths, heads and batches that "
        "differ between the inputs, or one input of another dtype or device, on two batches "
        "of two heads, raise ValueError")
def test_backward_mismatch_other(sub, ref):
    rng = seeded(845)
    q, k, v = qkv(rng, (2, 2), 3, 5, 4, 6)
    o, lse, do = np.zeros((2, 2, 3, 6)), np.zeros((2, 2, 3)), np.ones((2, 2, 3, 6))
    cases = [("k of width 3 where q has 4", dict(k=k[..., :3])),
             ("k and v with one head where q has two", dict(k=k[:, :1], v=v[:, :1])),
             ("do of batch 1 where the rest have 2", dict(do=do[:1])),
             ("lse of 2 queries where q has 3", dict(lse=lse[..., :2]))]
    for what, changed in cases:
        given = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do, **changed}
        exc = expect_raises("ValueError", sub.flash_attention_backward,
                            *(tensor(a, "float32") for a in given.values()), what=what)
        expect_message_names(exc)
    given = {"q": q, "k": k, "v": v, "o": o, "lse": lse, "do": do}
    for what, name, dtype, device in (("o in float16, the rest in float32", "o", "float16", "cpu"),
                                      ("q in float64, the rest in float32", "q", "float64", "cpu"),
                                      ("do on the meta device", "do", "float32", "meta")):
        exc = expect_raises("ValueError", sub.flash_attention_backward,
                            *(tensor(a, dtype, device) if n == name else tensor(a, "float32")
                              for n, a in given.items()), what=what)
        expect_message_names(exc)


# ------------------------------------------------------------------ FlashAttention


def _check_flash(sub, ref, q, k, v, do, *, dtype: str, causal: bool, what: str) -> None:
    """FlashAttention.apply then O.backward(dO) in the worker, judged against SDPA's float64
    gradients (bottom-right mask): float32 to its tolerance, float16 by the half-precision rule, the
    recipe being the FlashAttention-2 forward and the float32 formulas from its O and lse."""
    o, grads = flash_apply(sub, q, k, v, do, dtype=dtype, causal=causal)
    o64 = attention64(q, k, v, causal)[0]
    exact = autograd64(q, k, v, do, causal)
    if dtype in HALF:
        tdt = getattr(torch, dtype)
        o_r, lse_r = fa2_recipe(q, k, v, dtype, causal)
        expect_tensor(o, o64, dtype=dtype, rtol=0.0, atol=2 * max_error(o_r, o64) + 1e-5,
                      what=f"O of {what} (within twice the FlashAttention-2 recipe's error)")
        recipe = ref.flash_attention_backward(
            *(as_torch(a).to(tdt) for a in (q, k, v, o_r)), as_torch(lse_r).float(),
            as_torch(do).to(tdt), is_causal=causal)
        for name, g, e, r in zip(("dq", "dk", "dv"), grads, exact, recipe):
            if g is None:
                safe_fail(f"{name} of {what}: the input received no gradient")
            bound = 2 * max_error(r.double().numpy(), e) + 1e-5
            expect_tensor(g, e, dtype=dtype, rtol=0.0, atol=bound,
                          what=f"{name} of {what} (within twice the recipe's error)")
        return
    expect_tensor(o, o64, dtype=dtype, what=f"O of {what}")
    for name, g, e in zip(("dq", "dk", "dv"), grads, exact):
        if g is None:
            safe_fail(f"{name} of {what}: the input received no gradient")
        expect_tensor(g, e, dtype=dtype, what=f"{name} of {what}")


@graded("FlashAttention", "float32, not causal, ragged (L = S = 9, E = 16, Ev = 24, two "
        "heads): O and the gradients match SDPA's")
def test_flash_plain(sub, ref):
    rng = seeded(850)
    q, k, v = qkv(rng, (1, 2), 9, 9, 16, 24)
    do = rounded(rng.standard_normal((1, 2, 9, 24)), "float32")
    _check_flash(sub, ref, q, k, v, do, dtype="float32", causal=False,
                 what=f"FlashAttention on generated {_shapes(q, k, v)}")


@graded("FlashAttention", "float32, causal with L < S: the gradients match SDPA's with an "
        "explicit bottom-right mask")
def test_flash_causal(sub, ref):
    rng = seeded(851)
    q, k, v = qkv(rng, (1, 1), 12, 24, 16, 8)
    do = rounded(rng.standard_normal((1, 1, 12, 8)), "float32")
    _check_flash(sub, ref, q, k, v, do, dtype="float32", causal=True,
                 what=f"causal FlashAttention on generated {_shapes(q, k, v)}")


@graded("FlashAttention", "float16, causal: O and the gradients within twice the error of "
        "the FlashAttention-2 recipe and the float32 formulas")
def test_flash_float16(sub, ref):
    rng = seeded(852)
    q, k, v = qkv(rng, (1, 1), 16, 40, 16, 16, dtype="float16")
    do = rounded(rng.standard_normal((1, 1, 16, 16)), "float16")
    _check_flash(sub, ref, q, k, v, do, dtype="float16", causal=True,
                 what=f"float16 causal FlashAttention on generated {_shapes(q, k, v)}")


@graded("FlashAttention", "is_causal defaults to False; with L > S and is_causal it raises "
        "ValueError")
def test_flash_defaults(sub, ref):
    rng = seeded(853)
    q, k, v = qkv(rng, (1, 1), 16, 16, 8, 8)
    leaves = [sub.lib("torch.as_tensor", codec.tensor_spec(a, dtype="float32",
                                                           requires_grad=True))
              for a in (q, k, v)]
    out = sub.new("FlashAttention.apply", *leaves)
    expect_tensor(out.call("detach"), attention64(q, k, v)[0], dtype="float32",
                  what=f"FlashAttention.apply(q, k, v) on generated {_shapes(q, k, v)}")
    if out.attribute("requires_grad") is not True:
        safe_fail("FlashAttention.apply(q, k, v): O should require grad when q, k, v do")
    q, k, v = qkv(rng, (1, 1), 16, 8, 8, 8)
    leaves = [sub.lib("torch.as_tensor", codec.tensor_spec(a, dtype="float32",
                                                           requires_grad=True))
              for a in (q, k, v)]
    expect_raises("ValueError", sub.new, "FlashAttention.apply", *leaves, True,
                  what="is_causal with L = 16, S = 8")


@graded("FlashAttention", "on CUDA in bfloat16 (L = S = 256, causal): O and the gradients "
        "within twice the recipe's error", gpu=True)
def test_flash_cuda(sub, ref):
    rng = seeded(854)
    dtype = "bfloat16"
    q, k, v = qkv(rng, (1, 2), 256, 256, 64, 64, dtype=dtype)
    do = rounded(rng.standard_normal((1, 2, 256, 64)), dtype)
    leaves = [sub.lib("torch.as_tensor", codec.tensor_spec(a, dtype=dtype, device="cuda",
                                                           requires_grad=True))
              for a in (q, k, v)]
    out = sub.new("FlashAttention.apply", *leaves, True)
    o = out.call("detach")
    out.call("backward", tensor(do, dtype, "cuda"))
    grads = [leaf.attribute("grad") for leaf in leaves]
    if not isinstance(o, codec.TensorData) or not o.device.startswith("cuda"):
        safe_fail(f"FlashAttention on CUDA: expected O on CUDA, got {describe(o)}")
    tdt = getattr(torch, dtype)
    o64 = attention64(q, k, v, True)[0]
    o_r, lse_r = fa2_recipe(q, k, v, dtype, True)
    expect_tensor(o, o64, dtype=dtype, device=o.device, rtol=0.0,
                  atol=2 * max_error(o_r, o64) + 1e-5, what="O of bfloat16 FlashAttention")
    recipe = ref.flash_attention_backward(*(as_torch(a).to(tdt) for a in (q, k, v, o_r)),
                                          as_torch(lse_r).float(), as_torch(do).to(tdt),
                                          is_causal=True)
    for name, g, e, r in zip(("dq", "dk", "dv"), grads, autograd64(q, k, v, do, True), recipe):
        expect_tensor(g, e, dtype=dtype, device=o.device, rtol=0.0,
                      atol=2 * max_error(r.double().numpy(), e) + 1e-5,
                      what=f"{name} of bfloat16 FlashAttention on CUDA")
