import numpy as np


def dot(u, v)
    return float(np.dot(u, v))
