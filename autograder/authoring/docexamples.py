"""Every worked example of the exercises' docstrings, graded as a public test.

A stub's docstring carries examples (``>>>`` lines) that catch real mistakes: a ``logsumexp``
reducing over axis 0 fails its own example. :func:`add_docstring_tests` turns them into one
graded public test per exercise (``"<exercise>: the docstring's worked examples give the
results shown"``), generated when a public suite module is imported, so that `course check`,
`course grade`, the batch plan and the exports meet them like any other test.

How an example runs (docs/design/suite-strength.md, "Docstring examples"):

- The examples are read with :class:`doctest.DocTestParser` from the reference's docstrings
  (``solutions/<topic>.py``; in a student release, which has none, the pristine stub, whose
  docstrings are the same). One docstring is one namespace, as in :mod:`doctest`.
- Each line runs here, in the trusted process. The exercise under test is the submission's,
  called through the worker (``sub.<name>``); the topic's other names are the reference's, so
  an example that builds its input with ``softmax`` judges only the function it documents.
- Tensors cross as values (:func:`autograder.wire.codec.tensor_spec`); a ``torch.nn.Linear``
  built here is rebuilt in the worker with the same weights; an object of the submission
  (``LoRALinear(...)``) stays there, its attributes and methods reached through probes. An
  output that needs gradients (``FlashAttention.apply(q, ...)`` on leaves that require grad)
  backpropagates through the worker. torch's and NumPy's global generators are seeded (0) for
  each docstring and restored after, so the inputs, and the batch plan's calls, never vary.
- The shown output is read as a value (``array([0.09 , 0.245, 0.665])``, ``tensor(...)``,
  ``torch.Size([2, 3])``, ``(1, 3)``, ``True``) and compared with the result numerically:
  type, shape and dtype exactly, values with the dtype's tolerance
  (:data:`autograder.authoring.checks.TOLERANCES`), plus half a unit of torch's 4 printed
  decimals for a tensor. Never as text: ``0.69`` and ``0.6900000000000001`` are one value.
"""

from __future__ import annotations

import ast
import doctest
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder import catalogue, paths
from autograder.authoring.checks import compare, fail, tolerance
from autograder.authoring.example_bridge import (
    ExampleClass,
    ExampleObject,
    _torch,
    from_wire,
    to_wire,
)
from autograder.authoring.suite import SubmissionModule, describe, graded

#: Modules a docstring's examples may use (the stubs' own imports among them).
IMPORTABLE = ("numpy", "torch", "math", "typing", "collections", "dataclasses", "functools")
#: torch prints 4 decimals: a shown tensor value stands for anything within half a unit of them.
TORCH_PRINT_ATOL = 5e-5
#: The description every generated test carries (its name: "<topic>.<exercise>: ...").
DESCRIPTION = "the docstring's worked examples give the results shown"


#: Examples that run but are not graded: (docstring label, start of the ``>>>`` line) -> why.
#: Only for an example whose result is a docstring-only rule, beyond the exercise API, that
#: correct code written from the API fails (docs/design/suite-strength.md, "What a test may
#: demand"); tests/test_docstring_examples.py checks that each entry matches one example.
UNGRADED: dict[tuple[str, str], str] = {
    ("softmax", "np.round(softmax(np.array([1e308, -1e308]), temperature=1e308)"):
        "z - max itself overflowing at T = 1e308 is a docstring-only rule; the API's softmax "
        "(shift by the max, then divide) gives [1, 0] there, as two correct bank variants do",
    ("MultiHeadAttention.__init__", "mha.d_h"):
        "docs/design/exercise-api.md names no attribute of the class: a correct one may call its "
        "head width d_head or keep none (the attribute test was dropped for that reason)",
}


#: Exercises whose docstring examples an answer that computes nothing passes (graded, but
#: marked ``trivial``: they count only beside a passed test of the exercise that got a result
#: back, grading-contract.md §6), found by tests/test_no_computation.py: exercise -> why.
TRIVIAL: dict[str, str] = {
    "qk_norm": "the example checks that every vector has RMS 1, which an all-ones answer of "
               "the right shapes has too",
}


def graded_example(label: str, example: doctest.Example) -> bool:
    """Whether ``example`` of the docstring ``label`` is graded (not in :data:`UNGRADED`)."""
    source = example.source.strip()
    return not any(label == lab and source.startswith(start) for lab, start in UNGRADED)


@dataclass(frozen=True)
class Block:
    """The examples of one docstring (one namespace), labelled ``"softmax"`` or
    ``"LoRALinear.forward"``."""

    label: str
    examples: tuple[doctest.Example, ...]
    #: the exercise is a class (its name then builds an object in the worker)
    is_class: bool = False


def source_of(topic: str) -> str:
    """The text whose docstrings hold ``topic``'s examples: the reference, or in a student
    release (no ``solutions/``) the pristine stub, whose docstrings are the same.

    Raises:
        FileNotFoundError: neither is installed.
    """
    for path in (paths.SOLUTIONS / f"{topic}.py",
                 paths.PACKAGE_DIR / "pristine" / f"{topic}.py",
                 paths.EXERCISES / f"{topic}.py"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"no source of {topic} to read its docstring examples from")


