"""Every number in the lessons' prose is either computed here from the solutions or declared an
input of the example it belongs to.

Each ``Claim`` names a lesson, the text the lesson prints, and how the solutions compute it; the
test checks both that the text is in the lesson and that the solutions produce exactly that text
when rounded as the lesson rounds. ``GIVEN`` lists the numbers a lesson *states* (inputs, model
sizes, temperatures), and ``test_every_number_is_accounted_for`` fails on any other number, so
a number added to a lesson without a check here is caught.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from solutions import ex01_vectors as ex1
from solutions import ex02_projections as ex2
from solutions import ex03_softmax as ex3
from solutions import ex04_svd_lora as ex4
from solutions import ex05_attention as ex5
from solutions import ex06_rotation_norm as ex6
from solutions import ex07_matrix_properties as ex7

from .conftest import DOCS
from .prose import numbers_in_prose, prose_of


@dataclass(frozen=True)
class Claim:
    lesson: str
    text: str  # as the lesson writes it
    compute: Callable[[], str]  # the same text, produced from the solutions
    wrong: bool = False  # a value the lesson quotes as a mistake: must NOT match


def fmt(value: float, spec: str) -> str:
    return format(float(value), spec)


def vec(values, spec: str = ".3f") -> str:
    return "[" + ", ".join(format(float(v), spec) for v in np.ravel(values)) + "]"


# ------------------------------------------------------------------ lesson 1: cat and dog
cat, dog = np.array([0.8, 0.3]), np.array([0.6, 0.7])
L1 = "01-vectors.md"


def unit_rows():
    return ex1.normalize_rows(np.stack([cat, dog]))


# ------------------------------------------------------------------ lesson 2: toy, up/down, GPT-2
L2 = "02-projections.md"
X_toy = np.array([[1.0, 0.0, 2.0, -1.0], [0.0, 1.0, 1.0, 1.0]])
W_Q = np.array([[1, 0], [0, 1], [1, -1], [0, 1]], dtype=float)
W_K = np.array([[0, 1], [1, 0], [-1, 1], [1, 0]], dtype=float)
W_V = np.array([[1, 0], [2, 0], [0, 1], [0, 0]], dtype=float)
W_up = np.array([[0.6, 0.25, 0.5], [0.1, 0.3, 0.5]])  # row form (d_in, d_out), as printed
W_down = np.array([[0.4, 0.3], [0.5, 0.1], [0.2, 0.6]])


def toy_qkv():
    return ex2.project_qkv(X_toy, W_Q, W_K, W_V)


def toy_qk():
    return toy_qkv()[:2]


def toy_weights() -> np.ndarray:
    """Lesson 2's row softmax of the scaled toy scores, (2, 2)."""
    return ex3.softmax(ex2.attention_scores(*toy_qk()), axis=-1)


def toy_outputs() -> np.ndarray:
    return toy_weights() @ toy_qkv()[2]


def lifted():
    return ex2.linear(cat, W_up)


def null_direction():
    n = np.cross(W_down[:, 0], W_down[:, 1])
    assert np.allclose(ex2.linear(n, W_down), 0.0, atol=1e-12), "not sent to zero"
    return n


def cauchy_schwarz_example() -> str:
    """[1, 0] against itself and against the longer, nearly aligned [2, 0.1]."""
    x, y = np.array([1.0, 0.0]), np.array([2.0, 0.1])
    self_score, other = ex1.dot(x, x), ex1.dot(x, y)
    relation = ">" if other > self_score else "<="
    return f"x \\cdot x = {self_score:g}$ but $x \\cdot y = {other:g} {relation} {self_score:g}"


def gelu_tanh_gap() -> float:
    x = np.linspace(-8.0, 8.0, 160_001)
    return float(np.abs(ex2.gelu(x) - ex2.gelu(x, approximate="tanh")).max())


def gpt2_weights() -> dict[str, int]:
    mm = ex2.transformer_matmuls(d_model=768, n_heads=12, d_ff=3072, vocab_size=50257, seq_len=1024)
    return {m.name: m.b_shape[0] * m.b_shape[1] for m in mm}


def gpt2_layer() -> int:
    w = gpt2_weights()
    return sum(w[k] for k in ("q_proj", "k_proj", "v_proj", "out_proj", "ffn_up", "ffn_down"))


# ------------------------------------------------------------------ lesson 3: softmax
L3 = "03-softmax.md"
z3 = np.array([2.0, 1.0, 0.1])


def entropy(p) -> float:
    p = np.asarray(p)
    return float(-(p[p > 0] * np.log(p[p > 0])).sum())


def cross_entropy_gradient(z, target: int) -> np.ndarray:
    """d(-log p_target)/dz by central differences of the solutions' log_softmax."""
    z, h = np.asarray(z, dtype=float), 1e-6
    grad = np.empty_like(z)
    for i in range(len(z)):
        step = np.zeros_like(z)
        step[i] = h
        grad[i] = (ex3.log_softmax(z - step)[target] - ex3.log_softmax(z + step)[target]) / (2 * h)
    return grad


def running_sum(z) -> float:
    """The online-softmax running sum l = Σ exp(z − max z), from the solutions' logsumexp."""
    z = np.asarray(z, dtype=float)
    return float(np.exp(ex3.logsumexp(z) - z.max()))


# ------------------------------------------------------------------ lesson 4: SVD and LoRA
L4 = "04-svd-lora.md"


def worked_matrix() -> np.ndarray:
    rng = np.random.default_rng(0)
    q1, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    q2, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    return q1 @ np.diag([4.0, 2.0, 1.0, 0.5]) @ q2.T


def worked_S() -> np.ndarray:
    return ex4.truncated_svd(worked_matrix(), 4)[1]


def energy_share(k: int) -> float:
    s2 = worked_S() ** 2
    return 100 * s2[:k].sum() / s2.sum()


def svd_storage(m: int, n: int, k: int) -> int:
    """How many numbers the truncated SVD of an (m, n) matrix holds, read off its shapes."""
    U, S, Vt = ex4.truncated_svd(np.random.default_rng(0).normal(size=(m, n)), k)
    return U.size + S.size + Vt.size


def svd_storage_4096() -> int:
    """k(m + n + 1) for a 4096 x 4096 matrix at k = 64: the formula checked on real shapes
    (a smaller matrix, since a 4096-wide SVD takes a while), then applied."""
    assert svd_storage(40, 30, 5) == 5 * (40 + 30 + 1)
    return 64 * (4096 + 4096 + 1)


def lora_counts() -> tuple[int, int, float]:
    torch.manual_seed(0)
    base = torch.nn.Linear(4096, 4096, bias=False)
    layer = ex4.LoRALinear(base, r=8, alpha=16)
    trainable = sum(p.numel() for p in layer.parameters() if p.requires_grad)
    return trainable, base.weight.numel(), layer.scaling


# ------------------------------------------------------------------ lesson 5: the worked example
L5 = "05-attention.md"


def toy_attention(**kwargs) -> torch.Tensor:
    """Lesson 2's projected tokens through the solution's attention, (2, 2)."""
    Q, K, V = (torch.tensor(a) for a in toy_qkv())
    return ex5.scaled_dot_product_attention(Q, K, V, **kwargs)


