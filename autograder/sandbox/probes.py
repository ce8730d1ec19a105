"""Trusted helpers that run *inside* the worker, for checks that must watch code run.

They return plain data only. Because they run in the student's process they can be forged by a
determined cheater: whatever they feed is advisory (docs/design/threat-model.md, at most 10 % of a
topic's points), except where they only build inputs or read back values that the trusted side
judges like any other returned value.
"""

from __future__ import annotations

import importlib
from typing import Any


# Objects held by the worker arrive here already resolved from their handles.


def named_parameters(server: Any, mod: Any) -> dict:
    """name -> tensor (values, dtype, device, requires_grad) of a module's parameters."""
    return {name: p for name, p in mod.named_parameters()}


def attribute(server: Any, obj: Any, name: str) -> Any:
    """``obj.name`` of an object held in the worker."""
    return getattr(obj, name)


def load_state(server: Any, mod: Any, state: dict) -> None:
    """Copy trusted values into a module's parameters (by name), without grad."""
    import torch

    with torch.no_grad():
        params = dict(mod.named_parameters())
        for name, value in state.items():
            params[name].copy_(value)


def is_instance(server: Any, obj: Any, qualname: str) -> bool:
    """Whether ``obj`` is an instance of the class ``qualname`` (``"torch.nn.Linear"``)."""
    mod_name, _, cls = qualname.rpartition(".")
    return isinstance(obj, getattr(importlib.import_module(mod_name), cls))


def _counted(fn: Any, args: tuple, kwargs: dict) -> dict:
    """Call ``fn`` under a TorchDispatchMode that counts the ATen ops it dispatches."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: dict[str, int] = {}

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            key = str(func.overloadpacket.__name__)
            counts[key] = counts.get(key, 0) + 1
            return func(*args, **(kwargs or {}))

    with Counter():
        out = fn(*args, **kwargs)
    return {"total": sum(counts.values()), "ops": counts, "result": out}


def count_ops(server: Any, module: str, name: str, *args: Any, **kwargs: Any) -> dict:
    """Run ``module.name(*args)`` and count the ATen ops it dispatched."""
    return _counted(getattr(importlib.import_module(module), name), args, kwargs)


def count_ops_method(server: Any, obj: Any, method: str, *args: Any, **kwargs: Any) -> dict:
    """Like :func:`count_ops` for a method of an object held in the worker."""
    return _counted(getattr(obj, method), args, kwargs)


def backward_grads(server: Any, mod: Any, x: Any) -> dict:
    """Run forward and ``.sum().backward()``; report which parameters received a gradient."""
    out = mod(x)
    out.sum().backward()
    return {name: p.grad is not None for name, p in mod.named_parameters()}


def _fields(x: Any, depth: int = 0) -> Any:
    # A NamedTuple becomes {"type": class name, "fields": {field: value}}; other tuples lists.
    if depth > 16:
        return x
    if isinstance(x, tuple) and isinstance(getattr(type(x), "_fields", None), tuple):
        return {"type": type(x).__name__,
                "fields": {str(f): _fields(getattr(x, f), depth + 1) for f in type(x)._fields}}
    if isinstance(x, (list, tuple)):
        return [_fields(v, depth + 1) for v in x]
    return x


def with_fields(server: Any, module: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``module.name(*args)``; NamedTuples in its result come back with their field names.

    The codec sends tuples as lists and refuses tuple subclasses; this reads a result such as
    ``list[Matmul]`` back as plain data, judged on the trusted side like any returned value.
    """
    return _fields(getattr(importlib.import_module(module), name)(*args, **kwargs))


def shares_memory(server: Any, module: str, name: str, *args: Any, **kwargs: Any) -> dict:
    """Run ``module.name(*args)``: ``{"result": its result, "shares": whether it shares memory
    with an ndarray or tensor argument}`` (a function that promises a new array must not hand
    back its input or a view of it: issue 36). Advisory, as every probe's verdict is."""
    import sys

    import numpy as np

    out = getattr(importlib.import_module(module), name)(*args, **kwargs)
    torch = sys.modules.get("torch")

    def shared(a: Any) -> bool:
        if isinstance(out, np.ndarray) and isinstance(a, np.ndarray):
            return bool(np.shares_memory(out, a))
        if (torch is not None and isinstance(out, torch.Tensor) and isinstance(a, torch.Tensor)
                and out.device.type != "meta" and a.device.type != "meta"):
            return out.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
        return False

    return {"result": out, "shares": any(shared(a) for a in (*args, *kwargs.values()))}


