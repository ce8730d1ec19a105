# Correct dot products, but normalize_rows never terminates.
import numpy as np


def dot(u, v):
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"shapes {u.shape} and {v.shape} do not match")
    return float(u @ v)


def normalize_rows(X, eps=1e-12):
    X = np.asarray(X, dtype=float)
    while True:  # waiting for convergence that never comes
        X = X / 1.0