def fp16_score(c: float, d: int = 64) -> int:
    """q . k for float16 q = k = [c] * d, computed exactly (in float32) as the solution does."""
    q = torch.full((1, d), c, dtype=torch.float16)
    return int((q.float() @ q.float().T).item())


# ------------------------------------------------------------------ lesson 6: rotation and norms
L6 = "06-rotation-norm.md"
x6 = np.array([1.0, 2.0, 3.0, 4.0])


def rope_wavelengths(d: int) -> tuple[float, float]:
    """Positions per full turn of the first pair, and of the last rounded to thousands."""
    theta = ex6.rope_angles(np.array([1]), d)[0]
    return 2 * math.pi / theta[0], round(2 * math.pi / theta[-1], -3)


def rope_score(m: int, n: int) -> float:
    """[1, 0] rotated to position m against [1, 0] rotated to position n, in the first pair."""
    e = np.array([[1.0, 0.0]])
    return float(ex6.apply_rope(e, np.array([m]))[0] @ ex6.apply_rope(e, np.array([n]))[0])


def toy_rope() -> tuple[np.ndarray, np.ndarray]:
    """Lesson 2's queries and keys rotated to positions 0 and 1: (Q, K), each (2, 2)."""
    Q, K, _ = toy_qkv()
    at = np.array([0, 1])
    return ex6.apply_rope(Q, at), ex6.apply_rope(K, at)


def toy_rope_scores(scale: bool = False) -> np.ndarray:
    Q, K = toy_rope()
    return ex2.attention_scores(Q, K, scale=None if scale else 1.0) + 0.0


def toy_qk_norm_scores() -> np.ndarray:
    """Lesson 2's scaled scores after QK-norm with unit gains, (2, 2)."""
    Q, K, _ = toy_qkv()
    qn, kn = ex6.qk_norm(Q[None], K[None], np.ones(2), np.ones(2))
    # rounded first: the cross scores are ±1e-17, which would print as -0.00
    return np.round(ex2.attention_scores(qn[0], kn[0]), 12) + 0.0


# ------------------------------------------------------------------ lesson 7
L7 = "07-matrix-properties.md"


def rnn_gradient_norm(lam: float, T: int = 50, d: int = 16) -> float:
    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(d, d)))
    return float(np.linalg.norm(ex7.bptt_jacobian(lam * Q, np.zeros((T, d))), 2))


# A non-normal W_hh: spectral radius below 1, largest singular value far above it.
W_nonnormal = np.array([[3.29, 11.7], [-0.86, -3.29]])
ALTERNATING = np.tile([[0.0, 6.0], [6.0, 0.0]], (25, 1))  # the units take turns saturating


def nonnormal_growth(pre_activations: np.ndarray) -> float:
    return float(np.linalg.norm(ex7.bptt_jacobian(W_nonnormal, pre_activations), 2))


def sci(value: float, digits: int = 1) -> str:
    """1.2e+25 as the lessons write it: 1.2 \\times 10^{25}."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


def window_reach(layers: int, window: int = 128, n: int = 512) -> int:
    """How far back the last query of n sees through ``layers`` stacked causal windows."""
    step = ex7.sliding_window_mask(n, window).astype(np.int64)
    reach = np.eye(n, dtype=np.int64)
    for _ in range(layers):
        reach = np.minimum(reach @ step, 1)  # boolean product: some path exists
    return int((n - 1) - np.flatnonzero(reach[-1])[0])


def causal_weights() -> torch.Tensor:
    """Lesson 2's toy attention weights under the causal mask (values = identity), (2, 2)."""
    Q, K, _ = (torch.tensor(a) for a in toy_qkv())
    w = ex5.scaled_dot_product_attention(Q, K, torch.eye(2, dtype=Q.dtype), is_causal=True)
    assert torch.equal(w, w.tril()), "not lower triangular"
    return w


def newton_schulz_value(steps: int) -> float:
    """The singular value 0.1 after ``steps`` Newton–Schulz steps: G = diag(0.1, √0.99) has
    Frobenius norm 1, so the solution's scaling leaves it as it is."""
    G = np.diag([0.1, math.sqrt(0.99)])
    return float(ex7.newton_schulz_orthogonalize(G, n_iter=steps)[0, 0])


# ------------------------------------------------------------------ lesson 8: FlashAttention
# The byte and FLOP counts and the causal tile grid are the code lesson 8 shows (snippet sections
# of its notebook), run here as they are shown: the numbers of the prose come from that code.
L8 = "08-flash-attention.md"
NOTEBOOK8 = DOCS / "notebooks" / "08-flash-attention.py"
HEAD = {"L": 4096, "S": 4096, "E": 128, "Ev": 128}  # one head of lesson 8's example


@functools.cache
def notebook_section(*names: str) -> dict:
    """The namespace left by running sections ``names`` of lesson 8's notebook, in that order
    and in one namespace (a later section may use an earlier one's names; output dropped)."""
    text = NOTEBOOK8.read_text(encoding="utf-8")
    namespace: dict = {"math": math, "torch": torch}
    for name in names:
        body = text.split(f"# --8<-- [start:{name}]\n")[1].split(f"# --8<-- [end:{name}]")[0]
        with contextlib.redirect_stdout(io.StringIO()):
            # the repository's own notebook code, the exact lines the lesson shows
            exec(compile(body, f"{NOTEBOOK8.name}:{name}", "exec"), namespace)  # noqa: S102
    return namespace


def traffic(kind: str, **sizes) -> float:
    """Bytes moved for one head: 'plain', 'reread' (block_m = 128) or 'once'."""
    ns, size = notebook_section("traffic"), {**HEAD, **sizes}
    if kind == "plain":
        return ns["plain_bytes"](**size)
    return ns["tiled_bytes"](**size, block_m=128 if kind == "reread" else None)


def head_flops(**sizes) -> int:
    return notebook_section("traffic")["attention_flops"](**{**HEAD, **sizes})


def ridge() -> float:
    return notebook_section("traffic")["ridge"]


def microseconds(seconds: float) -> float:
    return seconds * 1e6


def memory_time(kind: str) -> float:
    return microseconds(traffic(kind) / notebook_section("traffic")["HBM_BYTES_PER_S"])


def compute_time() -> float:
    return microseconds(head_flops() / notebook_section("traffic")["DENSE_FLOP_PER_S"])


def tile_counts(L: int, S: int, block: int) -> dict[str, int]:
    grid = notebook_section("tiles")["tile_kinds"](L, S, block, block)
    return {kind: sum(row.count(kind) for row in grid) for kind in ("skip", "mask", "full")}


def exponentials() -> dict:
    """Lesson 8's count of the softmax's exponentials against the products (its notebook)."""
    return notebook_section("traffic", "exponentials")


def one_key_at_a_time() -> dict:
    """Lesson 2's tokens through lesson 8's online softmax with block_n = 1 (its notebook):
    m, l, alpha for each step, recomputed here key by key as the lesson's bullets list them."""
    ns = notebook_section("blocks", "onepass")
    q, k = ns["q2"], ns["k2"]
    s = q @ k.T / math.sqrt(2)  # (2, 2) scaled scores
    alpha = torch.exp(s[:, 0] - torch.maximum(s[:, 0], s[:, 1]))  # rescale at key 2
    l = alpha + torch.exp(s[:, 1] - torch.maximum(s[:, 0], s[:, 1]))
    out = ns["acc"] / ns["l"]
    assert torch.allclose(ns["l"].ravel(), l) and torch.allclose(ns["m"].ravel(), s.amax(1))
    assert torch.allclose(out, toy_attention())  # lesson 2's outputs, from lesson 5's solution
    return {"s": s, "alpha": alpha, "l": l, "out": out, "lse": ns["m"].ravel() + torch.log(l)}


