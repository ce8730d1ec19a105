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
# # Lesson 5 companion: attention on any device
#
# Causal masks with and without a KV cache, a causal attention heat map, multi-head attention
# and the float16 overflow. Uses the reference solutions when present, your own `exercises/`
# otherwise. Everything runs on the CPU; set `device = "cuda"` to try a GPU.

# %%
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import torch

ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "exercises").is_dir())
sys.path.insert(0, str(ROOT))
try:
    from solutions import ex05_attention as ex
except ImportError:
    from exercises import ex05_attention as ex

plt.rcParams.update(
    {
        "svg.hashsalt": "lesson-05",
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
# ## Causal masks: square, and with a KV cache

# %%
# --8<-- [start:masks]
device = "cpu"  # or "cuda": every tensor below is made on this device
print(ex.causal_mask(4, 4, device=device).int())  # lower triangular
# 2 new queries at positions 3 and 4
print(ex.causal_mask(2, 5, device=device).int())
# PyTorch's is_causal=True aligns the 2 x 5 diagonal at the top left instead:
print(torch.ones(2, 5, dtype=torch.bool).tril().int())
# --8<-- [end:masks]

# %% [markdown]
# ## Lesson 2's two tokens under each mask
# q, k and v are the projected toy tokens of lesson 2 (queries and keys of width 2).

# %%
# --8<-- [start:worked]
q = torch.tensor([[3.0, -3.0], [1.0, 1.0]], device=device)  # q1, q2: (L, E)
k = torch.tensor([[-3.0, 3.0], [1.0, 1.0]], device=device)  # k1, k2: (S, E)
v = torch.tensor([[1.0, 2.0], [2.0, 1.0]], device=device)  # v1, v2: (S, E_v)
attend = ex.scaled_dot_product_attention

plain = attend(q, k, v)  # [[2.000, 1.000], [1.804, 1.196]]
causal = attend(q, k, v, is_causal=True)  # row 1 is now v1

# Token 2 is padding: a key mask of shape (B, h, L, S) = (1, 1, 1, 2).
keep = torch.tensor([True, False], device=device).view(1, 1, 1, 2)
qb, kb, vb = (t.view(1, 1, 2, 2) for t in (q, k, v))  # B = h = 1
padded = attend(qb, kb, vb, mask=keep)  # both rows are v1

# Decoding with a cache: step 1 sees k1, v1; step 2 has L = 1, S = 2.
step1 = attend(q[:1], k[:1], v[:1])
step2 = attend(q[1:], k, v, is_causal=True)
assert torch.allclose(torch.cat([step1, step2]), causal)  # the same rows
print(plain, causal, padded, sep="\n")
# --8<-- [end:worked]

# %% [markdown]
# ## A heat map for one sentence

# %%
tokens = ["the", "cat", "sat", "on", "the", "mat"]
torch.manual_seed(0)
d_model = 16
vocab = {w: i for i, w in enumerate(dict.fromkeys(tokens))}
embedding = torch.randn(len(vocab), d_model, device=device)
X = embedding[torch.tensor([vocab[w] for w in tokens], device=device)]  # (L, d_model)
W_Q, W_K = torch.randn(2, d_model, d_model, device=device) / d_model**0.5
q, k, v = X @ W_Q, X @ W_K, X  # (L, d_model) each

scores = (q @ k.T) / d_model**0.5
weights = torch.softmax(scores.masked_fill(~ex.causal_mask(6, 6, device=device), float("-inf")), -1)
out = ex.scaled_dot_product_attention(q, k, v, is_causal=True)
assert torch.allclose(out, weights @ v, atol=1e-5)

fig, ax = plt.subplots(figsize=(4.4, 3.8))
im = ax.imshow(weights.cpu().numpy(), cmap="Blues", vmin=0, vmax=1)
for (i, j), w in zip(
    torch.cartesian_prod(torch.arange(6), torch.arange(6)).tolist(), weights.flatten().tolist()
):
    if j <= i:
        colour = "white" if w > 0.6 else "black"
        ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=9, color=colour)
    else:  # masked: a visible mark, so that "hidden" does not read as "weight 0 by chance"
        ax.text(j, i, "×", ha="center", va="center", fontsize=11, color="tab:grey")
ax.set(
    xticks=range(6),
    yticks=range(6),
    xticklabels=tokens,
    yticklabels=tokens,
    xlabel="key (attended to)",
    ylabel="query (attending)",
    title="Causal attention weights",
)
ax.tick_params(length=0)
fig.colorbar(im, ax=ax, shrink=0.8)
show(fig, "05-causal-heatmap")

# %% [markdown]
# ## A trained head against a random one
#
# The smallest task that needs attention: 8 random tokens, then the same 8 again. From the
# ninth token on, the next token is the one 7 places back, and only attention can fetch it.
# One layer, one head, learned position embeddings, trained for a few seconds on the CPU.

# %%
# Matrices this small train faster on one thread than on several that contend for the cores.
threads = torch.get_num_threads()
torch.set_num_threads(1)

# %%
# --8<-- [start:trained]
V, HALF, WIDTH = 16, 8, 32  # vocabulary, half the sequence, d_model
gen = torch.Generator().manual_seed(0)


def copy_batch(b):
    """(b, 16) sequences: 8 random tokens, then the same 8 again."""
    first = torch.randint(0, V, (b, HALF), generator=gen)
    return torch.cat([first, first], dim=1)


class CopyModel(torch.nn.Module):
    """Embeddings, one causal attention head (the course's), unembedding."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, WIDTH)
        self.pos = torch.nn.Embedding(2 * HALF, WIDTH)
        self.attn = ex.MultiHeadAttention(WIDTH, n_heads=1)
        self.unembed = torch.nn.Linear(WIDTH, V)

    def embed(self, t):  # (B, L) token ids -> (B, L, WIDTH)
        return self.tok(t) + self.pos(torch.arange(t.shape[1]))

    def forward(self, t):  # next-token logits, (B, L, V)
        x = self.embed(t)
        return self.unembed(x + self.attn(x, is_causal=True))

    def weights(self, t):  # the head's attention weights, (B, L, L)
        x = self.embed(t)
        q, k = self.attn.q_proj(x), self.attn.k_proj(x)
        eye = torch.eye(t.shape[1])  # values = identity: output = weights
        return ex.scaled_dot_product_attention(q, k, eye, is_causal=True)


torch.manual_seed(0)
model = CopyModel()
example = copy_batch(1)  # one input, shown before and after training
before = model.weights(example)[0].detach()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(150):
    t = copy_batch(64)
    logits = model(t)[:, HALF - 1 : -1]  # predictions of tokens 8 to 15
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, V), t[:, HALF:].reshape(-1)
    )
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    test = copy_batch(512)  # fresh sequences
    guess = model(test)[:, HALF - 1 : -1].argmax(-1)
    accuracy = (guess == test[:, HALF:]).float().mean().item()
    after = model.weights(example)[0]
print(f"accuracy on the second half: {accuracy:.1%}")
assert accuracy > 0.99
# from position 8 on, each query looks 7 places back
looks_at = after[HALF:-1].argmax(-1)
assert torch.equal(looks_at, torch.arange(1, HALF))
# --8<-- [end:trained]

# %%
torch.set_num_threads(threads)  # as it was
fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.9), constrained_layout=True)
labels = [str(v) for v in example[0].tolist()]
for ax, w, title in [
    (axes[0], before, "random weights"),
    (axes[1], after, f"after training (accuracy {accuracy:.0%})"),
]:
    im = ax.imshow(w.numpy(), cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(2 * HALF), labels, fontsize=7)
    ax.set_yticks(range(2 * HALF), labels, fontsize=7)
    ax.set(xlabel="key: token id", ylabel="query: token id", title=title)
    ax.axhline(HALF - 0.5, color="tab:orange", lw=1)
    ax.axvline(HALF - 0.5, color="tab:orange", lw=1)
    ax.tick_params(length=0)
fig.colorbar(im, ax=axes, shrink=0.7, label="attention weight")
show(fig, "05-trained-head")

# %% [markdown]
# ## Heads

# %%
# --8<-- [start:heads]
B, L, d_model, n_heads = 2, 10, 768, 12
x = torch.randn(B, L, d_model, device=device)
heads = ex.split_heads(x, n_heads)  # (B, h, L, d_h) = (2, 12, 10, 64)
assert heads.shape == (B, n_heads, L, 64)
assert torch.equal(ex.merge_heads(heads), x)  # merging undoes splitting

mha = ex.MultiHeadAttention(d_model, n_heads).to(device)
y = mha(x, is_causal=True)  # (B, L, d_model)
assert y.shape == x.shape
# --8<-- [end:heads]

# %% [markdown]
# ## Half precision: a score that float16 cannot hold

# %%
q16 = torch.full((1, 128), 23.0, dtype=torch.float16)
print((q16.float() @ q16.float().T).item())  # 67712.0 > 65504
print(torch.finfo(torch.float16).max)
out16 = ex.scaled_dot_product_attention(q16, q16, q16)
print(out16.dtype, torch.isfinite(out16).all().item())  # float16 True
