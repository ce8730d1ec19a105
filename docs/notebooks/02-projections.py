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
# # Lesson 2 companion: projections, shapes and the matmuls of a transformer
#
# Recomputes lesson 2's toy example, the up-and-down projection and GPT-2 small's matmul
# catalogue. Uses the reference solutions when present, your own `exercises/` otherwise.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex02_projections as ex
    from solutions import ex03_softmax as ex3
except ImportError:
    from exercises import ex02_projections as ex
    from exercises import ex03_softmax as ex3

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-02",
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
# ## The toy example
# Two tokens of width 4 projected to queries and keys of width 2 (row vectors, `x @ W`).

# %%
# --8<-- [start:toy]
X = np.array(
    [
        [1.0, 0.0, 2.0, -1.0],  # x1
        [0.0, 1.0, 1.0, 1.0],
    ]
)  # x2: X is (n, d_model) = (2, 4)
W_Q = np.array([[1, 0], [0, 1], [1, -1], [0, 1]], dtype=float)  # (d_model, d_k)
W_K = np.array([[0, 1], [1, 0], [-1, 1], [1, 0]], dtype=float)
W_V = np.array([[1, 0], [2, 0], [0, 1], [0, 0]], dtype=float)  # (d_model, d_v)

Q, K, V = ex.project_qkv(X, W_Q, W_K, W_V)
print("q1 =", Q[0], " k2 =", K[1])  # [3, -3] and [1, 1]
print("v1 =", V[0], " v2 =", V[1])  # [1, 2] and [2, 1]
scores = ex.attention_scores(Q, K)  # Q K^T / sqrt(d_k), shape (2, 2)
print(np.round(scores, 2))  # [[-12.73, 0], [0, 1.41]]
weights = ex3.softmax(scores, axis=-1)  # each row sums to 1
print(np.round(weights, 6))  # [[0.000003, 0.999997], [0.19557, 0.80443]]
print(np.round(weights @ V, 3))  # [[2, 1], [1.804, 1.196]]
# --8<-- [end:toy]

# %% [markdown]
# ## Up, then down
# Row vectors times matrices, `v @ W`, as the lesson writes them and `linear` computes them.

# %%
# --8<-- [start:updown]
cat = np.array([0.8, 0.3])
W_up = np.array([[0.6, 0.25, 0.5], [0.1, 0.3, 0.5]])  # (2, 3): 2 -> 3
W_down = np.array([[0.4, 0.3], [0.5, 0.1], [0.2, 0.6]])  # (3, 2): 3 -> 2

lifted = ex.linear(cat, W_up)  # [0.51, 0.29, 0.55]
back = ex.linear(lifted, W_down)  # [0.459, 0.512]
null = np.cross(W_down[:, 0], W_down[:, 1])  # [0.28, -0.18, -0.11]
print(lifted, back, null, ex.linear(null, W_down))  # null is sent to [0, 0]
assert np.allclose(ex.compose(W_up, W_down), W_up @ W_down)  # one 2 x 2 map
# --8<-- [end:updown]

# %%
fig = plt.figure(figsize=(9.6, 3.4))
ax1 = fig.add_subplot(1, 3, 1)
ax1.annotate(
    "", xy=cat, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "tab:blue", "lw": 2}
)
ax1.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title="cat in 2-D")
ax1.text(*(cat + 0.03), "[0.8, 0.3]", color="tab:blue")

ax2 = fig.add_subplot(1, 3, 2, projection="3d")
ax2.quiver(0, 0, 0, *lifted, color="tab:orange", lw=2, arrow_length_ratio=0.15)
ax2.plot([0, lifted[0]], [0, lifted[1]], [0, 0], color="grey", ls="--", lw=1)  # its shadow
ax2.plot([lifted[0]] * 2, [lifted[1]] * 2, [0, lifted[2]], color="grey", ls=":", lw=1)
# Three ticks an axis: with five, the labels of neighbouring axes ran into each other.
ticks = [0, 0.4, 0.8]
ax2.set(
    xlim=(0, 0.8),
    ylim=(0, 0.8),
    zlim=(0, 0.8),
    xticks=ticks,
    yticks=ticks[1:],  # y's 0 sat on x's 0.8, at the shared corner
    zticks=ticks,
    title="projected up: 3-D",
    xlabel="x",
    ylabel="y",
    zlabel="z",
)
ax2.tick_params(pad=0)
# The label sits in the panel's corner, clear of the panes' grid lines it crossed before.
ax2.text2D(0.02, 0.9, "[0.51, 0.29, 0.55]", color="tab:orange", transform=ax2.transAxes)

ax3 = fig.add_subplot(1, 3, 3)
ax3.annotate(
    "",
    xy=cat,
    xytext=(0, 0),
    arrowprops={"arrowstyle": "-|>", "color": "tab:blue", "lw": 1.2, "alpha": 0.4},
)
ax3.annotate(
    "", xy=back, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "tab:green", "lw": 2}
)
ax3.text(*(back + 0.03), "[0.459, 0.512]", color="tab:green")
ax3.text(*(cat + 0.03), "cat", color="tab:blue", alpha=0.6)
ax3.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title="projected down: 2-D again")
fig.subplots_adjust(wspace=0.55)
show(fig, "02-up-down")

# %% [markdown]
# ## GPT-2 small, one layer, 1,024 tokens

# %%
matmuls = ex.transformer_matmuls(d_model=768, n_heads=12, d_ff=3072, vocab_size=50257, seq_len=1024)
for m in matmuls:
    print(
        f"{m.name:10s} {m.a_shape!s:18s} x {m.b_shape!s:18s} -> "
        f"{m.out_shape!s:18s} {m.flops / 1e9:8.2f} GFLOP"
    )

# %%
weights = {
    m.name: m.b_shape[0] * m.b_shape[1] for m in matmuls if m.name not in ("scores", "aggregate")
}
per_layer = sum(
    weights[k] for k in ("q_proj", "k_proj", "v_proj", "out_proj", "ffn_up", "ffn_down")
)
print(
    f"one layer: {per_layer:,}; twelve: {12 * per_layer:,}; "
    f"with the tied embedding: {12 * per_layer + weights['embed']:,}"
)