def copy_model_steps() -> str:
    """How many steps lesson 5's notebook trains its copy model (lesson 1 quotes it)."""
    source = (DOCS / "notebooks" / "05-attention.py").read_text(encoding="utf-8")
    return re.search(r"for step in range\((\d+)\):", source).group(1)


def megabytes(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


CLAIMS = [
    # lesson 1
    Claim(L1, "0.69", lambda: fmt(ex1.dot(cat, dog), ".2f")),
    Claim(L1, "150", copy_model_steps),  # the copy model's training, reused for lesson 1
    Claim(L1, "0.73", lambda: fmt(ex1.dot(cat, cat), ".2f")),
    Claim(L1, "0.85", lambda: fmt(ex1.dot(dog, dog), ".2f")),
    Claim(L1, "-0.73", lambda: fmt(ex1.dot(cat, -cat), ".2f")),
    Claim(L1, "0.854", lambda: fmt(math.sqrt(ex1.dot(cat, cat)), ".3f")),
    Claim(L1, "0.922", lambda: fmt(math.sqrt(ex1.dot(dog, dog)), ".3f")),
    Claim(L1, "0.876", lambda: fmt(ex1.cosine_similarity(cat, dog), ".3f")),
    Claim(L1, "28.8", lambda: fmt(ex1.angle_between(cat, dog), ".1f")),
    Claim(L1, "28.84", lambda: fmt(ex1.angle_between(cat, dog), ".2f")),
    Claim(L1, "[0.936, 0.351]", lambda: vec(unit_rows()[0])),
    Claim(L1, "[0.651, 0.759]", lambda: vec(unit_rows()[1])),
    Claim(L1, "0.876", lambda: fmt(ex1.pairwise_dot(unit_rows(), unit_rows())[0, 1], ".3f")),
    # a longer key only sharpens: doubling dog doubles both its positive and its negative score
    Claim(
        L1,
        "from 0.69 to 1.38",
        lambda: f"from {ex1.dot(cat, dog):.2f} to {ex1.dot(cat, 2 * dog):.2f}",
    ),
    Claim(
        L1,
        "from $-0.69$ to $-1.38$",
        lambda: f"from ${ex1.dot(-cat, dog):.2f}$ to ${ex1.dot(-cat, 2 * dog):.2f}$",
    ),
    # QK-norm's RMSNorm gives length sqrt(d), not 1
    Claim(
        L1,
        "$\\sqrt 2 \\approx 1.414$",
        lambda: (
            "$\\sqrt 2 \\approx " + fmt(np.linalg.norm(ex6.rms_norm(cat, np.ones(2))), ".3f") + "$"
        ),
    ),
    # lesson 2
    Claim(L2, "[3, -3]", lambda: vec(toy_qk()[0][0], ".0f")),
    Claim(L2, "[1, 1]", lambda: vec(toy_qk()[1][1], ".0f")),
    Claim(L2, "q_2 = [1, 1]", lambda: "q_2 = " + vec(toy_qk()[0][1], ".0f")),
    Claim(L2, "k_1 = [-3, 3]", lambda: "k_1 = " + vec(toy_qk()[1][0], ".0f")),
    Claim(
        L2,
        "-18 & 0 \\\\ 0 & 2",
        lambda: "{:.0f} & {:.0f} \\\\ {:.0f} & {:.0f}".format(
            *(ex2.attention_scores(*toy_qk(), scale=1.0).ravel() + 0.0)
        ),
    ),
    Claim(
        L2,
        "-12.73 & 0 \\\\ 0 & 1.41",
        lambda: "{:.2f} & {:.0f} \\\\ {:.0f} & {:.2f}".format(
            *(ex2.attention_scores(*toy_qk()).ravel() + 0.0)
        ),
    ),
    Claim(
        L2,
        "1.414",
        lambda: fmt(
            1 / ex2.attention_scores(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]))[0, 0], ".3f"
        ),
    ),
    Claim(
        L2,
        "\\frac{3 - 3}{\\sqrt 2} = \\frac{0}{1.414} = 0",
        lambda: (
            "\\frac{3 - 3}{\\sqrt 2} = \\frac{0}{1.414} = "
            + fmt(ex2.attention_scores(*toy_qk())[0, 1] + 0.0, ".0f")
        ),
    ),
    Claim(L2, "0.51 & 0.29 & 0.55", lambda: " & ".join(f"{v:.2f}" for v in lifted())),
    Claim(
        L2, "0.459 & 0.512", lambda: " & ".join(f"{v:.3f}" for v in ex2.linear(lifted(), W_down))
    ),
    Claim(L2, "[0.459, 0.512]", lambda: vec(ex2.linear(cat, ex2.compose(W_up, W_down)))),
    # a token need not match itself best (Cauchy-Schwarz)
    Claim(L2, "x \\cdot x = 1$ but $x \\cdot y = 2 > 1", cauchy_schwarz_example),
    # the worked example: a score of 0 is not "ignore"; only differences matter
    Claim(
        L2,
        "\\operatorname{softmax}([-12.73,\\ 0]) \\approx [0.000003,\\ 0.999997]",
        lambda: "\\operatorname{{softmax}}([{:.2f},\\ {:.0f}]) \\approx [{:.6f},\\ {:.6f}]".format(
            *(ex2.attention_scores(*toy_qk())[0] + 0.0), *toy_weights()[0]
        ),
    ),
    Claim(
        L2,
        "\\operatorname{softmax}([0,\\ 1.41]) \\approx [0.196,\\ 0.804]",
        lambda: "\\operatorname{{softmax}}([{:.0f},\\ {:.2f}]) \\approx [{:.3f},\\ {:.3f}]".format(
            *(ex2.attention_scores(*toy_qk())[1] + 0.0), *toy_weights()[1]
        ),
    ),
    Claim(
        L2,
        "Token 1 puts 0.999997 of its attention on token 2",
        lambda: f"Token 1 puts {toy_weights()[0, 1]:.6f} of its attention on token 2",
    ),
    Claim(L2, "v_1 = x_1 W_V = [1, 2]", lambda: "v_1 = x_1 W_V = " + vec(toy_qkv()[2][0], ".0f")),
    Claim(L2, "v_2 = x_2 W_V = [2, 1]", lambda: "v_2 = x_2 W_V = " + vec(toy_qkv()[2][1], ".0f")),
    Claim(
        L2,
        "o_1 = 0.000003\\, v_1 + 0.999997\\, v_2 \\approx [2.000, 1.000]",
        lambda: (
            "o_1 = {:.6f}\\, v_1 + {:.6f}\\, v_2 \\approx ".format(*toy_weights()[0])
            + vec(toy_outputs()[0])
        ),
    ),
    Claim(
        L2,
        "o_2 = 0.196\\, v_1 + 0.804\\, v_2 \\approx [1.804, 1.196]",
        lambda: (
            "o_2 = {:.3f}\\, v_1 + {:.3f}\\, v_2 \\approx ".format(*toy_weights()[1])
            + vec(toy_outputs()[1])
        ),
    ),
    # GPT-2's tanh GELU against the exact one
    Claim(
        L2,
        "within 0.0005 of the exact curve",
        lambda: "within {} of the exact curve".format(
            "0.0005" if 0.0004 < gelu_tanh_gap() < 0.0005 else f"{gelu_tanh_gap():.2g}"
        ),
    ),
    Claim(L2, "[0.28, -0.18, -0.11]", lambda: vec(null_direction(), ".2f")),
    Claim(L2, "0.841", lambda: fmt(ex2.gelu(np.array(1.0)), ".3f")),
    Claim(L2, "-0.159", lambda: fmt(ex2.gelu(np.array(-1.0)), ".3f")),
    Claim(L2, "589,824", lambda: f"{gpt2_weights()['q_proj']:,}"),
    Claim(L2, "2,359,296", lambda: f"{gpt2_weights()['ffn_up']:,}"),
    Claim(L2, "7,077,888", lambda: f"{gpt2_layer():,}"),
    Claim(L2, "84,934,656", lambda: f"{12 * gpt2_layer():,}"),
    Claim(L2, "38,597,376", lambda: f"{gpt2_weights()['embed']:,}"),
    Claim(L2, "123,532,032", lambda: f"{12 * gpt2_layer() + gpt2_weights()['embed']:,}"),
    Claim(L2, "4,096", lambda: f"{16 * 256:,}"),  # 16 query heads of width 256
    Claim(L2, "8,192", lambda: f"{2 * 16 * 256:,}"),  # queries plus the gate
    # lesson 3
    Claim(L3, "[0.659, 0.242, 0.099]", lambda: vec(ex3.softmax(z3))),
    Claim(L3, "88.72", lambda: fmt(np.log(np.finfo(np.float32).max), ".2f")),
    Claim(L3, "88.7", lambda: fmt(np.log(float(torch.finfo(torch.bfloat16).max)), ".1f")),
    Claim(
        L3,
        "3.4 \\times 10^{38}",
        lambda: fmt(np.finfo(np.float32).max / 1e38, ".1f") + " \\times 10^{38}",
    ),
    Claim(
        L3,
        "3.39 \\times 10^{38}",
        lambda: fmt(torch.finfo(torch.bfloat16).max / 1e38, ".2f") + " \\times 10^{38}",
    ),
    Claim(L3, "65,504", lambda: f"{float(np.finfo(np.float16).max):,.0f}"),
    Claim(L3, "11.09", lambda: fmt(np.log(float(np.finfo(np.float16).max)), ".2f")),
    Claim(L3, "[0.269, 0.731]", lambda: vec(ex3.softmax(np.array([1000.0, 1001.0])))),
    Claim(L3, "0.982", lambda: fmt(ex3.softmax(z3, temperature=0.25)[0], ".3f")),
    Claim(
        L3,
        "0.4, 0.327 and 0.273",
        lambda: "{:.3g}, {:.3g} and {:.3g}".format(*ex3.softmax(z3, temperature=5.0)),
    ),
    Claim(L3, "200", lambda: fmt(z3[0] / 0.01, ".0f")),
    Claim(L3, "7.2 \\times 10^{86}", lambda: fmt(math.exp(200) / 1e86, ".1f") + " \\times 10^{86}"),
    Claim(L3, "0.847", lambda: fmt(entropy(ex3.softmax(z3)), ".3f")),
    Claim(L3, "1.099", lambda: fmt(entropy(ex3.softmax(np.zeros(3))), ".3f")),
    Claim(L3, "e^{-744.4}", lambda: "e^{" + fmt(np.log(np.nextafter(0.0, 1.0)), ".1f") + "}"),
    Claim(L3, "[-1000, 0]", lambda: vec(ex3.log_softmax(np.array([0.0, 1000.0])) + 0.0, ".0f")),
    Claim(L3, "[0.225, 0.184, 0.089]", lambda: vec(np.diag(ex3.softmax_jacobian(ex3.softmax(z3))))),
    Claim(L3, "0.99995", lambda: fmt(ex3.softmax(np.array([20.0, 10.0, 1.0]))[0], ".5f")),
    Claim(
        L3,
        "4.5 \\times 10^{-5}",
        lambda: (
            fmt(
                np.abs(ex3.softmax_jacobian(ex3.softmax(np.array([20.0, 10.0, 1.0])))).max() * 1e5,
                ".1f",
            )
            + " \\times 10^{-5}"
        ),
    ),
    Claim(L3, "1.135", lambda: fmt(running_sum([1.0, 3.0]), ".3f")),
    Claim(L3, "1.203", lambda: fmt(running_sum([1.0, 3.0, 2.0, 5.0]), ".3f")),
    Claim(L3, "$(5, 1.050)$", lambda: f"$(5, {running_sum([2.0, 5.0]):.3f})$"),
    Claim(
        L3,
        "l = 1.135\\, e^{-2} + 1.050 \\approx 1.203",
        lambda: "l = {:.3f}\\, e^{{-2}} + {:.3f} \\approx {:.3f}".format(
            *(running_sum(z) for z in ([1.0, 3.0], [2.0, 5.0], [1.0, 3.0, 2.0, 5.0]))
        ),
    ),
    Claim(L3, "[-0.341, 0.242, 0.099]", lambda: vec(cross_entropy_gradient(z3, 0))),
    # lesson 4
    Claim(
        L4,
        "\\sqrt{21.25} \\approx 4.610",
        lambda: (
            "\\sqrt{"
            + fmt((worked_S() ** 2).sum(), ".2f")
            + "} \\approx "
            + fmt(np.linalg.norm(worked_matrix()), ".3f")
        ),
    ),
    Claim(L4, "1.118", lambda: fmt(ex4.eckart_young_error(worked_matrix(), 2), ".3f")),
    Claim(L4, "75.3", lambda: fmt(energy_share(1), ".1f")),
    Claim(L4, "94.1", lambda: fmt(energy_share(2), ".1f")),
    Claim(L4, "needs $k = 2$", lambda: f"needs $k = {ex4.rank_for_energy(worked_S(), 0.9)}$"),
    Claim(
        L4,
        "(2/4)^2 = 0.25",
        lambda: "(2/4)^2 = " + fmt((worked_S()[1] / worked_S()[0]) ** 2, ".2f"),
    ),
    Claim(L4, "16,777,216", lambda: f"{lora_counts()[1]:,}"),
    Claim(
        L4,
        "\\sqrt{5.25} \\approx 2.291",
        lambda: (
            "\\sqrt{"
            + fmt((worked_S()[1:] ** 2).sum(), ".2f")
            + "} \\approx "
            + fmt(ex4.eckart_young_error(worked_matrix(), 1), ".3f")
        ),
    ),
    Claim(L4, "524,352", lambda: f"{svd_storage_4096():,}"),
    Claim(L4, "about 3.1 %", lambda: f"about {100 * svd_storage_4096() / 4096**2:.1f} %"),
    Claim(L4, "65,536", lambda: f"{lora_counts()[0]:,}"),
    Claim(L4, "0.39", lambda: fmt(100 * lora_counts()[0] / lora_counts()[1], ".2f")),
    Claim(
        L4,
        "the factor $\\alpha / r$ is 2",
        lambda: "the factor $\\alpha / r$ is " + fmt(lora_counts()[2], "g"),
    ),
    # LoRA's alpha / r against rsLoRA's alpha / sqrt(r): r independent rank-one terms add up to
    # about sqrt(r) times one term's size (test_evidence measures it with LoRALinear)
    Claim(
        L4,
        "about 0.71 times as large",
        lambda: f"about {(16 / 16 * math.sqrt(16)) / (16 / 8 * math.sqrt(8)):.2f} times as large",
    ),
    Claim(
        L4,
        "$16 / \\sqrt 8 \\approx 5.66$ to $16 / \\sqrt{16} = 4$",
        lambda: (
            f"$16 / \\sqrt 8 \\approx {16 / math.sqrt(8):.2f}$ to $16 / \\sqrt{{16}} = {16 / math.sqrt(16):g}$"
        ),
    ),
    # lesson 5
    Claim("05-attention.md", "67,712", lambda: f"{(128 * 23**2):,}"),
    Claim("05-attention.md", "65,504", lambda: f"{torch.finfo(torch.float16).max:,.0f}"),
    Claim(
        "05-attention.md",
        "768 = 12 \\times 64",
        lambda: f"768 = 12 \\times {ex5.split_heads(torch.zeros(1, 1, 768), 12).shape[-1]}",
    ),
    # lesson 5: lesson 2's tokens under each mask
    Claim(
        L5,
        "scaled scores $[-12.73, 0]$ and $[0, 1.41]$",
        lambda: "scaled scores $[{:.2f}, {:.0f}]$ and $[{:.0f}, {:.2f}]$".format(
            *(ex2.attention_scores(*toy_qk()).ravel() + 0.0)
        ),
    ),
    Claim(L5, "$o_1 \\approx [2.000, 1.000]$", lambda: f"$o_1 \\approx {vec(toy_attention()[0])}$"),
    Claim(L5, "$o_2 \\approx [1.804, 1.196]$", lambda: f"$o_2 \\approx {vec(toy_attention()[1])}$"),
    Claim(L5, "token 1 put 0.999997", lambda: f"token 1 put {toy_weights()[0, 1]:.6f}"),
    Claim(
        L5,
        "its row is $[1, 0]$: $o_1 = v_1 = [1, 2]$",
        lambda: (
            "its row is $[1, 0]$: $o_1 = v_1 = "
            + vec(toy_attention(is_causal=True)[0], ".0f")
            + "$"
        ),
    ),
    Claim(
        L5,
        "its row stays $[0.196, 0.804]$ and $o_2 \\approx [1.804, 1.196]$",
        lambda: (
            f"its row stays ${vec(toy_weights()[1])}$ and $o_2 \\approx "
            + vec(toy_attention(is_causal=True)[1])
            + "$"
        ),
    ),
    Claim(L5, "64 \\times 31^2 = 61,504", lambda: f"64 \\times 31^2 = {fp16_score(31.0):,}"),
    Claim(L5, "64 \\times 32^2 = 65,536", lambda: f"64 \\times 32^2 = {fp16_score(32.0):,}"),
    # lesson 6
    Claim(L6, "[-0.3, 0.8]", lambda: vec(ex6.rotation_matrix(math.pi / 2) @ cat + 0.0, ".1f")),
    Claim(L6, "0.854", lambda: fmt(np.linalg.norm(ex6.rotation_matrix(1.234) @ cat), ".3f")),
    Claim(
        L6,
        "about 6.3 positions for the first pair and about 47,000 for the last",
        lambda: "about {:.1f} positions for the first pair and about {:,.0f} for the last".format(
            *rope_wavelengths(64)
        ),
    ),
    Claim(L6, "0.000133", lambda: fmt(ex6.rope_angles(np.array([1]), 64)[0, -1], ".6f")),
    Claim(L6, "192", lambda: str(256 - 64)),
    Claim(
        L6,
        "\\sqrt{7.5} \\approx 2.739",
        lambda: (
            "\\sqrt{"
            + fmt(np.mean(x6**2), "g")
            + "} \\approx "
            + fmt(x6[0] / ex6.rms_norm(x6, np.ones(4))[0], ".3f")
        ),
    ),
    Claim(L6, "[0.365, 0.730, 1.095, 1.461]", lambda: vec(ex6.rms_norm(x6, np.ones(4)))),
    Claim(
        L6,
        "[-1.342, -0.447, 0.447, 1.342]",
        lambda: vec(ex6.layer_norm(x6, np.ones(4), np.zeros(4))),
    ),
    Claim(L6, "the mean is 2.5", lambda: "the mean is " + fmt(x6.mean(), "g")),
    Claim(L6, "the variance 1.25", lambda: "the variance " + fmt(x6.var(), "g")),
    Claim(
        L6, "\\cos 3 \\approx -0.990", lambda: "\\cos 3 \\approx " + fmt(rope_score(2, 5), ".3f")
    ),
    # lesson 2's tokens at positions 0 and 1
    Claim(
        L6,
        "both turn by one radian, to $[-0.301, 1.382]$",
        lambda: f"both turn by one radian, to ${vec(toy_rope()[0][1])}$",
    ),
    Claim(
        L6,
        "$-18$ and 2, since",
        lambda: "${:.0f}$ and {:.0f}, since".format(*np.diag(toy_rope_scores())),
    ),
    Claim(
        L6,
        "become $-5.05$ for query 1 against key 2 and $5.05$ for query 2",
        lambda: (
            f"become ${toy_rope_scores()[0, 1]:.2f}$ for query 1 against key 2 and ${toy_rope_scores()[1, 0]:.2f}$ for query 2"
        ),
    ),
    Claim(
        L6,
        "token 2's row of scores is $[3.57, 1.41]$",
        lambda: f"token 2's row of scores is ${vec(toy_rope_scores(scale=True)[1], '.2f')}$",
    ),
    Claim(
        L6,
        "lesson 2's 0.196 to 0.896",
        lambda: (
            f"lesson 2's {toy_weights()[1, 0]:.3f} to {ex3.softmax(toy_rope_scores(scale=True)[1])[0]:.3f}"
        ),
    ),
    # ... and after QK-norm
    Claim(
        L6,
        "from $[-12.73, 0]$ and $[0, 1.41]$ to $[-1.41, 0]$ and $[0, 1.41]$",
        lambda: "from ${}$ and ${}$ to ${}$ and ${}$".format(
            *(vec(r, ".2f").replace("0.00", "0") for r in ex2.attention_scores(*toy_qk()) + 0.0),
            *(vec(r, ".2f").replace("0.00", "0") for r in toy_qk_norm_scores()),
        ),
    ),
    Claim(
        L6,
        "token 1's near-certain 0.999997",
        lambda: f"token 1's near-certain {toy_weights()[0, 1]:.6f}",
    ),
    Claim(
        L6,
        "softens to 0.804: both tokens now spread their weight as $[0.196, 0.804]$",
        lambda: (
            f"softens to {ex3.softmax(toy_qk_norm_scores()[0])[1]:.3f}: both tokens now spread their weight as ${vec(ex3.softmax(toy_qk_norm_scores()[1]))}$"
            if np.allclose(*ex3.softmax(toy_qk_norm_scores(), axis=-1))
            else "the two rows differ"
        ),
    ),
    # lesson 7
    Claim(
        L7,
        "0.9^{50} \\approx 0.00515",
        lambda: "0.9^{50} \\approx " + fmt(rnn_gradient_norm(0.9), ".5f"),
    ),
    Claim(
        L7,
        "1.1^{50} \\approx 117.4",
        lambda: "1.1^{50} \\approx " + fmt(rnn_gradient_norm(1.1), ".1f"),
    ),
    Claim(
        L7,
        "spectral radius 0.87",
        lambda: f"spectral radius {ex7.spectral_radius(W_nonnormal):.2f}",
    ),
    Claim(
        L7,
        "its $\\sigma_\\text{max}$ is 12.6",
        lambda: f"its $\\sigma_\\text{{max}}$ is {np.linalg.norm(W_nonnormal, 2):.1f}",
    ),
    Claim(
        L7,
        "\\lVert W_{hh}^{50} \\rVert_2 \\approx 0.0011",
        lambda: (
            "\\lVert W_{hh}^{50} \\rVert_2 \\approx "
            + fmt(nonnormal_growth(np.zeros((50, 2))), ".2g")
        ),
    ),
    Claim(L7, "about $2.5 \\times 10^{-5}$", lambda: f"about ${sci(1 - np.tanh(6.0) ** 2)}$"),
    Claim(
        L7, "about $1.2 \\times 10^{25}$", lambda: f"about ${sci(nonnormal_growth(ALTERNATING))}$"
    ),
    # residual bounds (1 -/+ eps)^100, and the random-branch growth (1 + eps^2)^100
    Claim(
        L7,
        "they are 0.006 and 131.5, no pin",
        lambda: f"they are {0.95**100:.3f} and {1.05**100:.1f}, no pin",
    ),
    Claim(L7, "they are 0.366 and 2.70", lambda: f"they are {0.99**100:.3f} and {1.01**100:.2f}"),
    Claim(
        L7,
        "$(1 + \\varepsilon^2)^N$: 1.28 for",
        lambda: f"$(1 + \\varepsilon^2)^N$: {(1 + 0.05**2) ** 100:.2f} for",
    ),
    Claim(L7, "0.000977 apart", lambda: f"{np.spacing(np.float16(1.0)):.6f} apart"),
    Claim(L7, "two layers reach 254", lambda: f"two layers reach {window_reach(2)}"),
    Claim(L7, "three reach 381", lambda: f"three reach {window_reach(3)}"),
    Claim(
        L7,
        "0 \\\\ 0.196 & 0.804 \\end{bmatrix}$, with determinant 0.804",
        lambda: "0 \\\\ {:.3f} & {:.3f} \\end{{bmatrix}}$, with determinant {:.3f}".format(
            *causal_weights()[1], np.linalg.det(causal_weights().numpy())
        ),
    ),
    Claim(L7, "40,002", lambda: f"{ex7.condition_number(np.array([[1, 1], [1, 1.0001]])):,.0f}"),
    Claim(
        L7,
        "about 4.6",
        lambda: (
            "about " + fmt(np.log10(ex7.condition_number(np.array([[1, 1], [1, 1.0001]]))), ".1f")
        ),
    ),
    Claim(
        L7,
        "0.73 & 0.69 \\\\ 0.69 & 0.85",
        lambda: "{:.2f} & {:.2f} \\\\ {:.2f} & {:.2f}".format(
            *ex7.gram_matrix(np.stack([cat, dog])).ravel()
        ),
    ),
    Claim(
        L7,
        "0.1444 > 0",
        lambda: (
            fmt(np.linalg.det(ex7.gram_matrix(np.stack([cat, dog]))), ".4f")
            + (" > 0" if ex7.is_positive_definite(ex7.gram_matrix(np.stack([cat, dog]))) else "")
        ),
    ),
    Claim(
        L7,
        "0.1495, 0.2226, 0.3284",
        lambda: "{:.4f}, {:.4f}, {:.4f}".format(*(newton_schulz_value(k) for k in (1, 2, 3))),
    ),
    Claim(
        L7,
        "reaches 1.0 to four decimals after nine steps",
        lambda: "reaches {:.1f} to four decimals after {} steps".format(
            round(newton_schulz_value(9), 4),
            "nine"
            if round(newton_schulz_value(8), 4) < 1 <= round(newton_schulz_value(9), 4)
            else "?",
        ),
    ),
    Claim(L7, "122,944", lambda: f"{ex7.sliding_window_mask(1024, 128).sum():,}"),
    Claim(L7, "1,048,576", lambda: f"{ex7.sliding_window_mask(1024, 128).size:,}"),
    Claim(
        L7, "11.7", lambda: fmt(100 * ex7.mask_density(ex7.sliding_window_mask(1024, 128)), ".1f")
    ),
    Claim(
        L7, "50.05", lambda: fmt(100 * ex7.mask_density(ex7.sliding_window_mask(1024, 1024)), ".2f")
    ),
    # lesson 8: one head, L = S = 4096, d_h = 128, float16, on an H200
    Claim(L8, "1.05 MB each", lambda: f"{2 * 4096 * 128 / 1e6:.2f} MB each"),
    Claim(L8, "33.6 MB in float16", lambda: f"{megabytes(2 * 4096 * 4096)} in float16"),
    Claim(
        L8,
        "$4 d_h = 512$ times fewer",
        lambda: f"$4 d_h = {head_flops() // (4096 * 4096)}$ times fewer",
    ),
    # the exponentials on the special-function units (FlashAttention-3's point)
    Claim(
        L8,
        "about 254 times as long",
        lambda: "about {:.0f} times as long".format(
            exponentials()["DENSE_FLOP_PER_S"] / exponentials()["EXP_PER_S"]
        ),
    ),
    Claim(
        L8,
        "the 16.8 million exponentials take 4.3 µs, against 8.7 µs",
        lambda: "the {:.1f} million exponentials take {:.1f} µs, against {:.1f} µs".format(
            4096 * 4096 / 1e6, exponentials()["exp_us"], exponentials()["matmul_us"]
        ),
    ),
    Claim(
        L8,
        "0.50 of the matmul time",
        lambda: f"{exponentials()['exp_us'] / exponentials()['matmul_us']:.2f} of the matmul time",
    ),
    # lesson 2's tokens, one key at a time
    Claim(
        L8,
        "Row 1's scaled scores are $[-12.73, 0]$, row 2's are $[0, 1.41]$",
        lambda: (
            "Row 1's scaled scores are $[{:.2f}, {:.0f}]$, row 2's are $[{:.0f}, {:.2f}]$".format(
                *(one_key_at_a_time()["s"].ravel().tolist())
            )
        ),
    ),
    Claim(
        L8,
        "$m = -12.73$ for row 1",
        lambda: f"$m = {one_key_at_a_time()['s'][0, 0]:.2f}$ for row 1",
    ),
    Claim(
        L8,
        "$e^{-12.73 - 0} \\approx 0.000003$: $l = 1.000003$",
        lambda: "$e^{{{:.2f} - 0}} \\approx {:.6f}$: $l = {:.6f}$".format(
            one_key_at_a_time()["s"][0, 0],
            one_key_at_a_time()["alpha"][0],
            one_key_at_a_time()["l"][0],
        ),
    ),
    Claim(
        L8,
        "Row 2's new score 1.41",
        lambda: f"Row 2's new score {one_key_at_a_time()['s'][1, 1]:.2f}",
    ),
    Claim(
        L8,
        "$e^{0 - 1.41} = 0.243$ gives $l = 0.243 + 1 = 1.243$ and the accumulator $0.243\\, v_1",
        lambda: (
            "$e^{{0 - {:.2f}}} = {a:.3f}$ gives $l = {a:.3f} + 1 = {:.3f}$ and the accumulator ${a:.3f}\\, v_1".format(
                one_key_at_a_time()["s"][1, 1],
                one_key_at_a_time()["l"][1],
                a=one_key_at_a_time()["alpha"][1],
            )
        ),
    ),
    Claim(
        L8,
        "$o_1 \\approx [2.000, 1.000]$ and $o_2 \\approx [1.804, 1.196]$",
        lambda: "$o_1 \\approx {}$ and $o_2 \\approx {}$".format(
            vec(one_key_at_a_time()["out"][0]), vec(one_key_at_a_time()["out"][1])
        ),
    ),
    Claim(
        L8,
        "$0.243 / 1.243 = 0.196$",
        lambda: "${:.3f} / {:.3f} = {:.3f}$".format(
            one_key_at_a_time()["alpha"][1], one_key_at_a_time()["l"][1], toy_weights()[1, 0]
        ),
    ),
    Claim(
        L8,
        "$m + \\log l = 1.41 + \\log 1.243 = 1.632$",
        lambda: "$m + \\log l = {:.2f} + \\log {:.3f} = {:.3f}$".format(
            one_key_at_a_time()["s"][1, 1],
            one_key_at_a_time()["l"][1],
            one_key_at_a_time()["lse"][1],
        ),
    ),
    # the grid: query blocks times heads, for GPT-2 small's 12 heads
    Claim(L8, "32 × 12 = 384", lambda: f"{4096 // 128} × 12 = {(4096 // 128) * 12}"),
    Claim(
        L8,
        "moves 138.4 MB to do 8.59 GFLOP",
        lambda: f"moves {megabytes(traffic('plain'))} to do {head_flops() / 1e9:.2f} GFLOP",
    ),
    Claim(
        L8,
        "about 62 FLOPs for every byte",
        lambda: f"about {head_flops() / traffic('plain'):.0f} FLOPs for every byte",
    ),
    Claim(L8, "about 206 FLOPs per byte", lambda: f"about {ridge():.0f} FLOPs per byte"),
    Claim(
        L8,
        "Plain attention, at 62 FLOPs",
        lambda: f"Plain attention, at {head_flops() / traffic('plain'):.0f} FLOPs",
    ),
    Claim(
        L8,
        "Moving its 138.4 MB takes at least 28.8 µs",
        lambda: (
            f"Moving its {megabytes(traffic('plain'))} takes at least {memory_time('plain'):.1f} µs"
        ),
    ),
    Claim(L8, "would take 8.7 µs", lambda: f"would take {compute_time():.1f} µs"),
    Claim(
        L8,
        "by a factor of 3.3",
        lambda: f"by a factor of {memory_time('plain') / compute_time():.1f}",
    ),
    Claim(
        L8,
        "4.2 MB, an intensity of 2,048 FLOPs per byte",
        lambda: (
            f"{megabytes(traffic('once'))}, an intensity of {head_flops() / traffic('once'):,.0f} FLOPs per byte"
        ),
    ),
    Claim(
        L8,
        "Memory time falls to 0.87 µs and the 8.7 µs",
        lambda: (
            f"Memory time falls to {memory_time('once'):.2f} µs and the {compute_time():.1f} µs"
        ),
    ),
    Claim(
        L8,
        "moves 69.2 MB (intensity 124, at least 14.4 µs)",
        lambda: (
            f"moves {megabytes(traffic('reread'))} (intensity "
            f"{head_flops() / traffic('reread'):.0f}, at least {memory_time('reread'):.1f} µs)"
        ),
    ),
    Claim(
        L8,
        "the same 2.1 MB of $K$ and $V$",
        lambda: f"the same {megabytes(2 * 2 * 4096 * 128)} of $K$ and $V$",
    ),
    Claim(L8, "float16's 65,504", lambda: f"float16's {torch.finfo(torch.float16).max:,.0f}"),
    Claim(
        L8,
        "496 of the 1,024 tiles are skipped",
        lambda: "{skip} of the {total:,} tiles are skipped".format(
            total=sum(tile_counts(4096, 4096, 128).values()), **tile_counts(4096, 4096, 128)
        ),
    ),
    Claim(
        L8,
        "Keeping it would cost 33.6 MB",
        lambda: f"Keeping it would cost {megabytes(2 * 4096 * 4096)}",
    ),
    Claim(
        L8,
        "4,096 float32 numbers, 16,384 bytes",
        lambda: f"{4096:,} float32 numbers, {4 * 4096:,} bytes",
    ),
    Claim(
        L8,
        "from about 62 to about 63 FLOPs per byte",
        lambda: "from about {:.0f} to about {:.0f} FLOPs per byte".format(
            head_flops() / traffic("plain"),
            head_flops(L=8192, S=8192) / traffic("plain", L=8192, S=8192),
        ),
    ),
    Claim(L8, "ridge at about 206", lambda: f"ridge at about {ridge():.0f}"),
    Claim(
        L8,
        "16,384 bytes instead of 33.6 MB",
        lambda: f"{4 * 4096:,} bytes instead of {megabytes(2 * 4096 * 4096)}",
    ),
]

