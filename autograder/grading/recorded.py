"""Recorded reference values: ``ref`` in a student release, which ships no ``solutions/``.

The suites compare the submission with ``ref``, the reference solution loaded in the trusted
process (:func:`autograder.grading.runner.reference`). A student release (`course release`) has no
solutions, so there ``ref`` replays **recorded reference values**: when the release is built,
every public test runs against the solutions with a :class:`Recorder` in place of ``ref``, which
keeps each ``ref.<name>(args)`` result keyed by a hash of the topic, the name and the arguments;
:class:`Replay` serves them back. The public tests' inputs are fixed (literals, seeded, or
derandomised hypothesis), so every call a test makes on its reference path is found again. A call
whose arguments depend on the student's own result (rare in public tests) is not, and that check
fails saying that it runs in full at grading.

A reference *object* a test builds and drives (``ref.MultiHeadAttention(d, h).double()``, then
trusted weights copied into its parameters, then ``layer(x)``) is recorded too: its parameters
as built, and each method's result keyed by the call, the object's own key and its parameter
values at that moment. In a release, :class:`ReplayObject` hands out those parameters (which the
test may overwrite) and finds each result again. Nondeterministic inputs would miss their keys:
the release build replays every public test right after recording it, so they are caught there.

Recordings are trusted data written by the instructor's tooling, stored as codec frames (plain
data and arrays only, read with ``allow_pickle=False``; nothing is unpickled) in
``suites/public/recorded_reference.zip``. The repository itself holds none.
"""

from __future__ import annotations

import collections
import hashlib
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder import paths
from autograder.wire import codec, frames

PACKAGE_DIR = paths.PACKAGE_DIR
RECORDINGS = PACKAGE_DIR / "suites" / "public" / "recorded_reference.zip"


class RecordError(RuntimeError):
    """A reference call whose arguments or result cannot be recorded."""


class NotRecorded(AssertionError):
    """A reference value this release does not hold (an AssertionError: the check fails)."""


# ------------------------------------------------------------------ values <-> codec frames

def _freeze(x: Any, depth: int = 0) -> Any:
    """A value as codec-encodable data, keeping what the codec flattens (tuples, NamedTuples).

    Every value becomes ``[tag, payload]``: ``v`` a leaf the codec carries as is (scalars, str,
    None, ndarrays, tensors), ``l`` list, ``t`` tuple, ``n`` NamedTuple, ``d`` dict, ``o`` a
    reference object passed back as an argument (hashed by its key, never thawed).
    """
    if depth > 32:
        raise RecordError("a value nested more than 32 deep")
    t = type(x)
    if isinstance(x, tuple) and isinstance(getattr(t, "_fields", None), tuple):
        return ["n", [t.__name__, list(t._fields), [_freeze(v, depth + 1) for v in x]]]
    if t in (list, tuple):
        return ["l" if t is list else "t", [_freeze(v, depth + 1) for v in x]]
    if t is dict:
        if not all(type(k) is str for k in x):
            raise RecordError("a dict with keys that are not strings")
        return ["d", [[k, _freeze(x[k], depth + 1)] for k in sorted(x)]]
    if x is None or t in (bool, int, float, complex, str):
        return ["v", x]
    import numpy as np

    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return ["v", x.item()]
    if isinstance(x, np.ndarray) and x.dtype.kind in "biufc":
        return ["v", np.array(x, subok=False)]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return ["v", x]
    if torch is not None and isinstance(x, torch.dtype):
        return ["v", str(x)]
    if isinstance(x, (RecordingObject, ReplayObject)):
        return ["o", x._key]  # a reference object passed back in: named by its key
    raise RecordError(f"a value of type {t.__module__}.{t.__qualname__}")


