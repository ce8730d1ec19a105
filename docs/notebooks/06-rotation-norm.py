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
# # Lesson 6 companion: rotation, RoPE and normalisation
#
# A vector traced around the circle, RoPE's relative-position property, half-split versus
# interleaved pairs, and the two normalisations. Uses the reference solutions when present,
# your own `exercises/` otherwise.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex06_rotation_norm as ex
except ImportError:
    from exercises import ex06_rotation_norm as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-06",
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
# ## Around the circle

# %%
cat = np.array([0.8, 0.3])
print(ex.rotation_matrix(np.pi / 2) @ cat)  # a quarter turn: [-0.3, 0.8]

angles = np.radians(np.arange(0, 360, 15))
tips = np.array([ex.rotation_matrix(a) @ cat for a in angles])  # (24, 2), column form
lengths = np.linalg.norm(tips, axis=1)
assert np.allclose(lengths, np.linalg.norm(cat))  # 0.854 every time

fig, ax = plt.subplots(figsize=(4.0, 4.0))
colours = plt.cm.viridis(np.linspace(0, 0.9, len(tips)))
for tip, colour in zip(tips, colours):
    ax.annotate(
        "", xy=tip, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1}
    )
ax.annotate(
    "", xy=cat, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.2}
)
ax.text(*(cat * 1.08), "cat", fontweight="bold")
ax.add_patch(plt.Circle((0, 0), np.linalg.norm(cat), fill=False, ls="--", color="grey"))
ax.set(
    xlim=(-1, 1),
    ylim=(-1, 1),
    aspect="equal",
    title=f"cat rotated every 15°: length {lengths[0]:.3f} throughout",
)
show(fig, "06-circle")

# %% [markdown]
# ## RoPE only sees relative positions

# %%
# --8<-- [start:rope]
rng = np.random.default_rng(0)
d = 64
q, k = rng.normal(size=(2, d))
positions = np.arange(32)

# One query and one key, placed at every position: rows of (n, d).
Q = ex.apply_rope(np.tile(q, (32, 1)), positions)
K = ex.apply_rope(np.tile(k, (32, 1)), positions)
scores = Q @ K.T  # scores[m, n] for query at m, key at n

# Constant along every diagonal: the score depends only on n - m.
for offset in range(-31, 32):
    diagonal = np.diagonal(scores, offset)
    assert np.allclose(diagonal, diagonal[0])
# --8<-- [end:rope]

# %%
fig, ax = plt.subplots(figsize=(4.4, 3.8))
limit = np.abs(scores).max()
im = ax.imshow(scores, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set(xlabel="key position n", ylabel="query position m", title="⟨RoPE(q, m), RoPE(k, n)⟩")
fig.colorbar(im, ax=ax, shrink=0.8)
show(fig, "06-rope-relative")

# %%
theta = ex.rope_angles(np.array([1]), 64)[0]  # angles at position 1 = the frequencies
print(theta[0], theta[-1])  # 1.0 and about 0.000133

# %% [markdown]
# ## Wavelengths and the decay with distance
# Pair i repeats every 2 pi / theta_i positions. Identical all-ones queries and keys score
# high at offset 0 and, on average, less and less as the offset grows.

# %%
wavelengths = 2 * np.pi / theta  # positions per full turn, pair by pair
offsets = np.arange(0, 1001)
ones = np.ones((1, 64))
q0 = ex.apply_rope(ones, np.array([0]))
far = ex.apply_rope(np.tile(ones, (len(offsets), 1)), offsets)
decay = (far @ q0.T)[:, 0] / 64  # score at each offset, 1 at offset 0

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.2, 2.9), constrained_layout=True)
ax1.semilogy(np.arange(32), wavelengths, "o", ms=4)
ax1.set(xlabel="pair i", ylabel="wavelength (positions)", title="One turn of each pair")
ax2.plot(offsets, decay, lw=1.2)
ax2.axhline(0, color="grey", lw=0.8)
ax2.set(xlabel="offset n - m", ylabel="score / d", title="All-ones q and k, d = 64")
show(fig, "06-rope-wavelengths")

# %% [markdown]
# Half-split and interleaved layouts differ by a permutation of the coordinates:
# moving dimension 2i to i and 2i + 1 to i + d/2 turns one into the other.

# %%
x = rng.normal(size=(5, d))
perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # interleaved -> half-split
inverse = np.argsort(perm)
interleaved = ex.apply_rope(x[:, perm], positions[:5])[:, inverse]  # RoPE on interleaved pairs
assert not np.allclose(interleaved, ex.apply_rope(x, positions[:5]))  # different layouts differ

# %% [markdown]
# ## RMSNorm and LayerNorm

# %%
x = np.array([1.0, 2.0, 3.0, 4.0])
print(np.round(ex.rms_norm(x, np.ones(4)), 3))  # [0.365 0.73 1.095 1.461]
print(np.round(ex.layer_norm(x, np.ones(4), np.zeros(4)), 3))  # [-1.342 -0.447 0.447 1.342]

q = rng.normal(size=(2, 4, 10, 256)) * 30  # (B, h, n, d_h), large queries and keys
k = rng.normal(size=(2, 4, 10, 256)) * 30
qn, kn = ex.qk_norm(q, k, np.ones(256), np.ones(256))
print(np.abs(qn @ np.swapaxes(kn, -1, -2) / 16).max())  # at most sqrt(256) = 16

# %% [markdown]
# ## Lesson 2's two tokens: RoPE at positions 0 and 1, then QK-norm
#
# The queries and keys of lesson 2's two tokens (d_h = 2: one pair, which turns by one
# radian per position), rotated to positions 0 and 1, and then, separately, normalised.

# %%
# --8<-- [start:spine]
Q2 = np.array([[3.0, -3.0], [1.0, 1.0]])  # lesson 2's queries, one per row
K2 = np.array([[-3.0, 3.0], [1.0, 1.0]])  # ... and keys
at = np.array([0, 1])  # token 1 at position 0, token 2 at position 1
Qr, Kr = ex.apply_rope(Q2, at), ex.apply_rope(K2, at)
print(Qr.round(3))  # token 1 stays put; token 2 turns by 1 radian
print((Qr @ Kr.T).round(2))  # the diagonal keeps -18 and 2, the rest moves
assert np.allclose(np.diag(Qr @ Kr.T), np.diag(Q2 @ K2.T))

qn, kn = ex.qk_norm(Q2[None], K2[None], np.ones(2), np.ones(2))  # 1 head
print(qn[0].round(3), kn[0].round(3))  # every row at RMS 1, length √2
print((qn[0] @ kn[0].T / np.sqrt(2)).round(3))  # scores within ±√2
# --8<-- [end:spine]