# Numbers a lesson states rather than computes: example inputs, model sizes, settings.
GIVEN = {
    L1: {
        "0.8",
        "0.3",
        "0.6",
        "0.7",
        "500",
        "499",
        "180",
        "50,257",
        "768",
        "4,096",
        "12,288",
        "7.5",  # the id halfway between 7 and 8, in a check-yourself question
        "2,000",  # random pairs per width in the evidence table (build_assets.random_cosines)
        "0.2",  # "far beyond chance" at d = 768: test_evidence checks it
        "2019",  # Ethayarajh (anisotropy of GPT-2's representations)
    },
    L2: {
        "0.044715",  # the tanh GELU's constant
        "100",  # added to token 1's scores in a check-yourself question (test_corrections)
        "0.8",
        "0.3",
        "0.6",
        "0.1",
        "0.25",
        "0.5",
        "0.4",
        "0.2",
        "768",
        "3072",
        "50,257",
        "1,024",
        "124",
        "2,048",
        "512",
        "256",
    },
    L3: {"2.0", "1.0", "0.1", "0.25", "0.5", "1000", "1001", "0.01", "500"},
    L4: {
        "0.5",
        "4096",
        "512",  # the width of the LoRA scale table's inputs (build_assets.LORA_WIDTH)
        "2023",  # Kalajdzievski (rsLoRA)
        "2022",  # Hu et al. (LoRA, ICLR)
        "1936",  # Eckart and Young
        "1960",  # Mirsky
    },  # k = 64 in the storage example has two digits: not a checked number
    "05-attention.md": {
        "100",
        "128",
        "768",  # 64 and 32 (two digits) are not checked
        "150",  # training steps of the notebook's copy model (its trained section)
        "2022",  # Olsson et al. (induction heads)
    },
    L6: {"0.8", "0.3", "10,000", "256"},
    L7: {
        "0.9",
        "1.1",
        "1.0",
        "0.1",
        "0.5",
        "1.5",
        "1.0001",
        "0.69",
        "0.73",
        "0.85",
        "100",
        "1024",
        "128",
        "2013",  # Pascanu, Mikolov and Bengio's year
        "2019",  # Radford et al. (GPT-2, its 1/sqrt(N) residual initialisation)
        "2.3",  # the GPT-2 report's section on the model
        "0.05",  # the residual branches' size in the worked bounds
        "0.01",
        "3.29",  # the non-normal W_hh's entries
        "11.7",
        "0.86",
    },
    L8: {
        "4096",  # L = S of the example head, and its 4,096 lse entries
        "4,096",
        "8,192",  # the doubled length of a check-yourself question
        "128",  # d_h, and the 128 x 128 tiles
        "4.8",  # H200: TB/s of HBM bandwidth (NVIDIA's data sheet)
        "990",  # H200: dense half-precision TFLOP/s (NVIDIA's data sheet)
        "3.9",  # Triton's version
        "2009",  # Williams, Waterman and Patterson (the roofline)
        "2018",  # Milakov and Gimelshein (online softmax)
        "2019",  # Tillet, Kung and Cox (Triton)
        "2022",  # Dao et al. (FlashAttention)
        "2023",  # Dao (FlashAttention-2)
        "2024",  # Shah et al. (FlashAttention-3)
        "132",  # SMs of an H100 SXM5 and of an H200 (NVIDIA's data sheets)
        "989",  # H100 SXM5 dense fp16 TFLOP/s, build_assets.PUBLISHED (test_evidence checks)
        "312",  # A100 dense fp16 TFLOP/s, the same
    },
}


