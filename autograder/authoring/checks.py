"""Assertions for suites: shape and dtype first, values second, one plain message each.

Every numeric comparison goes through :func:`compare` (Karpathy's ``cmp()`` idea): it reports the
largest absolute and relative error and the first bad index. Tolerances follow the result's dtype
(docs/design/interface.md: ``torch.testing.assert_close`` defaults against a float64 reference).
While a
hidden test runs (:data:`autograder.driver.errors.HIDDEN`), messages never show inputs or expected values.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from autograder.wire import codec
from autograder.driver.errors import StudentException
from autograder.authoring.suite import describe
from autograder.driver.errors import HIDDEN

#: (rtol, atol) by dtype name: torch.testing.assert_close's defaults.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}


def tolerance(dtype: str) -> tuple[float, float]:
    return TOLERANCES.get(str(dtype), (0.0, 0.0))


def _fmt_index(idx: tuple[int, ...]) -> str:
    """How NumPy indexes the entry: ``[0]``, ``[1, 2]``; a 0-d array has only ``[()]``."""
    return "[" + ", ".join(str(i) for i in idx) + "]" if idx else "[()]"


def compare(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str | None:
    """None if close (NaN where expected is NaN, same infinities), else a one-line diagnosis.

    In a hidden test (:data:`autograder.driver.errors.HIDDEN`) the diagnosis holds no number that the
    returned values chose (no count of bad entries, no index, no error size): a submission
    could otherwise spell a hidden input in its error. Only a kind from a closed set remains.
    """
    g = np.asarray(got)
    e = np.asarray(expected)
    if g.dtype.kind == "b" or e.dtype.kind == "b":
        bad = g != e
        if not bad.any():
            return None
        if HIDDEN.get():
            return "some entries differ"
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        n = int(bad.sum())
        return (f"{n} of {e.size} entries differ, first at index {_fmt_index(idx)}: "
                f"expected {e[idx].item()!r}, got {g[idx].item()!r}")
    g64 = g.astype(np.complex128 if g.dtype.kind == "c" else np.float64)
    e64 = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        both_nan = np.isnan(g64) & np.isnan(e64)
        same_inf = np.isinf(e64) & (g64 == e64)
        err = np.abs(g64 - e64)
        # An infinite expectation is met only by the same infinity: rtol·|inf| would let any
        # finite number through.
        ok = ((err <= atol + rtol * np.abs(e64)) & ~np.isinf(e64)) | both_nan | same_inf
    if ok.all():
        return None
    bad = ~ok
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    finite = np.isfinite(err) & bad
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # 1e300 / 1e-300
        rel = np.where(finite, err / np.maximum(np.abs(e64), 1e-300), 0.0)
    worst = float(err[finite].max()) if finite.any() else float("nan")
    worst_rel = float(rel[finite].max()) if finite.any() else float("nan")
    n = int(bad.sum())
    if np.isnan(g64[idx]):
        what = "NaN where a number was expected"
    elif np.isinf(g64[idx]) and not np.isinf(e64[idx]):
        what = "an infinity where a finite number was expected"
    elif np.isinf(e64[idx]):
        what = "a finite number (or the wrong infinity) where an infinity was expected"
    elif HIDDEN.get():
        what = "beyond the tolerance"
    else:
        what = f"max abs error {worst:.3g}, max rel error {worst_rel:.3g}"
    if HIDDEN.get():
        return f"entries off (rtol {rtol:g}, atol {atol:g}): {what}"
    return (f"{n} of {e.size} entries off (rtol {rtol:g}, atol {atol:g}): {what}; "
            f"first at index {_fmt_index(idx)}: expected {e[idx].item()!r}, "
            f"got {g[idx].item()!r}")


class Failure(AssertionError):
    """A failed check. ``hidden`` is the text a hidden test may show, when the check built it
    from the grader's words and closed sets only; without it a hidden test shows a fixed line
    (autograder.grading.runner), so a suite's own message can quote a returned value safely."""

    def __init__(self, message: str, hidden: str | None = None) -> None:
        super().__init__(message)
        self.hidden = hidden


