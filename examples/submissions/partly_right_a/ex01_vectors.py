# A student's topic 1, written without looking at the reference: every function right.
import numpy as np


def _check_ids(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"ids must lie in [0, {vocab_size}), got min {ids.min()} max {ids.max()}")
    return ids


def one_hot(ids, vocab_size):
    ids = _check_ids(ids, vocab_size)
    return (ids[..., None] == np.arange(vocab_size)).astype(np.float64)


def embedding_lookup(ids, W_E):
    W_E = np.asarray(W_E)
    if not np.issubdtype(W_E.dtype, np.floating):
        W_E = W_E.astype(np.float64)
    ids = _check_ids(ids, W_E.shape[0])
    return W_E[ids]


def _pair(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"need two 1-D vectors of equal length, got {u.shape} and {v.shape}")
    return u, v


def dot(u, v):
    u, v = _pair(u, v)
    return float(np.sum(u * v))


def cosine_similarity(u, v, eps=1e-8):
    u, v = _pair(u, v)
    return float(u @ v / max(np.linalg.norm(u) * np.linalg.norm(v), eps))


def angle_between(u, v):
    u, v = _pair(u, v)
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("the angle with a zero vector is undefined")
    cos = np.clip(u @ v / (nu * nv), -1.0, 1.0)
    return float(np.degrees(np.arccos(cos)))


def pairwise_dot(A, B):
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"A (n, d) and B (m, d) must share d: got {A.shape} and {B.shape}")
    if not np.issubdtype(A.dtype, np.floating):
        A = A.astype(np.float64)
    if not np.issubdtype(B.dtype, np.floating):
        B = B.astype(np.float64)
    return A @ B.T


def normalize_rows(X, eps=1e-12):
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    norms = np.linalg.norm(X.astype(np.float32) if X.dtype == np.float16 else X,
                           axis=-1, keepdims=True)
    return (X / np.maximum(norms, eps)).astype(X.dtype)
