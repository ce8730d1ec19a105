"""What a suite module sees: the ``graded`` decorator and the ``sub``/``ref`` objects.

A suite module (``autograder/suites/public/ex01_vectors.py`` and its hidden twin) is an ordinary
pytest module: ``TOPIC = "ex01_vectors"`` and functions ``test_…(sub, ref)`` decorated with
:func:`graded`. ``sub`` proxies the submission's module through the sandbox (``sub.one_hot(…)``
runs in the worker and returns plain data); ``ref`` is the reference solution, imported in the
trusted process. `course grade`, `course check` and plain pytest all drive the same functions.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, settings

from autograder.wire import codec
from autograder.driver.errors import HIDDEN, StudentException, SubmissionFault, WorkerDied
from autograder.driver.session import Session

# docs/design/interface.md, determinism: derandomised, no database, no deadline, no blob. Shrinking
# is off: hidden tests never show the input, so a minimal one buys nothing but worker calls.
# 10 examples, not 25: the mutation run and the banks lost nothing by it, and a grading made
# 30 % fewer calls (docs/design/suite-strength.md, "What a test costs").
settings.register_profile(
    "grading", derandomize=True, database=None, deadline=None, print_blob=False,
    max_examples=10, phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck))
settings.load_profile("grading")


def _no_local_constants() -> None:
    """Stop Hypothesis from mixing constants of "local" modules into generated data.

    Recent Hypothesis harvests literals from every non-site-packages module imported so far
    (our solutions and hidden suites included), caches them under ``.hypothesis/`` in the working
    directory, and draws from them: that writes hidden constants to disk and makes the generated
    inputs depend on import order, hence on which submission was graded first.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout
        return
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        providers._get_local_constants = providers.Constants


_no_local_constants()


def _memoise_function_digest() -> None:
    """Hash each test's source once, not at every run.

    Derandomised Hypothesis seeds each run from a digest of the test's source, which it
    tokenises again every time: a fifth of the grader's time on a partly right submission.
    The digest of a function never changes, so it is cached (keyed by the function itself).
    """
    try:
        from hypothesis import core
    except ImportError:  # pragma: no cover
        return
    digest = getattr(core, "function_digest", None)
    if digest is None or getattr(digest, "__memoised__", False):
        return
    cache: dict[int, tuple[object, bytes]] = {}

    def memoised(function: object) -> bytes:
        hit = cache.get(id(function))
        if hit is None or hit[0] is not function:
            hit = cache[id(function)] = (function, digest(function))
        return hit[1]

    memoised.__memoised__ = True
    core.function_digest = memoised


_memoise_function_digest()

# HIDDEN (True while a hidden test runs) lives in the sandbox, whose exceptions consult it.


@dataclass(frozen=True)
class TestMeta:
    exercise: str
    description: str
    advisory: bool = False
    gpu: bool = False
    #: shown with this test's failure instead of the exercise's first hint ("" : that hint)
    hint: str = ""
    #: a constant or an empty answer passes it (see :func:`graded`)
    trivial: bool = False


def graded(exercise: str, description: str, *, advisory: bool = False,
           gpu: bool = False, hint: str = "", trivial: bool = False) -> Callable:
    """Mark a suite function as a graded test of ``exercise`` (a catalogue name).

    Its name becomes ``<topic>.<exercise>: <description>``. ``advisory`` marks checks that watch
    code run inside the worker (meta device, op counts): forgeable, so worth little (≤ 10 %).
    ``gpu`` tests need CUDA, carry no points, and are skipped with a reason without it.
    ``hint`` is what `course check`, `course watch` and feedback.md show when this test fails,
    instead of the exercise's first hint (for a test whose failure that hint does not explain).
    ``trivial`` marks a test that an answer needing no computation passes: a constant (always
    ``False``, ``inf``, ``0.0``) or the empty or unchanged input of a degenerate case. Like a
    test passed by raising alone, it counts only once a test of the same exercise that is
    neither passes on a returned value (:func:`autograder.grading.runner.gate_error_rules`; red
    team, third round).

    Raises:
        ValueError: ``exercise`` holds ": ", ``description`` is empty, or ``hint`` is not a
            string or is only whitespace.
    """
    if ": " in exercise or not description:
        raise ValueError("graded(exercise, description): exercise has no ': ', description given")
    if not isinstance(hint, str) or (hint and not hint.strip()):
        raise ValueError(f"graded({exercise!r}, …, hint=…): the hint must be a non-blank string, "
                         f"not {hint!r}")

    def deco(fn: Callable) -> Callable:
        check_graded_signature(fn)
        fn.__graded__ = TestMeta(exercise, description, advisory, gpu, hint.strip(), trivial)
        return fn

    return deco


GRADED_PARAMETERS = ("sub", "ref")


def check_graded_signature(fn: Callable) -> None:
    """A graded test takes ``(sub, ref)`` and nothing else, and carries no pytest marks.

    `course grade` calls ``fn(sub, ref)`` itself (autograder.grading.runner.run_test), with no
    pytest fixtures and no ``parametrize``: a test that asked for either would run under plain
    pytest and break, or silently run once, under the grader. Hypothesis's ``@given`` is fine
    (its wrapper takes ``(sub, ref)``); put ``@graded`` above it.

    Raises:
        TypeError: the parameters are not exactly ``(sub, ref)``, or the function has marks.
    """
    name = getattr(fn, "__qualname__", repr(fn))
    params = tuple(inspect.signature(fn).parameters)
    if params != GRADED_PARAMETERS:
        raise TypeError(f"graded test {name} takes {params}: a graded test takes exactly "
                        f"(sub, ref) (no fixtures; put @graded above @given)")
    if getattr(fn, "pytestmark", None):
        raise TypeError(f"graded test {name} has pytest marks "
                        f"({', '.join(m.name for m in fn.pytestmark)}): the grader ignores "
                        f"them; loop inside the test instead of parametrize")


