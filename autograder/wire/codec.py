"""The plain-data wire format between the trusted grader and a worker
(docs/design/grading-contract.md §2, docs/design/wire-format.md).

A frame is ``u64 length`` + ``u32 json length`` + JSON + the raw ``.npy`` blobs it refers to.
Only ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, lists, ``str``-keyed dicts and
numeric arrays (``np.load(..., allow_pickle=False)``) are ever rebuilt from a frame: nothing is
unpickled or evaluated, so an object with a forged ``__eq__`` or an ndarray subclass cannot reach
the verdict.

Tagged dicts (``{"__nd__": i}``, ``{"__tensor__": …}``, ``{"__dict__": …}``, …) carry the
non-JSON types; a plain dict always travels wrapped in ``__dict__`` so it can't pose as a tag.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder.wire import frames
from autograder.wire import tensor_tags

#: The largest result a worker may send back (docs/design/wire-format.md): larger fails the test.
MAX_FRAME = 64 * 2**20
#: The most JSON one frame may hold, and the most lists and dicts in it (counted from its
#: brackets, strings included: an over-count errs on the safe side).
MAX_JSON_BYTES = 8 * 2**20
MAX_CONTAINERS = 200_000
_ALLOWED_KINDS = "biufc"


class DecodeError(frames.FrameError):
    """A frame body that is not in the wire format (or too large)."""


class FrameTooLarge(ValueError):
    """An array that alone exceeds ``MAX_FRAME``: refused before it is copied.

    Encoding copies an array three times (the plain copy, the .npy bytes, the frame); a 1 GB
    result would exhaust the worker's memory and come back as a vague MemoryError (hostile
    battery: huge_returns). ``args[0]`` is the array's size in bytes.
    """


@dataclass
class TensorData:
    """A torch tensor as it crossed the process boundary: values plus a tag.

    ``values`` is an ndarray (bfloat16 travels as float32; ``None`` for the ``meta`` device).
    """

    values: np.ndarray | None
    dtype: str  # "float32", "bfloat16", "bool", ...
    device: str  # "cpu", "cuda:0", "meta"
    shape: tuple[int, ...]
    requires_grad: bool = False

    def describe(self) -> str:
        """``"tensor (2, 3) float32 on cpu"``: how feedback names it."""
        return f"tensor {self.shape} {self.dtype} on {self.device}"


@dataclass
class Handle:
    """An object that stays in the worker (a torch module, say), referred to by number."""

    id: int
    type: str


@dataclass
class Unsupported:
    """A value of a type that may not cross; the test that got it fails, naming the type."""

    type: str


@dataclass
class RemoteException:
    """An exception raised by student code: the qualified names of its MRO and its message."""

    classes: list[str]  # qualified names of the MRO (a field named mro would clash with type.mro)
    message: str
    traceback: str = ""

    @property
    def name(self) -> str:
        """The exception's own class (the MRO's first entry)."""
        return self.classes[0] if self.classes else "Exception"

    def is_a(self, name: str) -> bool:
        """Whether the class or a base is ``name`` (qualified, or its trailing part)."""
        return any(m == name or m.endswith("." + name) for m in self.classes)


@dataclass
class Spec:
    """Trusted-side description of a tensor for the worker to build (see ``tensor_spec``)."""

    values: np.ndarray | None
    dtype: str
    device: str
    shape: tuple[int, ...]
    requires_grad: bool = False
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------- encoding


#: .npy headers by (descr, shape) and parsed headers by their bytes: a submission's thousands
#: of calls use a few dozen shapes, and NumPy parses each header with ``ast.literal_eval``,
#: which was half of a worker's time per call. Bounded: a worker may send endless new shapes.
_HEADERS: dict[tuple, bytes] = {}
_PARSED: dict[bytes, tuple[np.dtype, tuple[int, ...], bool]] = {}
_CACHE_MAX = 4096
_MAGIC = b"\x93NUMPY"


def _npy_bytes(a: np.ndarray) -> bytes:
    """``a`` in the .npy format, byte for byte what ``np.save`` writes for a C-ordered copy."""
    if not a.flags.c_contiguous:
        a = np.array(a, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    key = (a.dtype.str, a.shape)
    head = _HEADERS.get(key)
    if head is None:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, np.lib.format.header_data_from_array_1_0(a))
        head = buf.getvalue()
        if len(_HEADERS) < _CACHE_MAX:
            _HEADERS[key] = head
    return head + a.tobytes()


def _load_npy(blob: bytes) -> np.ndarray:
    """A fresh, writable array from .npy bytes; never unpickles (object dtypes are refused).

    Equivalent to ``np.load(io.BytesIO(blob), allow_pickle=False)`` for the arrays that may
    cross, with the header parsed once per distinct header, and the size checked exactly.
    """
    if blob[:6] != _MAGIC or len(blob) < 10:
        raise DecodeError("an array blob that is not in the .npy format")
    major = blob[6]
    if major == 1:
        (hlen,) = struct.unpack_from("<H", blob, 8)
        start = 10 + hlen
    elif major in (2, 3):
        (hlen,) = struct.unpack_from("<I", blob, 8)
        start = 12 + hlen
    else:
        raise DecodeError("an .npy blob of an unknown version")
    head = bytes(blob[:start])
    parsed = _PARSED.get(head)
    if parsed is None:
        arr = np.load(io.BytesIO(blob), allow_pickle=False)  # NumPy's own, safe parser
        if not isinstance(arr, np.ndarray):
            raise DecodeError("an array blob that is not one array")
        parsed = (arr.dtype, arr.shape, bool(arr.flags.f_contiguous and not arr.flags.c_contiguous))
        if arr.dtype.kind in _ALLOWED_KINDS and len(_PARSED) < _CACHE_MAX:
            _PARSED[head] = parsed
    dtype, shape, fortran = parsed
    if dtype.kind not in _ALLOWED_KINDS:
        raise DecodeError("an array of a dtype that may not cross")
    count = 1
    for side in shape:
        count *= side
    if len(blob) - start != count * dtype.itemsize:
        raise DecodeError("an array blob whose size does not match its header")
    flat = np.frombuffer(blob, dtype=dtype, count=count, offset=start)
    return np.array(flat.reshape(shape, order="F" if fortran else "C"), copy=True)


class _Encoder:
    """Turns a value into JSON-able data plus blobs. ``torch`` is looked up lazily."""

    def __init__(self, handles: Any = None) -> None:
        self.blobs: list[bytes] = []
        self.handles = handles  # callable(obj) -> Handle, for keep=True results

    def blob(self, a: np.ndarray) -> int:
        self.blobs.append(_npy_bytes(a))
        return len(self.blobs) - 1

    def enc(self, x: Any, depth: int = 0) -> Any:
        if depth > 64:
            return {"__unsupported__": "a structure nested more than 64 deep"}
        t = type(x)
        if x is None or t is bool or t is str:
            return x
        if t is int:
            return x if abs(x) < 2**63 else {"__bigint__": str(x)}
        if t is float:
            return {"__float__": repr(x)} if x != x or x in (float("inf"), float("-inf")) else x
        if t is complex:
            return {"__complex__": [self.enc(x.real), self.enc(x.imag)]}
        if t in (list, tuple):
            return [self.enc(v, depth + 1) for v in x]
        if t is dict:
            if not all(type(k) is str for k in x):
                return {"__unsupported__": "dict with non-str keys"}
            return {"__dict__": {k: self.enc(v, depth + 1) for k, v in x.items()}}
        if isinstance(x, np.generic) and x.dtype.kind in _ALLOWED_KINDS:
            return self.enc(x.item(), depth + 1)
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in _ALLOWED_KINDS:
                return {"__unsupported__": f"ndarray of dtype {x.dtype}"}
            if x.nbytes > MAX_FRAME:
                raise FrameTooLarge(int(x.nbytes))
            # np.array(..., subok=False) drops any subclass: only the numbers travel.
            return {"__nd__": self.blob(np.array(x, subok=False, copy=True))}
        if isinstance(x, Spec):
            return self.spec(x)
        if isinstance(x, Handle):
            return {"__handle__": x.id}
        if isinstance(x, RemoteException):
            return {"__exc__": {"mro": list(x.classes), "message": x.message, "tb": x.traceback}}
        torch = _torch()
        if torch is not None and isinstance(x, torch.Tensor):
            return self.tensor(x, torch)
        if torch is not None and isinstance(x, (torch.dtype, torch.device)):
            return str(x)
        if self.handles is not None:
            return self.handles(x)
        return {"__unsupported__": f"{t.__module__}.{t.__qualname__}"}

    def tensor(self, x: Any, torch: Any) -> dict:
        t = torch.Tensor.detach(x)
        dtype = str(t.dtype).removeprefix("torch.")
        device = str(t.device)
        tag = {"dtype": dtype, "device": device, "shape": list(t.shape),
               "requires_grad": bool(x.requires_grad), "data": None}
        if device != "meta":
            nbytes = int(t.numel()) * int(t.element_size())
            if nbytes > MAX_FRAME:
                raise FrameTooLarge(nbytes)
            t = torch.Tensor.cpu(t)
            if t.dtype == torch.bfloat16:
                t = t.float()
            if t.is_sparse or t.is_quantized or t.layout != torch.strided:
                t = t.to_dense()
            tag["data"] = self.blob(np.array(t.numpy(force=True), subok=False, copy=True))
        return {"__tensor__": tag}

    def spec(self, s: Spec) -> dict:
        return {"__spec__": {"dtype": s.dtype, "device": s.device, "shape": list(s.shape),
                             "requires_grad": s.requires_grad,
                             "data": None if s.values is None else self.blob(s.values)}}


def encode(value: Any, handles: Any = None) -> bytes:
    """Serialise ``value`` into one frame (u64 length + body: :mod:`autograder.wire.frames`).

    Args:
        handles: in the worker, ``callable(obj) -> tag`` for values that stay there
            (``keep=True`` results); without it such values travel as :class:`Unsupported`.

    Raises:
        FrameTooLarge: one array or tensor alone is over :data:`MAX_FRAME`.
    """
    e = _Encoder(handles)
    doc = json.dumps({"v": e.enc(value), "blobs": [len(b) for b in e.blobs]},
                     allow_nan=False, separators=(",", ":")).encode()
    return frames.frame(struct.pack("<I", len(doc)) + doc + b"".join(e.blobs))


# ---------------------------------------------------------------------------- decoding


def decode(body: bytes, *, tensors: Any = None, handles: Any = None) -> Any:
    """Rebuild a value from a frame body (the bytes after the u64 length).

    Args:
        tensors: in the worker, a function building a torch tensor from a ``__spec__``/``__tensor__``
            tag; on the trusted side ``None`` (tensors become :class:`TensorData`).
        handles: in the worker, a function resolving ``__handle__`` ids to objects.

    Raises:
        DecodeError: anything not in the format.
    """
    try:
        (n,) = struct.unpack_from("<I", body, 0)
        # Checked before parsing: a frame of millions of empty lists is valid JSON, and took
        # the grader minutes and gigabytes to decode, outside every limit of the worker's (red
        # team). Arrays travel as .npy blobs, so plain data never needs more than this.
        if n > MAX_JSON_BYTES or (body.count(b"[", 4, 4 + n) + body.count(b"{", 4, 4 + n)
                                  > MAX_CONTAINERS):
            raise DecodeError("a result with too many parts to grade (return arrays, not "
                              "nested lists)")
        doc = json.loads(body[4 : 4 + n])
        sizes = doc["blobs"]
        arrays: list[np.ndarray] = []
        off = 4 + n
        for size in sizes:
            if not isinstance(size, int) or size < 0 or off + size > len(body):
                raise DecodeError("blob sizes do not match the frame")
            arrays.append(_load_npy(body[off : off + size]))
            off += size
        return _Decoder(arrays, tensors, handles).dec(doc["v"])
    except DecodeError:
        raise
    except Exception:  # malformed JSON, npy, structure: all the same to the grader
        # The exception's text may quote the frame, which student code wrote: a fixed message
        # (a hidden test's feedback would otherwise carry whatever the worker put there).
        raise DecodeError("a malformed result frame") from None


class _Decoder:
    def __init__(self, arrays: list[np.ndarray], tensors: Any, handles: Any) -> None:
        self.arrays, self.tensors, self.handles = arrays, tensors, handles

    def arr(self, i: Any) -> np.ndarray:
        if type(i) is not int or not 0 <= i < len(self.arrays):
            raise DecodeError("bad array reference")
        return self.arrays[i]

    def dec(self, x: Any) -> Any:
        if x is None or type(x) in (bool, int, float, str):
            return x
        if type(x) is list:
            return [self.dec(v) for v in x]
        if type(x) is not dict or len(x) != 1:
            raise DecodeError("untagged object in frame")
        (tag, v), = x.items()
        if tag == "__dict__":
            return {str(k): self.dec(val) for k, val in v.items()}
        if tag == "__nd__":
            return self.arr(v)
        if tag == "__float__":
            if v not in ("nan", "inf", "-inf"):
                raise DecodeError("bad float tag")
            return float(v)
        if tag == "__bigint__":
            return int(str(v))
        if tag == "__complex__":
            return complex(float(self.dec(v[0])), float(self.dec(v[1])))
        if tag in ("__tensor__", "__spec__"):
            data = None if v.get("data") is None else self.arr(v["data"])
            if self.tensors is not None:
                return self.tensors(data, v)
            # Trusted side: the frame came from the worker, which student code controls (it can
            # patch the encoder or write on the socket). A tag must agree with its values, or a
            # "cpu" tensor without values would skip every value check (hostile battery:
            # forged_tensor_no_values), and float32 values tagged float64/bfloat16 would pass
            # dtype checks (tests/test_hostile.py, forged tags). Specs only travel to the worker.
            if tag == "__spec__":
                raise DecodeError("a tensor spec may not come back from the worker")
            problem = tensor_tags.problem(v, data)
            if problem is not None:
                raise DecodeError(problem)
            return TensorData(values=data, dtype=str(v["dtype"]), device=str(v["device"]),
                              shape=tuple(int(s) for s in v["shape"]),
                              requires_grad=bool(v["requires_grad"]))
        # Type names come from student code (a class's __qualname__ may be megabytes) and each
        # failing test quotes them: capped (hostile battery: huge_names).
        if tag == "__handle__":
            if self.handles is not None:
                return self.handles(v)
            if type(v) is not dict:
                raise DecodeError("bad handle")
            return Handle(id=int(v["id"]), type=_short(v["type"]))
        if tag == "__unsupported__":
            return Unsupported(type=_short(v))
        if tag == "__exc__":
            return RemoteException(classes=[_short(m) for m in v["mro"][:32]],
                                   message=str(v["message"])[:4000],
                                   traceback=str(v.get("tb", ""))[:4000])
        raise DecodeError("a result frame with an unknown tag")


def _short(x: Any, limit: int = 200) -> str:
    s = str(x)
    return s if len(s) <= limit else s[:limit] + f"…[{len(s) - limit} more characters]"


def _torch() -> Any:
    import sys

    return sys.modules.get("torch")


def tensor_spec(values: Any, dtype: str = "float32", device: str = "cpu",
                requires_grad: bool = False) -> Spec:
    """Describe a tensor for the worker to build from trusted values.

    ``values`` may be None (meta device: only the shape matters, pass ``shape`` via an empty
    array of that shape).
    """
    arr = np.asarray(values)
    data = None if device == "meta" else arr
    return Spec(values=data, dtype=dtype, device=device, shape=tuple(arr.shape),
                requires_grad=requires_grad)
