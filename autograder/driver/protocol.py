"""The request/reply protocol between the grader and a worker, above the frames and the codec
(docs/design/wire-format.md): what a request says, what a recorded call keeps, and the ONE reply
interpreter, which turns a worker's reply into a value or raises the right
:class:`~autograder.driver.errors.SubmissionFault`.

Both the sandbox's :class:`~autograder.driver.session.Session` and the nbgrader adapter (the
suites run in a notebook kernel) interpret replies here, so a test sees the same values and the
same messages either way. Pure functions: nothing here opens a socket or starts a process, so
the notebook kernel may import it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.wire import codec
from autograder.driver.errors import HIDDEN, BadResult, CallTimeout, StudentException


@dataclass(frozen=True)
class Call:
    """One request as a test made it: the exact frame, and the reply the reference got.

    ``frame`` is the request as sent (u64 length + body), ``reply`` the reply's body, ``where``
    the call as feedback names it, ``key`` ``"module.name"`` (a timeout stops further calls of
    it), ``timeout`` the call's own limit in seconds (``None``: the session's).
    """

    frame: bytes
    reply: bytes
    where: str
    key: str  # "module.name": a timeout stops further calls of it
    timeout: float | None = None


def where_of(module: str, name: str, op: str = "call") -> str:
    """How feedback names a call: ``"module.name"``, with `` (method)`` for a method call."""
    return f"{module}.{name}" if op != "method" else f"{module}.{name} (method)"


def request(module: str, name: str, args: tuple = (), kwargs: dict | None = None, *,
            keep: bool = False, op: str = "call", handle: Any = None) -> dict:
    """The request for ``module.name(*args, **kwargs)`` (or a method/probe/lib call, by ``op``).

    ``keep``: the worker holds the result and answers a handle; ``handle``: the object a
    ``method`` call is made on. Key order is fixed: recorded plans compare frames byte for byte.
    """
    req = {"op": op, "module": module, "name": name, "args": list(args),
           "kwargs": dict(kwargs or {}), "keep": keep}
    if handle is not None:
        req["handle"] = handle
    return req


def unreadable(where: str, exc: ValueError) -> BadResult:
    """The fault of a reply to ``where`` that is not in the wire format (``exc``: the frame's
    or the codec's error, whose fixed text never quotes the frame)."""
    return BadResult(f"{where} returned something that cannot be graded: {exc}")


def call_timeout(where: str, seconds: float) -> CallTimeout:
    """The fault of a call ``where`` that did not return within ``seconds``."""
    return CallTimeout(f"{where} did not return within {seconds:g} s "
                       "(an infinite loop, or far too slow)")


def barred(where: str, fault: CallTimeout) -> str:
    """What a later call of a function that timed out (``fault``) says instead of running."""
    return f"{where}: not run again after an earlier call timed out ({fault})"


# ---------------------------------------------------------------------------- closed type names


#: Packages whose class names a hidden test's feedback may quote (see :func:`closed_type`).
KNOWN_PACKAGES = ("builtins", "numpy", "torch", "collections", "fractions", "decimal",
                  "datetime", "types", "functools", "itertools", "pathlib", "re", "io")


def closed_type(name: str) -> str | None:
    """``name`` if it is the qualified name of a real class of a known package, else None.

    Type names in a reply (``Handle.type``, ``Unsupported.type``) are the worker's, so student
    code picks them: a class made by ``type(f"{secret}", (), {})`` would spell a hidden input in
    a hidden test's feedback. The name is looked up in the trusted process, in modules it has
    already imported (nothing is imported for it), and must name that very class.

    Args:
        name: ``"module.Qualname"`` as the worker's encoder writes it (``builtins.set``).

    Returns:
        ``name`` unchanged when it names such a class; ``None`` for anything else.
    """
    if not isinstance(name, str) or len(name) > 200 or not re.fullmatch(r"[\w.]+", name):
        return None
    parts = name.split(".")
    if parts[0] not in KNOWN_PACKAGES:
        return None
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        obj: Any = module
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        # The longest imported module prefix decides: the rest must be that class's own name.
        if isinstance(obj, type) and f"{obj.__module__}.{obj.__qualname__}" == name:
            return name
        return None
    return None


#: What a hidden test says of a returned type that is not a known library's class.
OWN_TYPE = "<the submission's own class>"

#: Unsupported values the worker's encoder describes in words of its own (codec._Encoder).
_FIXED_UNSUPPORTED = frozenset({"dict with non-str keys", "a structure nested more than 64 deep"})


def _closed_type_name(name: str, unsupported: bool) -> str:
    if unsupported and name in _FIXED_UNSUPPORTED:
        return name
    if unsupported and name.startswith(("ndarray of dtype ", "unencodable")):
        # A structured dtype's field names, an encoder's exception text: the student's words.
        return "ndarray of a dtype that may not cross" if name.startswith("nd") else (
            "a value that could not be encoded")
    return closed_type(name) or OWN_TYPE


def closed_types(value: Any) -> Any:
    """A reply with every type name the worker chose replaced by :data:`OWN_TYPE`, unless it
    names a real class of a known library (:func:`closed_type`). For hidden tests: their
    feedback quotes returned types (``describe``), and a class made by ``type(secret, …)``
    would spell a hidden input. Containers are rebuilt; other values are returned as they are.
    """
    if isinstance(value, codec.Handle):
        return codec.Handle(id=value.id, type=_closed_type_name(value.type, False))
    if isinstance(value, codec.Unsupported):
        return codec.Unsupported(type=_closed_type_name(value.type, True))
    if type(value) is list:
        return [closed_types(v) for v in value]
    if type(value) is dict:
        return {k: closed_types(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------- the reply interpreter


def interpret_reply(body: bytes, where: str, *, hidden: bool | None = None,
                    scrub: Callable[[str], str] | None = None,
                    distrust: Callable[[], None] | None = None) -> Any:
    """The value a worker's reply body carries, or the fault it reports.

    A reply is ``{"ok": value}`` or ``{"exc": RemoteException}`` (docs/design/wire-format.md).

    Args:
        body: the reply frame's body (after the u64 length).
        where: the call as feedback names it (:func:`where_of`).
        hidden: whether the reply may reach a hidden test's feedback (default: :data:`HIDDEN`);
            type names the worker chose are then closed (:func:`closed_types`).
        scrub: applied to a student exception's message and traceback (the worker's random
            folder names: results must be byte-identical run to run).
        distrust: called before a malformed reply is reported: the worker that sent it is not
            to be trusted further (the session kills it).

    Raises:
        StudentException: the call raised in student code.
        BadResult: a body that does not decode, is not a one-key reply, or a result over
            ``codec.MAX_FRAME`` (the worker refused to send it).
    """
    try:
        reply = codec.decode(body)
    except codec.DecodeError as exc:
        if distrust is not None:
            distrust()
        raise unreadable(where, exc) from None
    if not isinstance(reply, dict) or len(reply) != 1:
        if distrust is not None:
            distrust()
        raise BadResult(f"{where}: malformed reply from the worker")
    if "exc" in reply and isinstance(reply["exc"], codec.RemoteException):
        remote = reply["exc"]
        if scrub is not None:
            remote.message, remote.traceback = scrub(remote.message), scrub(remote.traceback)
        raise StudentException(remote, where)
    value = reply.get("ok")
    if isinstance(value, dict) and set(value) == {"__too_large__"}:
        raise BadResult(f"{where} returned a result over {codec.MAX_FRAME >> 20} MiB")
    if hidden is None:
        hidden = HIDDEN.get()
    return closed_types(value) if hidden else value
