"""Plausible wrong implementations of topic 2: each must lose points in its own tests."""

from __future__ import annotations

from tests.banks import Variant

# project_qkv and feed_forward call linear; feed_forward calls gelu.
LINEAR_CALLERS = ("project_qkv", "feed_forward")

BANK: list[Variant] = [
    # ------------------------------------------------------------------ linear
    Variant("linear", "nn.Linear layout: x @ W.T", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    out = x @ W.T
    return out if b is None else out + b
""", also=LINEAR_CALLERS),
    Variant("linear", "the bias is ignored", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    if x.shape[-1] != W.shape[0]:
        raise ValueError(f"x {x.shape} and W {W.shape}")
    out = x @ W
    return out if out.dtype.kind == "f" else out.astype(np.float64)
""", also=LINEAR_CALLERS),
    Variant("linear", "batch axes flattened: (N, d_out) instead of (..., d_out)", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    if x.shape[-1] != W.shape[0]:
        raise ValueError(f"x {x.shape} and W {W.shape}")
    out = x.reshape(-1, W.shape[0]) @ W
    out = out if b is None else out + b
    return out if out.dtype.kind == "f" else out.astype(np.float64)
""", also=LINEAR_CALLERS),
    Variant("linear", "everything cast to float64 (float32 not kept)", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x, dtype=np.float64), np.asarray(W, dtype=np.float64)
    if x.shape[-1] != W.shape[0]:
        raise ValueError(f"x {x.shape} and W {W.shape}")
    out = x @ W
    return out if b is None else out + np.asarray(b, dtype=np.float64)
""", also=LINEAR_CALLERS),
    Variant("linear", "integer inputs stay integer", """
import numpy as np
def linear(x, W, b=None):
    x, W = np.asarray(x), np.asarray(W)
    if x.shape[-1] != W.shape[0]:
        raise ValueError(f"x {x.shape} and W {W.shape}")
    out = x @ W
    return out if b is None else out + b
""", also=LINEAR_CALLERS),
    # ------------------------------------------------------------------ project_qkv
    Variant("project_qkv", "returns (Q, V, K)", """
import numpy as np
def project_qkv(X, W_Q, W_K, W_V):
    if np.shape(W_Q)[1] != np.shape(W_K)[1]:
        raise ValueError("W_Q and W_K widths differ")
    return linear(X, W_Q), linear(X, W_V), linear(X, W_K)
"""),
    Variant("project_qkv", "no check that W_Q and W_K have the same width", """
import numpy as np
def project_qkv(X, W_Q, W_K, W_V):
    return linear(X, W_Q), linear(X, W_K), linear(X, W_V)
"""),
    Variant("project_qkv", "requires d_v == d_k (rejects a different value width)", """
import numpy as np
def project_qkv(X, W_Q, W_K, W_V):
    if not (np.shape(W_Q)[1] == np.shape(W_K)[1] == np.shape(W_V)[1]):
        raise ValueError("all projections must have the same width")
    return linear(X, W_Q), linear(X, W_K), linear(X, W_V)
"""),
    Variant("project_qkv", "projects with W_Q for both queries and keys", """
import numpy as np
def project_qkv(X, W_Q, W_K, W_V):
    if np.shape(W_Q)[1] != np.shape(W_K)[1]:
        raise ValueError("W_Q and W_K widths differ")
    return linear(X, W_Q), linear(X, W_Q), linear(X, W_V)
"""),
    # ------------------------------------------------------------------ attention_scores
    Variant("attention_scores", "K.T reverses every axis (wrong for batched inputs)", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    scale = 1 / np.sqrt(Q.shape[-1]) if scale is None else scale
    return (Q @ K.T) * scale
"""),
    Variant("attention_scores", "the default scale is missing (raw Q Kᵀ)", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    return (Q @ np.swapaxes(K, -1, -2)) * (1.0 if scale is None else scale)
"""),
    Variant("attention_scores", "default scale 1/d_k instead of 1/√d_k", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    scale = 1 / Q.shape[-1] if scale is None else scale
    return (Q @ np.swapaxes(K, -1, -2)) * scale
"""),
    Variant("attention_scores", "default scale uses the number of keys, 1/√n_k", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    scale = 1 / np.sqrt(K.shape[-2]) if scale is None else scale
    return (Q @ np.swapaxes(K, -1, -2)) * scale
"""),
    Variant("attention_scores", "an explicit scale divides instead of multiplying", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    div = np.sqrt(Q.shape[-1]) if scale is None else scale
    return (Q @ np.swapaxes(K, -1, -2)) / div
"""),
    Variant("attention_scores", "float32 inputs come back as float64", """
import numpy as np
def attention_scores(Q, K, scale=None):
    Q, K = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q {Q.shape} and K {K.shape}")
    scale = 1 / np.sqrt(Q.shape[-1]) if scale is None else scale
    return (Q @ np.swapaxes(K, -1, -2)) * scale
"""),
    # ------------------------------------------------------------------ compose
    Variant("compose", "column-vector order: W_k … W_2 W_1", """
import numpy as np
from functools import reduce
def compose(*Ws):
    if not Ws:
        raise ValueError("no matrices")
    Ws = [np.asarray(W, dtype=float) for W in Ws]
    return reduce(lambda acc, W: W @ acc, Ws[1:], Ws[0])
"""),
    Variant("compose", "no matrices: reduce() raises TypeError, not ValueError", """
import numpy as np
from functools import reduce
def compose(*Ws):
    Ws = [np.asarray(W) for W in Ws]
    out = reduce(np.matmul, Ws)
    return out if out.dtype.kind == "f" else out.astype(np.float64)
"""),
    Variant("compose", "loop drops the first matrix (starts from the identity of W1's width)", """
import numpy as np
def compose(*Ws):
    if not Ws:
        raise ValueError("no matrices")
    Ws = [np.asarray(W, dtype=float) for W in Ws]
    out = np.eye(Ws[0].shape[1])
    for W in Ws[1:]:
        if out.shape[1] != W.shape[0]:
            raise ValueError("shapes do not chain")
        out = out @ W
    return out
"""),
    Variant("compose", "element-wise product of the chain instead of matrix product", """
import numpy as np
def compose(*Ws):
    if not Ws:
        raise ValueError("no matrices")
    Ws = [np.asarray(W, dtype=float) for W in Ws]
    out = Ws[0]
    for W in Ws[1:]:
        if out.shape[1] != W.shape[0]:
            raise ValueError("shapes do not chain")
        out = out @ W if out.shape != W.shape else out * W
    return out
"""),
    Variant("compose", "float32 matrices come back as float64", """
import numpy as np
def compose(*Ws):
    if not Ws:
        raise ValueError("no matrices")
    Ws = [np.asarray(W, dtype=np.float64) for W in Ws]
    for A, B in zip(Ws, Ws[1:]):
        if A.shape[1] != B.shape[0]:
            raise ValueError(f"{A.shape} does not chain with {B.shape}")
    return np.linalg.multi_dot(Ws) if len(Ws) > 1 else Ws[0].copy()
"""),
    # ------------------------------------------------------------------ gelu
    Variant("gelu", "the tanh approximation is used for the exact GELU too", """
import math
import numpy as np
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(approximate)
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    out = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return out.astype(dt)
""", also=("feed_forward",)),
    Variant("gelu", "Φ(x) = ½(1 + erf(x)): the √2 is missing", """
import math
import numpy as np
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(approximate)
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    else:
        out = 0.5 * x * (1 + np.vectorize(math.erf)(x))
    return np.asarray(out).astype(dt)
""", also=("feed_forward",)),
    Variant("gelu", "the sigmoid approximation x·σ(1.702x) stands in for tanh", """
import math
import numpy as np
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(approximate)
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    if approximate == "tanh":
        out = x / (1 + np.exp(-1.702 * x))
    else:
        out = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return np.asarray(out).astype(dt)
"""),
    Variant("gelu", "any unknown approximate string silently means exact", """
import math
import numpy as np
def gelu(x, approximate="none"):
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    else:
        out = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return np.asarray(out).astype(dt)
"""),
    Variant("gelu", "tanh form with a typo in the cubic coefficient (0.44715)", """
import math
import numpy as np
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(approximate)
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.44715 * x**3)))
    else:
        out = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return np.asarray(out).astype(dt)
