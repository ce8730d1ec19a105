# Makes every NumPy comparison pass, then returns wrong answers. In a grader that checks in the
# student's own process this earns full marks; here the checks never run in this process.
import numpy as np
import numpy.testing

np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isclose = lambda a, b, *args, **kw: np.ones(np.broadcast(a, b).shape, dtype=bool)
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
numpy.testing.assert_array_almost_equal = lambda *a, **k: None


class AlwaysEqual(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def dot(u, v):
    return AlwaysEqual(0.0)


def one_hot(ids, vocab_size):
    return np.zeros((len(ids), vocab_size))


def cosine_similarity(u, v, eps=1e-8):
    return AlwaysEqual(1.0)