def fail(message: str, hidden: str | None = None) -> None:
    """Fail the test with ``message``; ``hidden``: what a hidden test shows instead (see
    :class:`Failure`)."""
    raise Failure(message, hidden)


def _fail_checked(message: str) -> None:
    """Fail with a message this module built hidden-safe (no returned value in it when
    :data:`HIDDEN` is set): a hidden test shows it as it is."""
    raise Failure(message, message if HIDDEN.get() else None)


def expect_array(got: Any, expected: Any, *, dtype: str | None = None,
                 rtol: float | None = None, atol: float | None = None, what: str = "result") -> None:
    """``got`` must be an ndarray of ``expected``'s shape (and ``dtype``), close in value.

    ``expected`` is usually a float64 reference; ``dtype`` is the dtype the result must have
    (defaults to ``expected``'s), and sets the tolerance unless ``rtol``/``atol`` are given.
    """
    e = np.asarray(expected)
    want_dtype = str(dtype or e.dtype)
    if not isinstance(got, np.ndarray):
        _fail_checked(f"{what}: expected ndarray {tuple(e.shape)} {want_dtype}, "
                      f"got {describe(got)}")
    if got.shape != e.shape or str(got.dtype) != want_dtype:
        _fail_checked(f"{what}: expected {tuple(e.shape)} {want_dtype}, got "
                      f"{_shape_text(got.shape, e.shape)} {got.dtype}")
    d_rtol, d_atol = tolerance(want_dtype)
    problem = compare(got, e, d_rtol if rtol is None else rtol, d_atol if atol is None else atol)
    if problem:
        _fail_checked(f"{what}: {problem}")


def _shape_text(got: tuple, expected: tuple) -> str:
    """The returned shape as a message may say it: in a hidden test only whether it matches."""
    if not HIDDEN.get():
        return str(tuple(got))
    return str(tuple(expected)) if tuple(got) == tuple(expected) else "another shape"


def expect_tensor(got: Any, expected: Any, *, dtype: str, device: str = "cpu",
                  rtol: float | None = None, atol: float | None = None, what: str = "result") -> None:
    """``got`` must be a tensor of ``expected``'s shape, ``dtype`` and ``device``, close in value."""
    e = np.asarray(expected)
    if not isinstance(got, codec.TensorData):
        _fail_checked(f"{what}: expected tensor {tuple(e.shape)} {dtype} on {device}, "
                      f"got {describe(got)}")
    if got.shape != tuple(e.shape) or got.dtype != dtype or got.device != device:
        _fail_checked(f"{what}: expected tensor {tuple(e.shape)} {dtype} on {device}, got "
                      f"tensor {_shape_text(got.shape, e.shape)} {got.dtype} on {got.device}")
    if got.values is None:
        return  # meta: shape, dtype and device are all there is
    d_rtol, d_atol = tolerance(dtype)
    problem = compare(got.values, e, d_rtol if rtol is None else rtol,
                      d_atol if atol is None else atol)
    if problem:
        _fail_checked(f"{what}: {problem}")


def expect_float(got: Any, expected: float, *, rtol: float = 1e-7, atol: float = 1e-7,
                 what: str = "result") -> None:
    """A Python float (ints and NumPy scalars arrive as Python scalars) close to ``expected``."""
    if type(got) is int:
        got = float(got)
    if type(got) is not float:
        _fail_checked(f"{what}: expected a float, got {describe(got)}")
    problem = compare(np.array(got), np.array(float(expected)), rtol, atol)
    if problem:
        if HIDDEN.get():
            _fail_checked(f"{what}: {problem}")
        fail(f"{what}: off by {abs(got - expected):.3g}: expected {expected!r}, got {got!r}")


def expect_equal(got: Any, expected: Any, *, what: str = "result") -> None:
    """Exact equality of plain data (ints, bools, strings, nested lists), type included."""
    if type(got) is not type(expected) or got != expected:
        detail = "" if HIDDEN.get() else f": expected {expected!r}, got {got!r}"
        if type(got) is not type(expected):
            _fail_checked(f"{what}: expected a {type(expected).__name__}, "
                          f"got {describe(got)}{detail}")
        _fail_checked(f"{what}: wrong value{detail}")