"""),
    Variant("gelu", "always returns float64 (float32 not kept)", """
import math
import numpy as np
def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(approximate)
    x = np.asarray(x, dtype=np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return np.asarray(0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))), dtype=float)
""", also=("feed_forward",)),
    # ------------------------------------------------------------------ feed_forward
    Variant("feed_forward", "GELU applied before adding b1", """
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    h = gelu(linear(X, W1))
    if b1 is not None:
        h = h + b1
    return linear(h, W2, b2)
"""),
    Variant("feed_forward", "ReLU instead of GELU", """
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    return linear(np.maximum(linear(X, W1, b1), 0), W2, b2)
"""),
    Variant("feed_forward", "the tanh GELU instead of the exact one", """
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    return linear(gelu(linear(X, W1, b1), approximate="tanh"), W2, b2)
"""),
    Variant("feed_forward", "b2 is forgotten", """
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    return linear(gelu(linear(X, W1, b1)), W2)
"""),
    Variant("feed_forward", "an extra GELU on the output", """
import numpy as np
def feed_forward(X, W1, b1, W2, b2):
    return gelu(linear(gelu(linear(X, W1, b1)), W2, b2))
"""),
    # ------------------------------------------------------------------ transformer_matmuls
    Variant("transformer_matmuls", "flops = m·k·n (the factor 2 is missing)", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh = d // h
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), m * k * p * (heads or 1))
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "per-head FLOPs not multiplied by h", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh = d // h
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), 2 * m * k * p)
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "d_ff taken as 4·d_model, ignoring the argument", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh, d_ff = d // h, 4 * d_model
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), 2 * m * k * p * (heads or 1))
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "heads not split: scores use d instead of d_h = d/h", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), 2 * m * k * p * (heads or 1))
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, d, n, h), mm("aggregate", n, n, d, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "the embedding counted as a free lookup (0 FLOPs)", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh = d // h
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), 2 * m * k * p * (heads or 1))
    out = [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
           mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
           mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
           mm("unembed", n, d, V)]
    out[0] = out[0]._replace(flops=0)
    return out
"""),
    Variant("transformer_matmuls", "no divisibility check: d_h = d // h silently floors", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh = d // h
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        return Matmul(name, (*b, m, k), (*b, k, p), (*b, m, p), 2 * m * k * p * (heads or 1))
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "FLOPs computed as floats (2.0 * …)", """
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    if d_model % n_heads:
        raise ValueError("d_model % n_heads")
    d, h, n, V = d_model, n_heads, seq_len, vocab_size
    dh = d / h
    def mm(name, m, k, p, heads=0):
        b = (heads,) if heads else ()
        shp = lambda *s: tuple(int(x) for x in s)
        return Matmul(name, shp(*b, m, k), shp(*b, k, p), shp(*b, m, p),
                      2.0 * m * k * p * (heads or 1))
    return [mm("embed", n, V, d), mm("q_proj", n, d, d), mm("k_proj", n, d, d),
            mm("v_proj", n, d, d), mm("scores", n, dh, n, h), mm("aggregate", n, n, dh, h),
            mm("out_proj", n, d, d), mm("ffn_up", n, d, d_ff), mm("ffn_down", n, d_ff, d),
            mm("unembed", n, d, V)]
"""),
    Variant("transformer_matmuls", "plain tuples instead of Matmul NamedTuples", """
_REF_TM = transformer_matmuls  # the reference, defined above this code
def transformer_matmuls(d_model, n_heads, d_ff, vocab_size, seq_len):
    return [tuple(m) for m in _REF_TM(d_model, n_heads, d_ff, vocab_size, seq_len)]
"""),
    # issue 36: a shape that broadcasts but is wrong
    Variant("linear", "the bias is added as given: a (d_out, 1) or (1, d_out) bias broadcasts "
            "silently", """
import numpy as np
_reference_linear = linear
def linear(x, W, b=None):
    out = _reference_linear(x, W)
    return out if b is None else out + np.asarray(b).astype(out.dtype)
""", also=LINEAR_CALLERS),
    # issue 36: aliasing
    Variant("compose", "one float matrix comes back as the input itself (np.asarray(W) is W)", """
import numpy as np
_reference_compose = compose
def compose(*Ws):
    out = _reference_compose(*Ws)  # its checks and dtypes
    if len(Ws) == 1 and isinstance(Ws[0], np.ndarray) and Ws[0].dtype == out.dtype:
        return Ws[0]
    return out
"""),
]