def lesson_text(name: str) -> str:
    """A lesson's prose with every run of whitespace (line breaks included) made one space."""
    return " ".join(prose_of((DOCS / "lessons" / name).read_text(encoding="utf-8")).split())


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.lesson}:{c.text!r}")
def test_claim_matches_solutions(claim: Claim):
    assert claim.text in lesson_text(claim.lesson), (
        f"{claim.lesson} no longer says {claim.text!r}: update the claim or the lesson"
    )
    computed = claim.compute()
    if claim.wrong:
        assert computed != claim.text, (
            f"{claim.text!r} is quoted as a slip but is what the solutions give"
        )
    else:
        assert computed == claim.text, (
            f"{claim.lesson} says {claim.text!r}; the solutions give {computed!r}"
        )


@pytest.mark.parametrize("lesson", sorted(GIVEN))
def test_every_number_is_accounted_for(lesson: str):
    claimed = " ".join(c.text for c in CLAIMS if c.lesson == lesson)
    known = set(numbers_in_prose(claimed)) | GIVEN[lesson]
    text = (DOCS / "lessons" / lesson).read_text(encoding="utf-8")
    unchecked = sorted(set(numbers_in_prose(text)) - known)
    assert not unchecked, (
        f"{lesson} quotes numbers no test checks: {unchecked}; add a Claim "
        "computing each from the solutions (or list a stated input in GIVEN)"
    )


