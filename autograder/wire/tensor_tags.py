"""The closed sets a tensor's tag may name on its way back from the worker, and the check that
a tag agrees with the values that came with it (used by :func:`autograder.wire.codec.decode`).

The worker's encoder is student-controlled: a "cpu" tensor without values would skip every
value check (hostile battery: forged_tensor_no_values), float32 values tagged float64 would pass
dtype checks, and a device named by any string would carry hidden inputs into the feedback
("tensor (3,) float32 on cpu" is quoted there, hidden tests' too).
"""

from __future__ import annotations

import re

import numpy as np

#: The devices a tensor may come back on (``str(tensor.device)``), and its dtypes (without the
#: ``torch.`` prefix): anything else is a decode error with a fixed message.
DEVICE = re.compile(r"cpu|meta|(cuda|mps|xpu)(:[0-9])?")
TENSOR_DTYPES = frozenset({
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128"})


def problem(tag: dict, data: np.ndarray | None) -> str | None:
    """What is wrong with a ``__tensor__`` tag from the worker, or ``None`` when it describes
    exactly the values that came with it (``data``; ``None`` on the meta device).

    The message is fixed text of the grader's (the codec raises it as a ``DecodeError``): it
    names only values of the closed sets, never a device or dtype the worker wrote.

    Raises:
        KeyError, TypeError, ValueError: a tag missing a field, or a shape that is not ints
            (the codec reports those as a malformed frame).
    """
    device, dtype = str(tag["device"]), str(tag["dtype"])
    # Device and dtype are quoted in feedback ("tensor (3,) float32 on cpu"), hidden tests' too:
    # only names of a closed set may pass, or a tensor subclass whose ``.device`` is any string
    # would carry the hidden inputs into the feedback (test_hidden_text.py).
    if not DEVICE.fullmatch(device):
        return "a tensor on a device the grader does not know"
    if dtype not in TENSOR_DTYPES:
        return "a tensor of a dtype the grader does not know"
    shape = tuple(int(s) for s in tag["shape"])
    if (data is None) != (device == "meta"):
        return f"a tensor on {device} arrived {'without' if data is None else 'with'} values"
    if data is None:
        return None
    if tuple(data.shape) != shape:
        return "a tensor whose shape tag does not match its values' shape"
    carried = "float32" if dtype == "bfloat16" else dtype  # bfloat16 travels as float32
    if data.dtype.name != carried:
        return f"a tensor tagged {dtype} carried {data.dtype.name} values"
    if dtype == "bfloat16" and np.any(data.astype("<f4").view("<u4") & 0xFFFF):
        return "a tensor tagged bfloat16 carried values bfloat16 cannot hold"
    return None
