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
# # Lesson 4 companion: SVD, low rank and LoRA
#
# The worked example with singular values [4, 2, 1, 0.5], two spectra, power iteration and a
# LoRA layer. Uses the reference solutions when present, your own `exercises/` otherwise.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex04_svd_lora as ex
except ImportError:
    from exercises import ex04_svd_lora as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-04",
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
# ## The SVD as a picture
#
# A 2 × 2 matrix acting on the unit circle, one factor at a time (column vectors, W v):
# Vᵀ turns the circle so that v₁ and v₂ lie on the axes, Σ stretches the axes by σ₁ and σ₂,
# and U turns the result so that the ellipse's semi-axes are σ₁u₁ and σ₂u₂.

# %%
# --8<-- [start:picture]
W2 = np.array([[1.5, 0.5], [-0.4, 0.9]])
U2, S2, Vt2 = ex.truncated_svd(W2, 2)  # U (2, 2), S (2,), Vᵀ (2, 2)
angle = np.linspace(0, 2 * np.pi, 97)
circle = np.stack([np.cos(angle), np.sin(angle)])  # (2, 97): unit vectors
steps = [circle, Vt2 @ circle, np.diag(S2) @ Vt2 @ circle]
steps.append(U2 @ steps[-1])
assert np.allclose(steps[-1], W2 @ circle)  # the three factors are W
print("singular values:", S2.round(3))
# --8<-- [end:picture]

# %%
fig, axes = plt.subplots(1, 4, figsize=(8.4, 2.5), constrained_layout=True)
titles = ["unit circle, v₁ and v₂", "after Vᵀ: a turn", "after Σ: a stretch", "after U: W v"]
arrows = [
    (Vt2.T, ("v₁", "v₂")),  # the right singular vectors, where they start
    (np.eye(2), ("e₁", "e₂")),  # Vᵀ sends them to the axes
    (np.diag(S2), ("σ₁e₁", "σ₂e₂")),
    (U2 * S2, ("σ₁u₁", "σ₂u₂")),  # columns σ_k u_k: the ellipse's semi-axes
]
limit = 1.4 * S2[0]
for ax, points, title, (vectors, names) in zip(axes, steps, titles, arrows):
    ax.scatter(*points, c=angle, cmap="twilight", s=6)
    for vector, name, colour in zip(vectors.T, names, ("tab:red", "tab:blue")):
        ax.annotate("", xy=vector, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour})
        ax.text(*(vector * 1.25), name, color=colour, fontsize=9, ha="center", va="center")
    ax.set(xlim=(-limit, limit), ylim=(-limit, limit), aspect="equal")
    ax.axis("off")
    ax.set_title(title, fontsize=9)
show(fig, "04-svd-picture")

# %% [markdown]
# ## A matrix with chosen singular values

# %%
# --8<-- [start:worked]
def random_orthogonal(n, rng):
    """A random n x n orthogonal matrix: QR of a Gaussian one, signs fixed."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


rng = np.random.default_rng(0)
S = np.array([4.0, 2.0, 1.0, 0.5])
W = random_orthogonal(4, rng) @ np.diag(S) @ random_orthogonal(4, rng).T

print(np.linalg.norm(W))  # Frobenius norm: sqrt(21.25) = 4.610
print(ex.eckart_young_error(W, 2))  # sqrt(1 + 0.25) = 1.118
print(np.linalg.norm(W - ex.low_rank_approx(W, 2)))  # the same number
print(ex.rank_for_energy(S, 0.9))  # 2: the first two hold 94.1 %
# --8<-- [end:worked]

# %%
sigma, u, v = ex.power_iteration(W, n_iter=30)
print(sigma, np.allclose(W @ v, sigma * u))  # 4.0 True

# %% [markdown]
# ## Two spectra: random, and low rank plus noise

# %%
n = 64
random = rng.normal(size=(n, n))
low_rank = rng.normal(size=(n, 8)) @ rng.normal(size=(8, n)) + 0.2 * rng.normal(size=(n, n))
spectra = {
    "random Gaussian": np.linalg.svd(random, compute_uv=False),
    "rank 8 + noise": np.linalg.svd(low_rank, compute_uv=False),
}

fig, ax = plt.subplots(figsize=(5.2, 3.2))
for (name, s), colour in zip(spectra.items(), ["tab:grey", "tab:blue"]):
    ax.semilogy(np.arange(1, n + 1), s, "o-", ms=3, lw=1, color=colour, label=name)
ax.set(
    xlabel="index i", ylabel=r"singular value $\sigma_i$", title="Singular value spectra, 64 × 64"
)
ax.legend()
show(fig, "04-spectrum")

# %%
fig, ax = plt.subplots(figsize=(5.2, 3.2))
ks = np.arange(1, n + 1)
for (name, M), colour in zip(
    {"random Gaussian": random, "rank 8 + noise": low_rank}.items(), ["tab:grey", "tab:blue"]
):
    errors = [ex.eckart_young_error(M, k) / np.linalg.norm(M) for k in ks]
    ax.plot(ks, errors, lw=2, color=colour, label=name)
ax.axvline(8, color="tab:blue", ls=":", lw=1)
ax.set(
    xlabel="rank k kept",
    ylabel=r"$\|W - W_k\|_F \,/\, \|W\|_F$",
    title="Best rank-k error (Eckart–Young–Mirsky)",
    ylim=(0, 1.02),
)
ax.legend()
show(fig, "04-error-vs-k")

# %% [markdown]
# ## A picture at rank k
# A made-up 96 x 96 greyscale picture (a disc, a bar and a soft gradient), kept at a few
# ranks. Storage for rank k is k(m + n + 1) numbers against m n for the full picture.

# %%
m = 96
yy, xx = np.mgrid[0:m, 0:m] / m
picture = 0.3 * xx + ((xx - 0.6) ** 2 + (yy - 0.4) ** 2 < 0.06) + 0.8 * (np.abs(yy - 0.75) < 0.06)
fig, axes = plt.subplots(1, 4, figsize=(7.2, 2.2), constrained_layout=True)
for ax, k in zip(axes, [None, 1, 4, 16]):
    shown = picture if k is None else ex.low_rank_approx(picture, k)
    share = 100 if k is None else 100 * k * (2 * m + 1) / m**2
    ax.imshow(shown, cmap="gray", vmin=0, vmax=1.3)
    ax.set(xticks=[], yticks=[], title=("full" if k is None else f"rank {k}") + f": {share:.0f} %")
show(fig, "04-picture-ranks")

# %% [markdown]
# ## LoRA

# %%
# --8<-- [start:lora]
torch.manual_seed(0)
base = torch.nn.Linear(4096, 4096, bias=False)
layer = ex.LoRALinear(base, r=8, alpha=16)  # scaling = alpha / r = 2

x = torch.randn(3, 4096)
assert torch.equal(layer(x), base(x))  # B = 0: starts exactly at the base
trainable = sum(p.numel() for p in layer.parameters() if p.requires_grad)
print(trainable, base.weight.numel())  # 65536 vs 16777216

with torch.no_grad():  # pretend training moved B
    layer.lora_B.normal_(std=0.01)
merged = layer.merged()  # one ordinary nn.Linear
assert torch.allclose(merged(x), layer(x), atol=1e-4)
# --8<-- [end:lora]

# %% [markdown]
# ## Is a fine-tuning update low rank?
#
# A small network learns task A; then it is fine-tuned on task B (task A plus a new skill), once
# with every weight free and once through LoRA adapters of rank 1 to 8. The singular values
# of the full update of the first layer are compared with those of a random matrix of the same
# shape, and each adapter's error with the full fine-tune's.

# %%
threads = torch.get_num_threads()
torch.set_num_threads(1)  # tiny matrices: one thread beats several contending for the cores

# %%
# --8<-- [start:finetune]
import copy

gen = torch.Generator().manual_seed(0)
D_IN, HIDDEN, D_OUT = 32, 64, 8


def teacher(seed):
    """A fixed random function R^32 -> R^8, the target of a task."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(D_IN, 48, generator=g)
    B = torch.randn(48, D_OUT, generator=g)
    return lambda x: torch.tanh(x @ A / D_IN**0.5) @ (B / 48**0.5)