def same_object(server: Any, a: Any, b: Any) -> bool:
    """Whether two handles refer to one object (``merged()`` must build a new layer)."""
    return a is b




def library_calls(server: Any, module: str, name: str, watched: list, *args: Any,
                  **kwargs: Any) -> dict:
    """Run ``module.name(*args)`` recording calls of the ``watched`` library functions.

    ``watched`` holds dotted names (``"numpy.linalg.svd"``); a module not imported yet is
    skipped (nothing can call into it without importing it first, which this does not see: a
    name bound at import time with ``from … import`` escapes too, hence advisory).
    Returns ``{"result": …, "calls": [dotted names called, sorted]}``.
    """
    import sys

    calls: set[str] = set()
    patched: list[tuple[Any, str, Any]] = []

    def recorder(dotted: str, orig: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            calls.add(dotted)
            return orig(*a, **k)
        return wrapper

    for dotted in watched:
        mod_name, _, attr = str(dotted).rpartition(".")
        owner = sys.modules.get(mod_name)
        orig = getattr(owner, attr, None) if owner is not None else None
        if orig is None:
            continue
        try:
            setattr(owner, attr, recorder(dotted, orig))
        except (AttributeError, TypeError):
            continue
        patched.append((owner, attr, orig))
    try:
        out = getattr(importlib.import_module(module), name)(*args, **kwargs)
    finally:
        for owner, attr, orig in reversed(patched):
            setattr(owner, attr, orig)
    return {"result": out, "calls": sorted(calls)}


def peak_memory(server: Any, module: str, name: str, *args: Any, **kwargs: Any) -> dict:
    """Run ``module.name(*args, **kwargs)`` under :mod:`tracemalloc`: the peak it allocated.

    NumPy reports its array buffers to tracemalloc, so the peak counts every ndarray the call
    held at once (and Python objects), beyond what was allocated before it started; the inputs,
    already built, do not count. Memory that bypasses tracemalloc (torch tensors, C libraries'
    scratch) is not seen: advisory, it can only under-report.

    Returns:
        ``{"result": <the call's value>, "peak_bytes": <int>}``.
    """
    import tracemalloc

    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        out = getattr(importlib.import_module(module), name)(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"result": out, "peak_bytes": int(max(peak, 0))}


#: The classes whose ``run`` every Triton kernel launch goes through (``kernel[grid](...)``
#: calls ``run(*args, grid=grid, warmup=False)``; an autotuner's or a heuristic's launch ends
#: in its kernel's ``run``): the interpreter's and the compiler's, Triton 3.9.
TRITON_LAUNCHERS = (("triton.runtime.interpreter", "InterpretedFunction"),
                    ("triton.runtime.jit", "JITFunction"))

#: Where every load of an interpreted kernel ends, Triton 3.9: ``tl.load`` with or without a
#: mask, block pointers and tensor descriptors all call this builder method with the lanes'
#: mask (an unmasked load passes a mask of ones).
TRITON_LOADS = ("triton.runtime.interpreter", "InterpreterBuilder", "create_masked_load")


#: ATen ops that do the maths a kernel should: matrix products (``@``, ``einsum`` and
#: ``matmul`` dispatch to these), exponentials, softmax and log-sum-exp, and PyTorch's fused
#: attention. A launcher that only allocates, reshapes, casts or scales its inputs dispatches
#: none of them; one that computes the answer with PyTorch beside a kernel (even a kernel that
#: loads every input and throws it away) cannot avoid them. Names containing "softmax" and the
#: ``_scaled_dot_product_*`` family are matched by :func:`_is_torch_maths` as well.
TORCH_MATHS = frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "dot",
                         "vdot", "matmul", "tensordot", "einsum", "exp", "exp_", "exp2",
                         "exp2_", "expm1", "expm1_", "sigmoid", "sigmoid_", "logsumexp",
                         "scaled_dot_product_attention"})


