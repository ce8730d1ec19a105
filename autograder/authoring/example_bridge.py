"""How a docstring example's values cross into the worker and back (the examples' bridge).

The examples of :mod:`autograder.authoring.docexamples` run in the trusted process; the
exercise they document runs in the worker. Tensors cross as values
(:func:`autograder.wire.codec.tensor_spec`); a ``torch.nn.Linear`` built here is rebuilt
in the worker with the same weights; an object of the submission stays there
(:class:`ExampleObject`: attributes through the ``attribute`` probe, methods called there,
parameters lent out and written back when an example changes them in place); an output whose
inputs require grad backpropagates through the worker (:func:`through_worker`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.authoring.suite import RemoteObject, SubmissionModule
from autograder.wire import codec


def _torch() -> Any:
    import torch

    return torch


def to_wire(x: Any, sub: SubmissionModule) -> Any:
    """An example's value as an argument of a call into the worker."""
    torch = _torch()
    if isinstance(x, ExampleObject):
        return x._remote
    if isinstance(x, torch.nn.Linear):
        return _remote_linear(x, sub)
    if isinstance(x, torch.Tensor):
        dtype = str(x.dtype).removeprefix("torch.")
        if x.device.type == "meta":
            return codec.tensor_spec(np.broadcast_to(np.empty(()), tuple(x.shape)),
                                     dtype, "meta")
        t = x.detach().cpu()
        values = (t.float() if t.dtype == torch.bfloat16 else t).numpy()
        return codec.tensor_spec(values, dtype, requires_grad=bool(x.requires_grad))
    if isinstance(x, (list, tuple)):
        return type(x)(to_wire(v, sub) for v in x)
    if isinstance(x, dict):
        return {k: to_wire(v, sub) for k, v in x.items()}
    return x


def _remote_linear(layer: Any, sub: SubmissionModule) -> RemoteObject:
    """A ``torch.nn.Linear`` built here, rebuilt in the worker with the same weights."""
    remote = sub.lib("torch.nn.Linear", layer.in_features, layer.out_features,
                     bias=layer.bias is not None)
    if layer.weight.dtype == _torch().float64:
        remote = remote.call("double", keep=True)
    remote.probe("load_state", {n: to_wire(p.detach(), sub) for n, p in layer.named_parameters()})
    return remote


def from_wire(x: Any, sub: SubmissionModule) -> Any:
    """A returned value as the example's code expects it: tensors as torch tensors, a
    NamedTuple (as :func:`autograder.sandbox.probes.with_fields` sends it) as a namedtuple,
    an object of the worker as an :class:`ExampleObject`."""
    import collections

    torch = _torch()
    if isinstance(x, codec.TensorData):
        dtype = getattr(torch, x.dtype)
        if x.values is None:
            t = torch.empty(x.shape, dtype=dtype, device="meta")
        else:
            t = torch.from_numpy(np.array(x.values)).to(dtype)
        if x.requires_grad and t.is_floating_point():
            t.requires_grad_(True)
        return t
    if isinstance(x, codec.Handle):
        raise TypeError("an object handle needs its session")  # wrapped by the caller
    if isinstance(x, dict) and set(x) == {"type", "fields"} and isinstance(x["fields"], dict):
        cls = collections.namedtuple(str(x["type"]), list(x["fields"]))
        return cls(*(from_wire(v, sub) for v in x["fields"].values()))
    if isinstance(x, list):
        return [from_wire(v, sub) for v in x]
    if isinstance(x, dict):
        return {k: from_wire(v, sub) for k, v in x.items()}
    return x


class ExampleObject:
    """An object of the submission (or one it returned) as an example's code uses it:
    attributes read through the ``attribute`` probe, methods called in the worker, parameters
    handed out as tensors here and written back when an example changes them in place."""

    def __init__(self, remote: RemoteObject, sub: SubmissionModule) -> None:
        self._remote, self._sub = remote, sub
        self._lent: dict[str, tuple[Any, Any]] = {}  # parameter name -> (tensor, as lent)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _remote_call(self._remote, "__call__", args, kwargs, self._sub)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._remote.attribute(name)
        if isinstance(value, (codec.Unsupported, codec.Handle)):
            return _Member(self, name)
        out = from_wire(value, self._sub)
        torch = _torch()
        if isinstance(out, torch.Tensor) and out.device.type != "meta":
            self._lent[name] = (out, out.detach().clone())
        return out

    def parameters(self) -> list[Any]:
        """The object's parameters as tensors here (copies: ``numel``, ``requires_grad``)."""
        return [from_wire(p, self._sub) for p in self._remote.parameters().values()]

    def named_parameters(self) -> list[tuple[str, Any]]:
        """(name, tensor) of the object's parameters, as :meth:`parameters` hands them out."""
        return [(n, from_wire(p, self._sub)) for n, p in self._remote.parameters().items()]

    def write_back(self) -> None:
        """Copy parameters lent out and changed in place (``lora.lora_B.normal_()``) back
        into the worker's object."""
        changed = {n: t for n, (t, was) in self._lent.items() if not _torch().equal(t, was)}
        if changed:
            params = self._remote.parameters()
            state = {n: to_wire(t.detach(), self._sub) for n, t in changed.items() if n in params}
            if state:
                self._remote.probe("load_state", state)
        self._lent = {n: (t, t.detach().clone()) for n, (t, _) in self._lent.items()}


