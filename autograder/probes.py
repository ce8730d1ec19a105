"""Trusted helpers that run *inside* the worker, for checks that must watch code run.

They return plain data only. Because they run in the student's process they can be forged by a
determined cheater: whatever they feed is advisory (INTERFACE.md threat model, at most 10 % of a
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
    return getattr(obj, name)


def load_state(server: Any, mod: Any, state: dict) -> None:
    """Copy trusted values into a module's parameters (by name), without grad."""
    import torch

    with torch.no_grad():
        params = dict(mod.named_parameters())
        for name, value in state.items():
            params[name].copy_(value)


def is_instance(server: Any, obj: Any, qualname: str) -> bool:
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
