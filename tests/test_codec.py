"""Only plain data crosses from a worker (grading contract 2): the codec on its own."""

from __future__ import annotations

import io
import json
import pickle
import struct

import numpy as np
import pytest
import torch

from autograder import codec


def roundtrip(value):
    frame = codec.encode(value)
    (n,) = struct.unpack("<Q", frame[:8])
    return codec.decode(frame[8 : 8 + n])


def test_plain_values_roundtrip_and_tuples_become_lists():
    value = {"a": [1, 2.5, None, True, "x", 1 + 2j], "b": (3, 4), "big": 2**70,
             "nan": float("nan"), "inf": float("-inf")}
    out = roundtrip(value)
    assert out["a"] == [1, 2.5, None, True, "x", 1 + 2j]
    assert out["b"] == [3, 4] and out["big"] == 2**70
    assert np.isnan(out["nan"]) and out["inf"] == float("-inf")


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint16", "float16", "float32",
                                   "float64", "complex128"])
def test_arrays_keep_shape_dtype_and_values(dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    out = roundtrip(a)
    assert type(out) is np.ndarray and out.dtype == a.dtype and np.array_equal(out, a)


def test_numpy_scalars_become_python_scalars():
    out = roundtrip([np.float32(1.5), np.int64(3), np.bool_(True)])
    assert out == [1.5, 3, True] and [type(x) for x in out] == [float, int, bool]


def test_ndarray_subclass_arrives_as_a_plain_ndarray():
    class Liar(np.ndarray):
        def __eq__(self, other):
            return True

    a = np.arange(3.0).view(Liar)
    out = roundtrip(a)
    assert type(out) is np.ndarray and not (out == np.array([9.0, 9.0, 9.0])).any()


def test_forged_objects_do_not_cross():
    class AlwaysEqual(float):
        def __eq__(self, other):
            return True

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.zeros(3)

    for forged in (AlwaysEqual(1.0), ArrayLike(), object(), {1: "int key"},
                   np.array([object()], dtype=object)):
        out = roundtrip(forged)
        assert isinstance(out, codec.Unsupported), forged


def test_tensors_cross_as_tagged_arrays():
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3).requires_grad_(True)
    out = roundtrip(t)
    assert isinstance(out, codec.TensorData)
    assert out.dtype == "bfloat16" and out.device == "cpu" and out.shape == (2, 3)
    assert out.requires_grad and out.values.dtype == np.float32
    meta = roundtrip(torch.empty(4, 5, device="meta", dtype=torch.float16))
    assert meta.values is None and meta.device == "meta" and meta.shape == (4, 5)


def test_a_pickle_never_loads():
    """A frame carrying a pickled object array is refused, not unpickled."""
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    blob = buf.getvalue()
    doc = json.dumps({"v": {"__nd__": 0}, "blobs": [len(blob)]}).encode()
    body = struct.pack("<I", len(doc)) + doc + blob
    with pytest.raises(codec.DecodeError):
        codec.decode(body)
    with pytest.raises(codec.DecodeError):
        codec.decode(pickle.dumps([1, 2, 3]))


@pytest.mark.parametrize("doc", [
    {"v": {"__nd__": 3}, "blobs": []},            # dangling array reference
    {"v": {"evil": 1, "two": 2}, "blobs": []},     # an untagged dict
    {"v": {"__float__": "1e999x"}, "blobs": []},   # a malformed float tag
    {"v": {"__class__": "os.system"}, "blobs": []},  # an unknown tag
])
def test_malformed_frames_are_refused(doc):
    raw = json.dumps(doc).encode()
    with pytest.raises(codec.DecodeError):
        codec.decode(struct.pack("<I", len(raw)) + raw)


def test_plain_dict_cannot_pose_as_a_tag():
    out = roundtrip({"__nd__": 0})
    assert out == {"__nd__": 0}