def task_a(x):
    return teacher(1)(x)


def task_b(x):  # task A and a new skill on top
    return teacher(1)(x) + 0.5 * teacher(2)(x)


def fit(model, task, steps, lr):
    """Adam on the model's trainable parameters; returns its test error."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    for _ in range(steps):
        x = torch.randn(256, D_IN, generator=gen)
        loss = (model(x) - task(x)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        x = torch.randn(4096, D_IN, generator=gen)
        return (model(x) - task(x)).pow(2).mean().item()


torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Linear(D_IN, HIDDEN),
    torch.nn.Tanh(),
    torch.nn.Linear(HIDDEN, D_OUT),
)
fit(net, task_a, 1500, 3e-3)  # "pretraining"
full = copy.deepcopy(net)
full_error = fit(full, task_b, 300, 1e-3)  # full fine-tune
update = (full[0].weight - net[0].weight).detach()  # (64, 32): first layer

lora_error = {}
for rank in (1, 2, 4, 8):
    adapted = copy.deepcopy(net).requires_grad_(False)
    adapted[0] = ex.LoRALinear(adapted[0], r=rank, alpha=2 * rank)
    adapted[2] = ex.LoRALinear(adapted[2], r=rank, alpha=2 * rank)
    lora_error[rank] = fit(adapted, task_b, 300, 1e-2)
print(f"full fine-tune: {full_error:.4f}; LoRA:", lora_error)
# --8<-- [end:finetune]

# %%
torch.set_num_threads(threads)
sv_update = torch.linalg.svdvals(update)
sv_random = torch.linalg.svdvals(torch.randn(update.shape, generator=gen))


def energy(s, k):
    """Share of the squared Frobenius norm in the first k singular values."""
    return float((s[:k] ** 2).sum() / (s**2).sum())


# what the lesson says: the update's spectrum falls faster than noise's, and rank 8 is enough
assert energy(sv_update, 8) > energy(sv_random, 8) + 0.2
assert lora_error[8] < 1.2 * full_error < lora_error[1]

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.6, 3.0), constrained_layout=True)
k = np.arange(1, len(sv_update) + 1)
ax1.plot(k, (sv_update / sv_update[0]).numpy(), "o-", ms=3, label="fine-tuning update")
ax1.plot(k, (sv_random / sv_random[0]).numpy(), "o-", ms=3, color="grey", label="random matrix")
ax1.set(xlabel="k", ylabel="σ_k / σ_1", title="First layer's update, (64, 32)")
ax1.legend(frameon=False, fontsize=8)
ranks = list(lora_error)
ax2.semilogy(ranks, list(lora_error.values()), "o-", label="LoRA, rank r")
ax2.axhline(full_error, color="black", ls=":", label="full fine-tune")
ax2.set(xlabel="rank r", ylabel="test error on task B", xticks=ranks, title="Fine-tuning on task B")
ax2.legend(frameon=False, fontsize=8)
show(fig, "04-finetune-rank")
