"""The package's shape: no import cycle, and the judging side never imports the worker.

Issue 12: ``plan`` and ``runner``, ``cli`` and ``demo`` imported each other; the trusted side
took ``Limits`` from ``worker.py``, the module that runs student code. Imports are read from
the source (lazy ones inside functions too), so a cycle cannot hide behind a deferred import.
"""

from __future__ import annotations

import ast

from tests.helpers import ROOT

PACKAGE = ROOT / "autograder"
#: Modules that run inside the worker or the zygote (the untrusted side of the boundary).
UNTRUSTED = {"worker", "zygote", "probes"}
#: Trusted modules allowed to import an untrusted one, and why.
ALLOWED = {
    # Runs the worker's dispatcher inside the student's own kernel: nbgrader's model, which the
    # threat model calls out (grading nbgrader's notebooks with `course grade` is tamper-proof).
    ("nbgrader_adapter", "worker"),
    # The sandbox starts `python -m autograder.sandbox.zygote`: a command line, not an import.
}


def _imports() -> dict[str, set[str]]:
    """module -> the package's modules it imports (top-level modules of autograder/ only)."""
    names = {p.stem for p in PACKAGE.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "autograder":
                    deps.update(a.name for a in node.names if a.name in names)
                elif node.module.startswith("autograder."):
                    deps.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[1] for a in node.names
                            if a.name.startswith("autograder."))
        graph[path.stem] = {d for d in deps if d in names and d != path.stem}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_cycle():
    assert _cycle(_imports()) is None, " -> ".join(_cycle(_imports()) or [])


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_trusted_side_imports_nothing_of_the_worker():
    graph = _imports()
    bad = sorted((m, d) for m, deps in graph.items() if m not in UNTRUSTED
                 for d in deps if d in UNTRUSTED and (m, d) not in ALLOWED)
    assert not bad, bad
