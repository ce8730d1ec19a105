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
# # Lesson 7 companion: matrix properties that keep deep networks sane
#
# Gradient norms through an RNN, a badly conditioned matrix, Gram matrices and Cholesky,
# Newton-Schulz orthogonalisation and sliding-window masks. Uses the reference solutions when
# present, your own `exercises/` otherwise.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex07_matrix_properties as ex
except ImportError:
    from exercises import ex07_matrix_properties as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-07",
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
# ## Gradient norm against distance
# W_hh = lambda x (an orthogonal matrix) with pre-activations at 0, where tanh' = 1: the norm of
# dh_T/dh_0 is then exactly lambda ** T.

# %%
# --8<-- [start:bptt]
rng = np.random.default_rng(0)
d, T_max = 16, 60
Q, _ = np.linalg.qr(rng.normal(size=(d, d)))  # orthogonal: every |λ| is 1
distances = np.arange(1, T_max + 1)
norms = {}
for lam in (0.9, 1.0, 1.1):
    W_hh = lam * Q
    assert np.isclose(ex.spectral_radius(W_hh), lam)
    jacobians = [ex.bptt_jacobian(W_hh, np.zeros((T, d))) for T in distances]
    norms[lam] = [np.linalg.norm(J, 2) for J in jacobians]
print(norms[0.9][49], norms[1.1][49])  # 0.9**50 = 0.00515, 1.1**50 = 117.4
# --8<-- [end:bptt]

# %% [markdown]
# ## Spectral radius below 1, gradient exploding all the same
# A non-normal W_hh: its eigenvalues are small but its largest singular value is not. When the
# two units take turns saturating, the product of Jacobians grows instead of shrinking.

# %%
# --8<-- [start:nonnormal]
W_hh = np.array([[3.29, 11.7], [-0.86, -3.29]])
sigma_max = np.linalg.norm(W_hh, 2)
print(ex.spectral_radius(W_hh), sigma_max)  # 0.87 and 12.6
# every tanh factor is 1: W_hh ** 50
linear = ex.bptt_jacobian(W_hh, np.zeros((50, 2)))
# unit 2 saturates, then 1
alternating = np.tile([[0.0, 6.0], [6.0, 0.0]], (25, 1))
exploded = ex.bptt_jacobian(W_hh, alternating)
# 0.0011 and 1.2e25
print(np.linalg.norm(linear, 2), np.linalg.norm(exploded, 2))
assert np.linalg.norm(exploded, 2) <= sigma_max**50  # the bound holds, loosely
# --8<-- [end:nonnormal]

# %%
# The same W_hh against the distance T, for both patterns of pre-activations: the linear
# product of powers falls, the alternating one grows, and sigma_max^T bounds both.
T_range = np.arange(1, 51)
patterns = {
    "tanh factors all 1 (powers of W_hh)": np.zeros((50, 2)),
    "units take turns saturating": alternating,
}
fig, ax = plt.subplots(figsize=(5.6, 3.3))
for (label, pre), colour in zip(patterns.items(), ["tab:blue", "tab:red"]):
    curve = [np.linalg.norm(ex.bptt_jacobian(W_hh, pre[:T]), 2) for T in T_range]
    ax.semilogy(T_range, curve, lw=2, color=colour, label=label)
ax.semilogy(T_range, sigma_max**T_range, ":", color="black", lw=1.2, label=r"$\sigma_\max^T$, the bound")
ax.semilogy(
    T_range, ex.spectral_radius(W_hh) ** T_range, "--", color="grey", lw=1.2, label=r"$\rho^T$"
)
ax.set(
    xlabel="distance T (steps)",
    ylabel=r"$\|\partial h_T / \partial h_0\|_2$",
    title=f"Non-normal W_hh: ρ = {ex.spectral_radius(W_hh):.2f}, σ_max = {sigma_max:.1f}",
)
ax.legend(fontsize=8, frameon=False, loc="upper left")
show(fig, "07-nonnormal-gradient")

# %%
fig, ax = plt.subplots(figsize=(5.2, 3.2))
for (lam, values), colour in zip(norms.items(), ["tab:blue", "tab:grey", "tab:red"]):
    ax.semilogy(distances, values, lw=2, color=colour, label=f"λ = {lam:g}")
ax.set(
    xlabel="distance T (steps)",
    ylabel=r"$\|\partial h_T / \partial h_0\|_2$",
    title="Gradient norm through an RNN",
)
ax.legend()
show(fig, "07-gradient-norm")

# %% [markdown]
# ## Condition number, Gram matrices, Cholesky

# %%
A = np.array([[1.0, 1.0], [1.0, 1.0001]])
print(ex.condition_number(A))  # about 40002
print(ex.condition_number(np.array([[1.0, 2.0], [2.0, 4.0]])))  # singular: inf

X = np.array([[0.8, 0.3], [0.6, 0.7]])  # cat and dog
G = ex.gram_matrix(X)  # [[0.73, 0.69], [0.69, 0.85]]
print(G, np.linalg.det(G), ex.is_positive_definite(G))  # det 0.1444, True
wide = rng.normal(size=(5, 3))  # 5 rows in 3 dimensions
print(ex.is_positive_definite(ex.gram_matrix(wide)))  # False: semi-definite only

# %% [markdown]
# ## Newton-Schulz

# %%
G = rng.normal(size=(6, 4))
U, _, Vt = np.linalg.svd(G, full_matrices=False)
X = ex.newton_schulz_orthogonalize(G, n_iter=30)
print(np.abs(X - U @ Vt).max())  # close to the polar factor

s = 0.1
for _ in range(3):
    s = 1.5 * s - 0.5 * s**3
    print(round(s, 4))  # 0.1495, 0.2226, 0.3284

# %% [markdown]
# ## Sliding windows

# %%
# --8<-- [start:window]
window = ex.sliding_window_mask(1024, window=128)  # causal, (1024, 1024) bool
full = ex.sliding_window_mask(1024, window=1024)  # the ordinary causal mask
print(window.sum(), ex.mask_density(window))  # 122944, 0.117
print(ex.mask_density(full))  # 0.5005
print(ex.sliding_window_mask(6, window=3).astype(int))
# --8<-- [end:window]