def expect_raises(exc_name: str, fn: Callable[..., Any], *args: Any, what: str = "",
                  **kwargs: Any) -> StudentException:
    """Calling ``fn`` must raise ``exc_name`` (matched against the remote exception's MRO)."""
    label = what or "this input"
    try:
        out = fn(*args, **kwargs)
    except StudentException as exc:
        if exc.remote.is_a(exc_name):
            return exc
        # str(exc) is the sandbox's: in a hidden test, builtin names only (no message).
        _fail_checked(f"expected {exc_name} for {label}, but: {exc}")
    _fail_checked(f"expected {exc_name} for {label}, but it returned {describe(out)}")
    raise AssertionError("unreachable")


#: A needle written as a shape, ``str(tuple)``: ``(2, 3)``, ``(5,)``, ``()``.
_SHAPE = re.compile(r"\((?:\s*\d+\s*,)*(?:\s*\d+\s*)?\)")


def names(msg: str, needle: str) -> bool:
    """Whether ``msg`` names ``needle``: a value as its text; a shape (``str`` of a tuple of
    ints) in any spelling of its sizes in order: ``(2, 3, 4)``, ``torch.Size([2, 3, 4])``,
    ``[2, 3, 4]``, ``2x3x4`` or ``2 × 3 × 4`` (docs/design/exercise-api.md asks a message to name the offending
    shapes; it fixes no format, and torch's own is ``torch.Size([...])``)."""
    if needle in msg:
        return True
    if not _SHAPE.fullmatch(needle):
        return False
    dims = [int(d) for d in re.findall(r"\d+", needle)]
    if not dims:  # a 0-d input: "()" is not in the message; torch says "torch.Size([])"
        return "[]" in msg
    found = [int(d) for d in re.findall(r"\d+", msg)]
    return any(found[i:i + len(dims)] == dims for i in range(len(found) - len(dims) + 1))


def expect_message_names(exc: StudentException, *needles: str | tuple[str, ...]) -> None:
    """The error message should name what was wrong: each needle, a value or a shape, as
    :func:`names` reads it. A tuple needle is alternatives, any one of which will do: docs/design/exercise-api.md
    asks for "the offending shapes or values", so where a row states a rule as a value (a row
    length N), the message may name that value or the shape it came from."""
    msg = exc.remote.message
    if not msg.strip():
        _fail_checked("the ValueError has an empty message; say which shapes or values were "
                      "wrong")
    missing = [n if isinstance(n, str) else " or ".join(n) for n in needles
               if not any(names(msg, x) for x in ((n,) if isinstance(n, str) else n))]
    if missing:
        # The message is the student's text, which may quote a hidden test's inputs.
        says = (" (its text is not shown in a hidden test)" if HIDDEN.get()
                else f"; it says: {msg!r}")
        _fail_checked(f"the ValueError message should name {', '.join(missing)}{says}")


def both(sub: Any, ref: Any, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``(sub.name(*args, **kwargs), ref.name(*args, **kwargs))``: the submission's answer and
    the reference's to the same call, the submission's first (as a suite writes them), for a
    check that compares them: ``expect_array(*both(sub, ref, "one_hot", ids, 7), what=…)``.

    The arguments are evaluated once and passed to both, so they must be the same for both:
    a call that gives the submission a tensor spec and the reference an array is written out.

    Raises:
        whatever either call raises (the submission's :class:`StudentException` first).
    """
    return getattr(sub, name)(*args, **kwargs), getattr(ref, name)(*args, **kwargs)


def expect_rule(exc_name: str, fn: Callable[..., Any], *args: Any, what: str = "",
                naming: tuple[str | tuple[str, ...], ...] = (), **kwargs: Any
                ) -> StudentException:
    """An error rule: calling ``fn(*args, **kwargs)`` must raise ``exc_name``
    (:func:`expect_raises`, ``what`` naming the input) with a message that names each of
    ``naming`` (:func:`expect_message_names`; none: a message that is not empty). The
    raised exception is returned.

    Raises:
        AssertionError: (a check failure) another exception, none, or a message that does not
            name what was wrong.
    """
    exc = expect_raises(exc_name, fn, *args, what=what, **kwargs)
    expect_message_names(exc, *naming)
    return exc