class RemoteObject:
    """An object living in the worker (a LoRALinear, an nn.Linear, …); methods run there."""

    def __init__(self, session: Session, module: str, handle: codec.Handle, label: str) -> None:
        self._session, self._module, self._handle, self._label = session, module, handle, label
        # The worker that made the object (a pipelined reply may predate a restart).
        self._generation = session.source_generation

    @property
    def type_name(self) -> str:
        return self._handle.type

    def _check_alive(self) -> None:
        if self._session.generation != self._generation:
            self._session.refusals += 1
            raise WorkerDied(f"{self._label} was lost when the worker restarted after a failure")

    def call(self, method: str, *args: Any, keep: bool = False, **kwargs: Any) -> Any:
        self._check_alive()
        out = self._session.call(self._module, f"{self._label}.{method}",
                                 _wire(args), _wire(kwargs), keep=keep, op="method",
                                 handle={"id": self._handle.id})
        return self._wrap(out, f"{self._label}.{method}()") if keep else out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.call("__call__", *args, **kwargs)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *a, **k: self.call(method, *a, **k)

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._check_alive()
        try:
            return self._session.call(self._module, name, (self._handle, *_wire(args)),
                                      _wire(kwargs), op="probe")
        except StudentException as exc:
            if name == "count_ops_method" and args and isinstance(args[0], str):
                # the object's method raised: named as a direct call names it
                raise StudentException(exc.remote, f"{self._module}.{self._label}.{args[0]}"
                                       ) from None
            raise

    def _wrap(self, out: Any, label: str) -> RemoteObject:
        if not isinstance(out, codec.Handle):
            raise SubmissionFault(f"{label}: expected an object, got {describe(out)}")
        return RemoteObject(self._session, self._module, out, label)

    def parameters(self) -> dict[str, codec.TensorData]:
        """name -> TensorData of the object's ``named_parameters()``."""
        return self.probe("named_parameters")

    def attribute(self, name: str) -> Any:
        return self.probe("attribute", name)


def _wire(x: Any) -> Any:
    """Trusted values on their way in: RemoteObjects travel as handles."""
    if isinstance(x, RemoteObject):
        x._check_alive()
        return x._handle
    if isinstance(x, (list, tuple)):
        return type(x)(_wire(v) for v in x)
    if isinstance(x, dict):
        return {k: _wire(v) for k, v in x.items()}
    return x


class SubmissionModule:
    """``sub`` in a test: the submission's topic module, called through the sandbox."""

    def __init__(self, session: Session, topic: str) -> None:
        self._session, self._topic = session, topic

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def remote(*args: Any, **kwargs: Any) -> Any:
            return self._session.call(self._topic, name, _wire(args), _wire(kwargs))

        remote.__name__ = name
        return remote

    def new(self, cls: str, *args: Any, **kwargs: Any) -> RemoteObject:
        """Instantiate the submission's class ``cls`` in the worker."""
        out = self._session.call(self._topic, cls, _wire(args), _wire(kwargs), keep=True)
        if not isinstance(out, codec.Handle):
            raise SubmissionFault(f"{self._topic}.{cls}(...) did not give an object")
        return RemoteObject(self._session, self._topic, out, cls)

    def lib(self, qualname: str, *args: Any, **kwargs: Any) -> RemoteObject:
        """Build a library object in the worker, e.g. ``sub.lib("torch.nn.Linear", 8, 4)``."""
        out = self._session.call(self._topic, qualname, _wire(args), _wire(kwargs), keep=True,
                                 op="lib")
        return RemoteObject(self._session, self._topic, out, qualname.rsplit(".", 1)[-1])

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run a trusted probe (see :mod:`autograder.sandbox.probes`) in the worker. Advisory.

        When the student's code raises inside a probe that calls ``module.name`` (its first
        two arguments: ``count_ops``, ``peak_memory``, ``with_fields`` …), the failure names
        that function, as a direct call would, not the probe: feedback then folds a stub's
        tests into one "not written yet" line (the new-user review's feedback listed 85
        tests of five stubs one by one, each naming a probe the student never wrote).
        """
        try:
            return self._session.call(self._topic, name, _wire(args), _wire(kwargs),
                                      op="probe")
        except StudentException as exc:
            if len(args) >= 2 and args[0] == self._topic and isinstance(args[1], str):
                raise StudentException(exc.remote, f"{args[0]}.{args[1]}") from None
            raise


def describe(x: Any) -> str:
    """A short, value-free description of a returned value ('ndarray (3, 4) float32', …).

    In a hidden test (:data:`HIDDEN`) without its shape or length: those are numbers the
    submission chose, and could spell a hidden input. Type names, dtypes and devices come
    from closed sets (autograder.wire.codec checks them).
    """
    import numpy as np

    hidden = HIDDEN.get()
    if isinstance(x, np.ndarray):
        return f"ndarray of dtype {x.dtype}" if hidden else f"ndarray {tuple(x.shape)} {x.dtype}"
    if isinstance(x, codec.TensorData):
        return f"tensor {x.dtype} on {x.device}" if hidden else x.describe()
    if isinstance(x, codec.Unsupported):
        return f"an object of type {x.type} (not plain data)"
    if isinstance(x, codec.Handle):
        return f"an object of type {x.type}"
    if isinstance(x, (list, tuple)):
        return type(x).__name__ if hidden else f"{type(x).__name__} of length {len(x)}"
    return type(x).__name__ if x is not None else "None"


__all__ = ["graded", "SubmissionModule", "RemoteObject", "describe", "TestMeta",
           "SubmissionFault"]