def test_every_lesson_is_covered():
    assert sorted(GIVEN) == sorted(p.name for p in (DOCS / "lessons").glob("*.md"))


def test_causal_mask_table_matches_causal_mask():
    """Lesson 5's table of the KV-cache mask (2 queries, 5 keys) is causal_mask(2, 5)."""
    text = (DOCS / "lessons" / "05-attention.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \(position \d+\) \|", line)]
    drawn = [[cell.strip() == "●" for cell in row.strip("|").split("|")[1:]] for row in rows]
    assert drawn == ex5.causal_mask(2, 5).tolist()
    assert "(position 3)" in rows[0] and "(position 4)" in rows[1]


def test_pytorch_is_causal_aligns_top_left():
    """The lesson's warning: with L < S, PyTorch's is_causal lets query 0 see key 0 only."""
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4), torch.randn(5, 4), torch.randn(5, 3)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(out[0], v[0], atol=1e-6)
    ours = ex5.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert not torch.allclose(ours[0], v[0], atol=1e-3)


def test_float16_score_overflows():
    """Lesson 5: 128 products of 23 × 23 exceed float16's range; the solution still copes."""
    q = torch.full((1, 128), 23.0, dtype=torch.float16)
    assert (q.float() @ q.float().T).item() == 67712.0
    assert torch.isinf(torch.tensor(67712.0).half())
    out = ex5.scaled_dot_product_attention(q, q, q)
    assert out.dtype == torch.float16 and torch.isfinite(out).all()