class _Member:
    """``obj.name`` where the value is no plain data: a method, or an object (a submodule)."""

    def __init__(self, owner: ExampleObject, name: str) -> None:
        self._owner, self._name = owner, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _remote_call(self._owner._remote, self._name, args, kwargs, self._owner._sub)


def _remote_call(remote: RemoteObject, method: str, args: tuple, kwargs: dict,
                 sub: SubmissionModule) -> Any:
    """``remote.method(*args)`` in the worker; an object it returns stays there (called again
    with ``keep``: the methods examples call on objects, ``to``, ``merged``, are pure)."""
    wired_a, wired_k = to_wire(list(args), sub), to_wire(kwargs, sub)
    if method != "__call__" and not _is_method(remote, method):
        member = sub.lib("builtins.getattr", remote, method)  # a submodule: call it
        return _remote_call(member, "__call__", args, kwargs, sub)
    out = remote.call(method, *wired_a, **wired_k)
    if isinstance(out, (codec.Unsupported, codec.Handle)):
        kept = remote.call(method, *wired_a, keep=True, **wired_k)
        return ExampleObject(kept, sub)
    return from_wire(out, sub)


def _is_method(remote: RemoteObject, name: str) -> bool:
    value = remote.attribute(name)
    kind = value.type if isinstance(value, (codec.Unsupported, codec.Handle)) else ""
    return kind.rsplit(".", 1)[-1] in ("method", "builtin_function_or_method", "function",
                                       "method-wrapper", "MethodType")


class ExampleClass:
    """A class exercise of the submission (``LoRALinear``, ``FlashAttention``): calling it
    builds an object in the worker; ``FlashAttention.apply(...)`` calls there."""

    def __init__(self, name: str, sub: SubmissionModule) -> None:
        self._name, self._sub = name, sub

    def __call__(self, *args: Any, **kwargs: Any) -> ExampleObject:
        obj = self._sub.new(self._name, *to_wire(list(args), self._sub),
                            **to_wire(kwargs, self._sub))
        return ExampleObject(obj, self._sub)

    def __getattr__(self, attr: str) -> Callable[..., Any]:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return lambda *a, **k: _static_call(self._sub, f"{self._name}.{attr}", a, k)


def _static_call(sub: SubmissionModule, name: str, args: tuple, kwargs: dict) -> Any:
    """``Class.attr(*args)`` in the worker; a tensor result of inputs that require grad
    backpropagates through the worker (:func:`_through_worker`)."""
    torch = _torch()
    grad_in = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    if not grad_in:
        return from_wire(_plain_call(sub, name, args, kwargs), sub)
    leaves = {id(a): sub.lib("torch.as_tensor", to_wire(a, sub)) for a in grad_in}
    wired = [leaves[id(a)] if id(a) in leaves else to_wire(a, sub) for a in args]
    out = sub.new(name, *wired, **to_wire(kwargs, sub))
    value = from_wire(out.call("detach"), sub)
    return _through_worker().apply(out, [leaves[id(a)] for a in grad_in], sub, value, *grad_in)


def _plain_call(sub: SubmissionModule, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(sub, name)(*to_wire(list(args), sub), **to_wire(kwargs, sub))


@functools.cache
def _through_worker() -> Any:
    """The autograd node class (built once, when an example first needs it: torch is
    imported lazily)."""
    torch = _torch()

    class ThroughWorker(torch.autograd.Function):
        """The worker's output as a node of this process's graph: its backward sends dO to
        the worker's output and reads the leaves' gradients back."""

        @staticmethod
        def forward(ctx: Any, out: RemoteObject, leaves: list, sub: SubmissionModule,
                    value: Any, *inputs: Any) -> Any:
            ctx.remote = (out, leaves, sub)
            return value.detach().clone()

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            out, leaves, sub = ctx.remote
            out.call("backward", to_wire(grad, sub))
            grads = [leaf.attribute("grad") for leaf in leaves]
            return (None, None, None, None,
                    *(None if g is None else from_wire(g, sub) for g in grads))

    return ThroughWorker