def _is_torch_maths(op: str) -> bool:
    """Whether an ATen op's name (its overload packet) is one of :data:`TORCH_MATHS`."""
    return op in TORCH_MATHS or "softmax" in op or op.startswith("_scaled_dot_product")


def _patch(cls: type, name: str, wrap: Any, patched: list[tuple[type, str, Any]]) -> None:
    """Replace ``cls.name`` by ``wrap(original)`` and remember the original in ``patched``."""
    orig = cls.__dict__.get(name)
    if orig is not None:
        setattr(cls, name, wrap(orig))
        patched.append((cls, name, orig))


def _lanes(mask: Any) -> int:
    """The number of lanes a load's mask lets through (0 for a mask we cannot read)."""
    import numpy as np  # in the worker, where the interpreter has imported it already

    try:
        return int(np.count_nonzero(getattr(mask, "data", mask)))
    except Exception:  # never let counting change what the kernel does
        return 0


def triton_launches(server: Any, module: str, name: str, *args: Any, **kwargs: Any) -> dict:
    """Run ``module.name(*args, **kwargs)`` counting the Triton kernels it launches, the
    elements their interpreted programs load, and the maths PyTorch does beside them.

    For the duration of the call, the ``run`` method of both launch classes
    (:data:`TRITON_LAUNCHERS`) and the interpreter's load (:data:`TRITON_LOADS`) are wrapped by
    counters and put back afterwards, whatever the call did. A warm-up (``warmup=True``,
    compiling without running) is not a launch, nor is a ``@triton.jit`` function called from
    inside a kernel. ``loaded`` sums the unmasked lanes of every load of every program of
    every interpreted launch: a kernel that computes attention reads each element of q, k and
    v at least once, while PyTorch's maths beside an empty (or copying) kernel reads none of
    them (docs/design/threat-model.md, "Triton kernels"). Compiled kernels (CUDA) load
    through no Python code: ``loaded`` is then None, as it is when no interpreted kernel ran.
    Where triton is not installed nothing is patched, and the counts are 0 and None.
    ``torch_maths`` counts the ATen ops of :data:`TORCH_MATHS` dispatched during the call
    (:func:`_counted`'s ``TorchDispatchMode``; the interpreter itself dispatches only
    allocations and copies): a kernel that loads its inputs and throws them away, beside PyTorch's maths, loads enough
    but cannot hide the maths. Advisory (topic 8, docs/design/exercise-api.md): code that
    patches Triton or torch itself, or does the maths in NumPy, fools it.

    Returns:
        ``{"result": <the call's value>, "launches": <kernels launched>,
        "loaded": <elements the interpreted kernels loaded, or None>,
        "torch_maths": <ATen ops of TORCH_MATHS dispatched>}``.
    """
    launches, interpreted, loaded = [0], [0], [0]
    patched: list[tuple[type, str, Any]] = []

    def counting(orig: Any, interpreter: bool) -> Any:
        def run(self: Any, *a: Any, **k: Any) -> Any:
            if not k.get("warmup"):
                launches[0] += 1
                interpreted[0] += interpreter
            return orig(self, *a, **k)
        return run

    def counting_loads(orig: Any) -> Any:
        def create_masked_load(self: Any, ptrs: Any, mask: Any, *a: Any, **k: Any) -> Any:
            loaded[0] += _lanes(mask)
            return orig(self, ptrs, mask, *a, **k)
        return create_masked_load

    for mod_name, cls_name in TRITON_LAUNCHERS:
        try:
            cls = getattr(importlib.import_module(mod_name), cls_name)
        except (ImportError, AttributeError):
            continue
        _patch(cls, "run", lambda orig, i=cls_name == "InterpretedFunction": counting(orig, i),
               patched)
    mod_name, cls_name, method = TRITON_LOADS
    try:
        _patch(getattr(importlib.import_module(mod_name), cls_name), method, counting_loads,
               patched)
    except (ImportError, AttributeError):
        pass
    try:
        counted = _counted(getattr(importlib.import_module(module), name), args, kwargs)
    finally:
        for cls, attr, orig in reversed(patched):
            setattr(cls, attr, orig)
    maths = sum(n for op, n in counted["ops"].items() if _is_torch_maths(op))
    return {"result": counted["result"], "launches": launches[0],
            "loaded": loaded[0] if interpreted[0] else None, "torch_maths": maths}