def test_bfloat16_does_not_overflow_at_12():
    """Lesson 3: e^12 overflows float16 but not bfloat16."""
    e12 = torch.tensor(12.0).exp()
    assert torch.isinf(e12.half())
    assert torch.isfinite(e12.bfloat16())


def test_lesson_8_tile_kinds_match_the_causal_mask():
    """Lesson 8's tile classification, checked entry by entry against lesson 5's causal_mask
    (bottom-right aligned): skipped tiles hide every entry, full tiles none, masked ones some."""
    tile_kinds = notebook_section("tiles")["tile_kinds"]
    for L, S, bm, bn in [(64, 64, 16, 16), (40, 64, 16, 16), (16, 64, 16, 16), (50, 70, 16, 32)]:
        mask = ex5.causal_mask(L, S)
        for a, row in enumerate(tile_kinds(L, S, bm, bn)):
            for b, kind in enumerate(row):
                tile = mask[a * bm : (a + 1) * bm, b * bn : (b + 1) * bn]
                seen = {"skip": not tile.any(), "full": bool(tile.all())}
                assert seen.get(kind, not (seen["skip"] or seen["full"])), (L, S, a, b, kind)


def test_lesson_8_figure_and_questions_tile_counts():
    """The tile counts the lesson's figure and check-yourself describe."""
    assert tile_counts(64, 64, 16) == {"skip": 6, "mask": 4, "full": 6}
    # L = 16 queries against S = 64 keys: all four key blocks visited, the last one masked
    assert notebook_section("tiles")["tile_kinds"](16, 64, 16, 16) == [["full"] * 3 + ["mask"]]
    # with 40 queries, each query block meets two masked tiles but the last, and one is skipped
    kinds = notebook_section("tiles")["tile_kinds"](40, 64, 16, 16)
    assert [row.count("mask") for row in kinds] == [2, 2, 1]
    assert tile_counts(40, 64, 16)["skip"] == 1


def test_lesson_8_block_intensity_is_block_m():
    """A block of block_m queries does block_m FLOPs per byte of K and V it reads (float16),
    which puts 64 and 128 below the H200's ridge."""
    for block_m in (64, 128):
        kv_bytes = 2 * 4096 * (128 + 128)
        assert head_flops(L=block_m) / kv_bytes == block_m < ridge()
    assert head_flops() / traffic("once") > ridge() > head_flops() / traffic("reread")