def blocks_of(topic: str, source: str | None = None) -> dict[str, list[Block]]:
    """exercise name -> its docstrings' examples, in source order; a class exercise holds its
    own docstring's and each method's. Exercises without examples are left out."""
    tree = ast.parse(source if source is not None else source_of(topic))
    names = {e.name for e in catalogue.get_topic(topic).exercises}
    parser = doctest.DocTestParser()
    out: dict[str, list[Block]] = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name not in names:
            continue
        nodes = [node] + ([n for n in node.body if isinstance(n, ast.FunctionDef)]
                          if isinstance(node, ast.ClassDef) else [])
        for n in nodes:
            doc = ast.get_docstring(n, clean=True)
            examples = tuple(parser.get_examples(doc or ""))
            if examples:
                label = node.name if n is node else f"{node.name}.{n.name}"
                out.setdefault(node.name, []).append(
                    Block(label, examples, isinstance(node, ast.ClassDef)))
    return out


def imports_of(source: str) -> dict[str, Any]:
    """The module's own top-level imports of :data:`IMPORTABLE` modules, run here (the
    examples see the names the stub imports: ``np``, ``torch``, ``nn`` …)."""
    ns: dict[str, Any] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
        else:
            continue
        if all(m.split(".")[0] in IMPORTABLE for m in mods):
            exec(compile(ast.Module([node], []), "<imports>", "exec"), ns)  # noqa: S102 - our own source
    ns.pop("__builtins__", None)
    ns.pop("annotations", None)
    return ns


# ------------------------------------------------------------------ reading the shown output

@dataclass(frozen=True)
class Named:
    """A shown value written as a constructor (``Matmul(name='scores', ...)``): its fields."""

    type: str
    fields: dict


class _WantNames(dict):
    """Names in a shown output: NumPy's and torch's reprs, else a :class:`Named` maker."""

    def __missing__(self, key: str) -> Any:
        return lambda *a, **k: Named(key, dict(k))


def _array(data: Any, dtype: Any = None) -> np.ndarray:
    return np.array(data, dtype=dtype)


def _tensor(data: Any, dtype: Any = None, **_: Any) -> Any:
    return _torch().tensor(data, dtype=dtype)


def read_want(want: str) -> Any:
    """The value an example's shown output stands for (its repr read back)."""
    torch = _torch()
    text = "\n".join(ln for ln in want.splitlines() if ln.strip() != "<BLANKLINE>").strip()
    names = _WantNames(array=_array, tensor=_tensor, inf=np.inf, nan=np.nan, torch=torch,
                       device=torch.device, True_=True)
    for dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "bool_", "complex64", "complex128"):
        names[dt] = getattr(np, dt)
    return eval(text, {"__builtins__": {}}, names)


# ------------------------------------------------------------------ comparing

def mismatch(got: Any, want: Any) -> str | None:
    """None when ``got`` is the value ``want`` shows (see the module's docstring), else why."""
    torch = _torch()
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"expected ndarray {want.shape} {want.dtype}, got {describe(got)}"
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"expected ndarray {want.shape} {want.dtype}, got {got.shape} {got.dtype}"
        return compare(got, want, *tolerance(str(want.dtype)))
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"expected a tensor {tuple(want.shape)} {want.dtype}, got {describe(got)}"
        if got.shape != want.shape or got.dtype != want.dtype:
            return (f"expected a tensor {tuple(want.shape)} {want.dtype}, got "
                    f"{tuple(got.shape)} {got.dtype}")
        dtype = str(want.dtype).removeprefix("torch.")
        rtol, atol = tolerance(dtype)
        atol += TORCH_PRINT_ATOL if want.is_floating_point() else 0.0
        return compare(got.detach().float().numpy() if got.dtype == torch.bfloat16
                       else got.detach().numpy(), want.float().numpy()
                       if want.dtype == torch.bfloat16 else want.numpy(), rtol, atol)
    if isinstance(want, bool):
        ok = isinstance(got, (bool, np.bool_)) and bool(got) == want
        return None if ok else f"expected {want!r}, got {_show(got)}"
    if isinstance(want, int):
        ok = isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_)) \
            and int(got) == want
        return None if ok else f"expected {want!r}, got {_show(got)}"
    if isinstance(want, float):
        if not isinstance(got, (int, float, np.integer, np.floating)) or isinstance(got, bool):
            return f"expected the float {want!r}, got {_show(got)}"
        return compare(np.array(float(got)), np.array(want), *tolerance("float64"))
    if isinstance(want, Named):
        fields = getattr(type(got), "_fields", None)
        if fields is None or type(got).__name__ != want.type:
            return f"expected a {want.type}, got {_show(got)}"
        for key, value in want.fields.items():
            why = mismatch(getattr(got, key, None), value)
            if why:
                return f"{want.type}.{key}: {why}"
        return None
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"expected {type(want).__name__} of length {len(want)}, got {_show(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            why = mismatch(g, w)
            if why:
                return f"item {i}: {why}"
        return None
    return None if got == want else f"expected {want!r}, got {_show(got)}"


