# Topic 1, mostly right; one_hot and embedding_lookup let negative ids wrap around (Python
# indexing), and the angle is computed without clipping the cosine.
import numpy as np


def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    return np.eye(vocab_size)[ids]  # ids = -1 silently picks the last row


def embedding_lookup(ids, W_E):
    return np.asarray(W_E, dtype=np.float64)[np.asarray(ids)]


def dot(u, v):
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape} do not match")
    return float(u @ v)


def pairwise_dot(A, B):
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"A {A.shape} and B {B.shape} must share their width")
    return np.einsum("nd,md->nm", A, B)
