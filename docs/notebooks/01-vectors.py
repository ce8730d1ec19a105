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
# # Lesson 1 companion: vectors, embeddings and the dot product
#
# This notebook recomputes the numbers of lesson 1 and draws its figures. It imports the
# course's reference solutions when they are present, and your own `exercises/` otherwise:
# once your code passes `course check 1`, it should print the same numbers.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex01_vectors as ex
except ImportError:
    from exercises import ex01_vectors as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-01",
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
# ## From ids to vectors
# A one-hot row times the embedding table is the same as picking a row of the table.

# %%
# --8<-- [start:lookup]
rng = np.random.default_rng(0)
V, d_model = 10, 4
W_E = rng.normal(size=(V, d_model))  # (V, d_model): one row per token id
ids = np.array([[3, 1, 4], [1, 5, 9]])  # (B, n) = (2, 3)

by_matmul = ex.one_hot(ids, V) @ W_E  # (2, 3, V) @ (V, d_model)
by_lookup = ex.embedding_lookup(ids, W_E)  # (2, 3, d_model), no one-hot built
assert by_lookup.shape == (2, 3, d_model)
assert np.allclose(by_matmul, by_lookup)
# --8<-- [end:lookup]

# %% [markdown]
# ## cat and dog

# %%
# --8<-- [start:cat_dog]
cat = np.array([0.8, 0.3])
dog = np.array([0.6, 0.7])

print(f"cat . dog = {ex.dot(cat, dog):.2f}")  # 0.69
print(f"|cat| = {np.linalg.norm(cat):.3f}, |dog| = {np.linalg.norm(dog):.3f}")
print(f"cos   = {ex.cosine_similarity(cat, dog):.3f}")  # 0.876
print(f"angle = {ex.angle_between(cat, dog):.2f} degrees")  # 28.84
# --8<-- [end:cat_dog]

# %%
fig, ax = plt.subplots(figsize=(4.2, 3.4))
for vec, name, colour in [(cat, "cat", "tab:blue"), (dog, "dog", "tab:orange")]:
    ax.annotate(
        "", xy=vec, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2.2}
    )
    ax.text(*(vec * 1.06), f"{name} {vec.tolist()}", color=colour, fontsize=10)
theta = np.linspace(np.arctan2(cat[1], cat[0]), np.arctan2(dog[1], dog[0]), 30)
ax.plot(0.35 * np.cos(theta), 0.35 * np.sin(theta), color="grey", lw=1)
ax.text(0.37, 0.27, f"θ = {ex.angle_between(cat, dog):.1f}°", color="grey")
ax.set(
    xlim=(0, 1.15),
    ylim=(0, 0.9),
    aspect="equal",
    xlabel="dimension 1",
    ylabel="dimension 2",
    title="Two embeddings as arrows",
)
show(fig, "01-arrows")

# %% [markdown]
# ## The score grid, before and after normalising

# %%
# --8<-- [start:grids]
X = np.stack([cat, dog])  # (2, 2): one token per row
raw = ex.pairwise_dot(X, X)  # [[0.73, 0.69], [0.69, 0.85]]
unit = ex.normalize_rows(X)  # rows [0.936, 0.351] and [0.651, 0.759]
normalised = ex.pairwise_dot(unit, unit)
print(np.round(raw, 3), np.round(unit, 3), np.round(normalised, 3), sep="\n")
# --8<-- [end:grids]

# %%
fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.9), constrained_layout=True)
for ax, grid, title in [(axes[0], raw, "raw dot products"), (axes[1], normalised, "unit vectors")]:
    im = ax.imshow(grid, cmap="Reds", vmin=0.5, vmax=1.0)
    for (i, j), value in np.ndenumerate(grid):
        dark = value > 0.8  # the upper part of the colour scale: white text reads there
        colour = "white" if dark else "black"
        ax.text(j, i, f"{value:#.3g}", ha="center", va="center", fontsize=12, color=colour)
    ax.set(
        xticks=[0, 1],
        yticks=[0, 1],
        xticklabels=["cat", "dog"],
        yticklabels=["cat", "dog"],
        title=title,
    )
    ax.tick_params(length=0)
fig.colorbar(im, ax=axes, shrink=0.8, label="score")
show(fig, "01-score-grids")
