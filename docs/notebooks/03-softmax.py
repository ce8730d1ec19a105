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
# # Lesson 3 companion: softmax
#
# Overflow, the max-subtraction trick, temperature, log-softmax, the Jacobian and online
# softmax, with the reference solutions when present (your `exercises/` otherwise).

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex03_softmax as ex
except ImportError:
    from exercises import ex03_softmax as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-03",
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


# %%
z = np.array([2.0, 1.0, 0.1])
print(np.round(ex.softmax(z), 3))  # [0.659, 0.242, 0.099]
print("float32 overflows past", np.log(np.finfo(np.float32).max))  # 88.72
print("float16 overflows past", np.log(float(np.finfo(np.float16).max)))  # 11.09

# %% [markdown]
# ## Overflow and the shift

# %%
# --8<-- [start:overflow]
big = np.array([1000.0, 1001.0])
with np.errstate(over="ignore", invalid="ignore"):
    naive = np.exp(big) / np.exp(big).sum()  # inf / inf
print(naive)  # [nan, nan]
print(ex.softmax(big))  # [0.269, 0.731], same as softmax([0, 1])
# float16 in, float16 out, and no inf on the way:
print(ex.softmax(np.array([12.0, 0.0], dtype=np.float16)))
# --8<-- [end:overflow]

# %% [markdown]
# ## Temperature and entropy

# %%
temperatures = [0.25, 0.5, 1.0, 2.0, 5.0]
fig, axes = plt.subplots(
    1, len(temperatures), figsize=(8, 2.4), sharey=True, constrained_layout=True
)
for ax, T in zip(axes, temperatures):
    p = ex.softmax(z, temperature=T)
    ax.bar(["2.0", "1.0", "0.1"], p, color=["tab:red", "tab:orange", "tab:grey"])
    for i, value in enumerate(p):
        ax.text(i, value + 0.02, f"{value:.3f}", ha="center", fontsize=9)
    ax.set(title=f"T = {T:g}", ylim=(0, 1.1), xlabel="logit")
axes[0].set_ylabel("probability")
show(fig, "03-temperatures")

# %%
Ts = np.logspace(-1.5, 1.5, 200)
entropy = [
    -(p * np.log(np.where(p > 0, p, 1.0))).sum() for p in (ex.softmax(z, temperature=T) for T in Ts)
]
fig, ax = plt.subplots(figsize=(4.6, 3.0))
ax.semilogx(Ts, entropy, color="tab:purple", lw=2)
ax.axhline(np.log(3), color="grey", ls="--", lw=1)
ax.text(Ts[0], np.log(3) + 0.03, "ln 3 (uniform)", color="grey")
ax.set(
    xlabel="temperature T",
    ylabel="entropy (nats)",
    ylim=(0, 1.25),
    title="Entropy of softmax(z / T)",
)
show(fig, "03-entropy")

# %% [markdown]
# ## Log-softmax, the Jacobian

# %%
with np.errstate(divide="ignore"):
    print(np.log(ex.softmax(np.array([0.0, 1000.0]))))  # [-inf, 0]: the first entry is lost
print(ex.log_softmax(np.array([0.0, 1000.0])))  # [-1000, 0]

p = ex.softmax(z)
J = ex.softmax_jacobian(p)
print(np.round(np.diag(J), 3), J.sum(axis=1))  # [0.225, 0.184, 0.089]; rows sum to 0
p_peaked = ex.softmax(np.array([20.0, 10.0, 1.0]))
print(p_peaked[0], np.abs(ex.softmax_jacobian(p_peaked)).max())  # 0.99995, 4.5e-05

# %% [markdown]
# Why divide by the square root of d_k: the dot product of two random unit-variance vectors
# has variance d_k.

# %%
rng = np.random.default_rng(0)
d_k = 64
q, k = rng.normal(size=(2, 100_000, d_k))
dots = (q * k).sum(axis=1)
print(
    f"std of q.k: {dots.std():.2f}; after dividing by sqrt(d_k): {(dots / np.sqrt(d_k)).std():.2f}"
)

# %% [markdown]
# ## Online softmax

# %%
# --8<-- [start:online]
z = np.array([1.0, 3.0, 2.0, 5.0])
assert np.allclose(ex.online_softmax(z, block_size=2), ex.softmax(z))

gen = np.random.default_rng(0)
q = gen.normal(size=8)  # one query, d = 8
K = gen.normal(size=(100, 8))  # n = 100 keys
V = gen.normal(size=(100, 3))  # values, d_v = 3
reference = ex.softmax(K @ q / np.sqrt(8)) @ V
assert np.allclose(ex.online_attention(q, K, V, block_size=16), reference)
# --8<-- [end:online]
