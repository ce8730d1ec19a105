"""Answers that compute nothing, built over the reference so that they validate like it.

Red team, fourth round: answers that return zeros, ones or their own input, after the
reference's own checks have raised where they should, earned 2 / 100 from tests that such an
answer passes but that were not marked ``trivial``: each of those opened its exercise's gate
(autograder.grading.runner.gate_error_rules), which then let the error rules and the trivial
tests count too. :func:`source` wraps every public function and method of a topic's reference:
the reference runs (its ``ValueError``s reach the test), and its answer is replaced by one
that carries nothing but its shape and type (:data:`MODES`).
"""

from __future__ import annotations

from tests.helpers import with_replacement

#: zeros: zeros of the reference answer's shape and dtype (False, 0, 0.0 for scalars);
#: ones: ones (True, 1, 1.0); identity: the first array argument, unchanged; eye: the identity
#: matrix in the answer's last two axes (any batch axes, dtype kept; zeros where the answer
#: has fewer than two axes). Red team, sixth round: `eye` passed three unmarked tests.
MODES = ("zeros", "ones", "identity", "eye")

_WRAPPER = '''
import inspect as _inspect
import types as _types

def _blank(value, mode):
    import numpy as _np
    try:
        import torch as _torch
    except ImportError:
        _torch = None
    if isinstance(value, (tuple, list)):
        return type(value)(_blank(v, mode) for v in value)
    if mode == "eye":
        if getattr(value, "ndim", 0) < 2:
            return _blank(value, "zeros")
        m, n = value.shape[-2:]
        if _torch is not None and isinstance(value, _torch.Tensor):
            eye = _torch.eye(m, n, dtype=value.dtype, device=value.device)
            return eye.expand(value.shape).clone()
        return _np.broadcast_to(_np.eye(m, n, dtype=value.dtype), value.shape).copy()
    if _torch is not None and isinstance(value, _torch.Tensor):
        with _torch.no_grad():
            return (_torch.zeros_like if mode == "zeros" else _torch.ones_like)(value)
    if _torch is not None and isinstance(value, _torch.nn.Module):
        with _torch.no_grad():
            for p in value.parameters():
                p.fill_(0.0 if mode == "zeros" else 1.0)
        return value
    if isinstance(value, _np.ndarray):
        return (_np.zeros_like if mode == "zeros" else _np.ones_like)(value)
    if isinstance(value, (bool, _np.bool_)):
        return mode != "zeros"
    if isinstance(value, (int, float, _np.number)):
        return type(value)(0 if mode == "zeros" else 1)
    return value


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")


#: The reference's own names, as they were: a wrapped function's reference calls the others'
#: references through it, not their wrappers (low_rank_approx unpacks truncated_svd's answer).
_REFERENCE = dict(globals())


def _nothing(f, skip_self):
    own = _types.FunctionType(f.__code__, _REFERENCE, f.__name__, f.__defaults__, f.__closure__)
    own.__kwdefaults__ = f.__kwdefaults__

    def g(*args, **kwargs):
        value = own(*args, **kwargs)  # the reference: its checks raise where they should
        if _MODE == "identity":
            arrays = [a for a in args[int(skip_self):] if _is_array(a)]
            return arrays[0] if arrays else _blank(value, "zeros")
        return _blank(value, _MODE)
    g.__name__, g.__qualname__, g.__doc__ = f.__name__, f.__qualname__, f.__doc__
    return g


for _name, _obj in list(globals().items()):
    if _name.startswith("_") or getattr(_obj, "__module__", None) != __name__:
        continue
    if _inspect.isfunction(_obj):
        globals()[_name] = _nothing(_obj, False)
    elif _inspect.isclass(_obj):
        for _attr, _member in list(vars(_obj).items()):
            if _attr.startswith("_"):
                continue
            if isinstance(_member, staticmethod):
                setattr(_obj, _attr, staticmethod(_nothing(_member.__func__, False)))
            elif _inspect.isfunction(_member):
                setattr(_obj, _attr, _nothing(_member, True))
'''


def source(topic: str, mode: str) -> str:
    """``topic``'s reference with every public function and method answering ``mode``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return with_replacement(topic, f"_MODE = {mode!r}\n" + _WRAPPER)