def _thaw(x: Any) -> Any:
    tag, payload = x
    if tag == "v":
        return payload
    if tag == "l":
        return [_thaw(v) for v in payload]
    if tag == "t":
        return tuple(_thaw(v) for v in payload)
    if tag == "d":
        return {k: _thaw(v) for k, v in payload}
    if tag == "n":
        name, fields, values = payload
        return collections.namedtuple(name, fields)(*(_thaw(v) for v in values))
    raise codec.DecodeError(f"unknown recording tag {tag!r}")


def _tensor(data: Any, tag: dict) -> Any:
    """A recorded tensor back as a torch tensor (on the trusted side, from trusted data)."""
    import torch

    dtype = getattr(torch, tag["dtype"])
    if tag["device"] == "meta" or data is None:
        return torch.empty(tuple(tag["shape"]), dtype=dtype, device="meta")
    return torch.from_numpy(data.copy()).to(dtype=dtype)


def _digest_state(obj: Any) -> bytes:
    """The exact parameter values of a torch module (or of its replayed stand-in)."""
    import torch

    h = hashlib.sha256()
    for name, t in obj.named_parameters():
        t = torch.Tensor.detach(t).cpu().contiguous()
        h.update(f"{name}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.digest()


def call_key(topic: str, name: str, args: tuple, kwargs: dict, *, on: Any = None) -> str:
    """The hash that names one reference call: topic, name, every argument and, for a method of
    a reference object (``on``), that object's own key and its current parameter values."""
    try:
        frame = codec.encode(_freeze([list(args), dict(kwargs)]))
    except RecordError as exc:
        raise RecordError(f"ref.{name}(...) has an argument that cannot be recorded "
                          f"({exc})") from None
    h = hashlib.sha256(f"{topic}\0{name}\0".encode() + frame)
    if on is not None:
        h.update(b"\0on\0" + on._key.encode() + _digest_state(on))
    return h.hexdigest()


def attr_key(topic: str, name: str, on: Any = None) -> str:
    owner = "" if on is None else on._key
    return hashlib.sha256(f"{topic}\0attr\0{owner}\0{name}".encode()).hexdigest()


def _is_module(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.nn.Module)


#: Methods of a reference object that hand out its parameters (the test may copy values in).
PARAMETER_METHODS = ("named_parameters", "parameters")


# ------------------------------------------------------------------ recording

class Recorder:
    """``ref`` while a release is built: the real reference, each result kept by call key.

    A result that is a torch module (a reference layer the test drives) comes back wrapped in
    a :class:`RecordingObject`: its parameters are recorded as it was built, and each method's
    result is keyed by the call *and* the layer's parameter values at that moment, so weights a
    test copies in are part of the key.
    """

    def __init__(self, module: ModuleType, topic: str, store: dict[str, bytes]) -> None:
        self._module, self._topic, self._store = module, topic, store

    def _keep(self, key: str, value: Any, what: str) -> None:
        try:
            self._store[key] = codec.encode(_freeze(value))
        except (RecordError, ValueError, TypeError) as exc:
            raise RecordError(f"{what} gave a value that cannot be recorded ({exc})") from None

    def _result(self, key: str, out: Any, what: str) -> Any:
        if _is_module(out):
            state = [(n, _detached(p)) for n, p in out.named_parameters()]
            self._keep(f"state:{key}", state, what)
            return RecordingObject(self, out, key)
        self._keep(key, out, what)
        return out

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value):
            self._keep(attr_key(self._topic, name), value, f"ref.{name}")
            return value

        def recorded(*args: Any, **kwargs: Any) -> Any:
            key = call_key(self._topic, name, args, kwargs)
            return self._result(key, value(*args, **kwargs), f"ref.{name}(...)")

        recorded.__name__ = name
        return recorded


def _detached(t: Any) -> Any:
    import torch

    return torch.Tensor.detach(t).clone()


