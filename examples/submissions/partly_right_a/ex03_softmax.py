# Topic 3 with the classic mistake: softmax without subtracting the maximum first.
import numpy as np


def softmax(z, axis=-1, temperature=1.0):
    z = np.asarray(z, dtype=np.float64) / temperature
    e = np.exp(z)  # overflows for large logits: exp(1000) = inf, inf/inf = NaN
    return e / e.sum(axis=axis, keepdims=True)