def _show(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 200 else describe(x)


# ------------------------------------------------------------------ running

def run_block(block: Block, sub: SubmissionModule, ref: Any, topic: str, exercise: str,
              imports: dict[str, Any]) -> None:
    """Run one docstring's examples against the submission; a failure names the line.

    Raises:
        autograder.authoring.checks.Failure: a result differs from the shown one, or the
            example could not run on a returned value.
        SubmissionFault: the submission's code raised or failed (as any other test shows it).
    """
    import torch

    names = {e.name for e in catalogue.get_topic(topic).exercises}
    ns: dict[str, Any] = dict(imports)
    for name in names - {exercise}:
        ns[name] = _RefName(ref, name)
    ns[exercise] = (ExampleClass(exercise, sub) if block.is_class
                    else _own_function(sub, topic, exercise))
    with torch.random.fork_rng(devices=[]):
        state = np.random.get_state()
        torch.manual_seed(0)
        np.random.seed(0)
        try:
            for ex in block.examples:
                if graded_example(block.label, ex):
                    _run_example(ex, ns, sub, block.label)
        finally:
            np.random.set_state(state)


def _own_function(sub: SubmissionModule, topic: str, name: str) -> Callable[..., Any]:
    """The exercise under test, called in the worker; NamedTuples come back with their fields
    (:func:`autograder.sandbox.probes.with_fields`)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        out = sub.probe("with_fields", topic, name, *to_wire(list(args), sub),
                        **to_wire(kwargs, sub))
        return from_wire(out, sub)

    call.__name__ = name
    return call


class _RefName:
    """Another exercise of the topic, taken from the reference (looked up when used)."""

    def __init__(self, ref: Any, name: str) -> None:
        self._ref, self._name = ref, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._ref, self._name)(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(getattr(self._ref, self._name), attr)


def _run_example(ex: doctest.Example, ns: dict[str, Any], sub: SubmissionModule,
                 label: str) -> None:
    from autograder.driver.errors import StudentException, SubmissionFault

    line = ex.source.strip().splitlines()
    shown = line[0] + (" …" if len(line) > 1 else "")
    where = f"docstring example of {label}: >>> {shown}"
    try:
        tree = ast.parse(ex.source, mode="exec")
        is_expr = len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
        if is_expr:
            got = eval(compile(ast.Expression(tree.body[0].value), "<example>", "eval"), ns)
        else:
            exec(compile(tree, "<example>", "exec"), ns)
            got = None
        for value in list(ns.values()):
            if isinstance(value, ExampleObject):
                value.write_back()
    except StudentException as exc:
        # Which example raised, after the sandbox's own words (feedback reads those first:
        # a stub's NotImplementedError still folds into one "not written yet" line).
        exc.args = (f"{exc.args[0] if exc.args else exc}\n  in the {where}",)
        raise
    except SubmissionFault:
        raise
    except Exception as exc:  # noqa: BLE001 - the example tripped over a returned value
        fail(f"{where}\n  could not run on your result: {type(exc).__name__}: {exc}")
    want = ex.want.strip()
    if not want:
        return
    why = mismatch(got, read_want(want))
    if why:
        fail(f"{where}\n  expected {want if len(want) < 300 else '(see the docstring)'}\n"
             f"  got {_show(got)}\n  ({why})")


def docstring_test(topic: str, exercise: str, blocks: list[Block],
                   imports: dict[str, Any]) -> Callable:
    """The graded public test running ``exercise``'s docstring examples."""
    lines = sum(len(b.examples) for b in blocks)

    def test(sub, ref):
        for block in blocks:
            run_block(block, sub, ref, topic, exercise, imports)

    test.__name__ = f"test_docstring_examples_{exercise}"
    test.__qualname__ = test.__name__
    test.__doc__ = f"The {lines} docstring example lines of {exercise}, run as shown."
    hint = ("Run your function on the example's inputs in your docstring and compare with the "
            "output printed under it.")
    return graded(exercise, DESCRIPTION, hint=hint, trivial=exercise in TRIVIAL)(test)


def add_docstring_tests(module_globals: dict[str, Any]) -> list[str]:
    """Add one docstring-examples test per exercise with examples to a public suite module
    (``add_docstring_tests(globals())`` at its end); the names added.

    Raises:
        FileNotFoundError: no source of the topic is installed (:func:`source_of`).
    """
    topic = module_globals["TOPIC"]
    source = source_of(topic)
    imports = imports_of(source)
    added = []
    for exercise, blocks in blocks_of(topic, source).items():
        fn = docstring_test(topic, exercise, blocks, imports)
        if fn.__name__ in module_globals:
            raise ValueError(f"{topic}: {fn.__name__} is already defined")
        module_globals[fn.__name__] = fn
        fn.__module__ = module_globals.get("__name__", fn.__module__)
        added.append(fn.__name__)
    return added


__all__ = [
    "DESCRIPTION",
    "add_docstring_tests",
    "blocks_of",
    "mismatch",
    "read_want",
    "run_block",
    "source_of",
]