class RecordingObject:
    """A reference object (torch module) while recording: the real one, its results kept."""

    def __init__(self, rec: Recorder, obj: Any, key: str) -> None:
        self._rec, self._obj, self._key = rec, obj, key

    def _method(self, name: str, fn: Any) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            key = call_key(self._rec._topic, name, args, kwargs, on=self)
            return self._rec._result(key, fn(*args, **kwargs), f"ref object .{name}(...)")

        recorded.__name__ = name
        return recorded

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        if name in PARAMETER_METHODS:
            return value  # the real parameters: what the test copies in shows in later keys
        if not callable(value):
            self._rec._keep(attr_key(self._rec._topic, name, self), value, f"ref object .{name}")
            return value
        return self._method(name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("__call__", self._obj)(*args, **kwargs)


def write(path: Path, stores: dict[str, dict[str, bytes]]) -> None:
    """Write recordings (topic -> key -> frame) reproducibly: sorted, fixed timestamps."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for topic in sorted(stores):
            for key in sorted(stores[topic]):
                info = zipfile.ZipInfo(f"{topic}/{key}", date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, stores[topic][key])


# ------------------------------------------------------------------ replay

def _missing(name: str) -> NotRecorded:
    return NotRecorded(
        f"this check needs the reference value of {name} for an input that depends on your own "
        "results; the student release holds only the reference values of the public tests' "
        "fixed inputs. It runs in full when your work is graded.")


class Replay:
    """``ref`` in a student release: recorded reference values, looked up by call key."""

    def __init__(self, topic: str, frames: dict[str, bytes]) -> None:
        self.__name__ = f"recorded reference of {topic}"
        self._topic, self._frames = topic, frames

    def _value(self, key: str) -> Any:
        body = frames.unframe(self._frames[key], codec.MAX_FRAME)
        return _thaw(codec.decode(body, tensors=_tensor))

    def _result(self, key: str, name: str) -> Any:
        if f"state:{key}" in self._frames:
            return ReplayObject(self, key)
        if key not in self._frames:
            raise _missing(name)
        return self._value(key)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = attr_key(self._topic, name)
        if key in self._frames:
            return self._value(key)

        def replay(*args: Any, **kwargs: Any) -> Any:
            return self._result(call_key(self._topic, name, args, kwargs), name)

        replay.__name__ = name
        return replay


class ReplayObject:
    """A reference object in a release: its recorded parameters (which a test may overwrite)
    and the recorded results of its methods for those parameter values."""

    def __init__(self, replay: Replay, key: str) -> None:
        self._replay, self._key = replay, key
        self._params = dict(replay._value(f"state:{key}"))

    def named_parameters(self, *args: Any, **kwargs: Any) -> Any:
        return iter(list(self._params.items()))

    def parameters(self, *args: Any, **kwargs: Any) -> Any:
        return iter(list(self._params.values()))

    def _method(self, name: str) -> Any:
        def replay(*args: Any, **kwargs: Any) -> Any:
            key = call_key(self._replay._topic, name, args, kwargs, on=self)
            return self._replay._result(key, f"a reference layer's {name}")

        replay.__name__ = name
        return replay

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = attr_key(self._replay._topic, name, self)
        if key in self._replay._frames:
            return self._replay._value(key)
        return self._method(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("__call__")(*args, **kwargs)


def load(path: Path = RECORDINGS) -> dict[str, dict[str, bytes]]:
    stores: dict[str, dict[str, bytes]] = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            topic, _, key = info.filename.partition("/")
            stores.setdefault(topic, {})[key] = zf.read(info)
    return stores


_loaded: dict[str, dict[str, bytes]] | None = None


def reference(topic: str) -> Replay:
    """``ref`` for ``topic`` where ``solutions/`` is absent.

    Raises:
        FileNotFoundError: this installation holds no recordings either.
    """
    global _loaded
    if not RECORDINGS.is_file():
        raise FileNotFoundError(
            f"no reference for {topic}: neither solutions/{topic}.py nor recorded reference "
            f"values ({RECORDINGS}) are installed")
    if _loaded is None:
        _loaded = load(RECORDINGS)
    return Replay(topic, _loaded.get(topic, {}))
