"""The package's boundaries, read from its source: the trust boundary, no import cycle, and no
module over 600 lines unless it is listed with why it is still one job (issue 12; issue
"Architecture, round 2"; the architecture issue's "cohesion, not a line count").

The trust boundary is the folders (docs/design/README.md): ``autograder/sandbox/`` is what runs
only in the zygote or in a worker, next to student code (:data:`UNTRUSTED`); ``autograder/wire/``
and the top-level facts ``host``, ``limits`` and ``paths`` are what both sides share
(:data:`SHARED`); everything else, ``autograder/driver/`` (the session, slot, pipeline and reply
interpreter that drive a worker) included, is the trusted side, which never imports the untrusted
side but through :data:`CROSSINGS`. Imports are parsed with :mod:`ast`, those inside functions
too, so a lazy import cannot hide from the check.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PACKAGE = ROOT / "autograder"


def _folder(name: str) -> frozenset[str]:
    """The modules of the package's folder ``name`` (its ``__init__`` too)."""
    return frozenset("autograder." + name + ("" if p.stem == "__init__" else "." + p.stem)
                     for p in (PACKAGE / name).glob("*.py"))


#: Modules that run only in the zygote or in a worker (the untrusted side): the sandbox folder.
UNTRUSTED = _folder("sandbox")

#: What the untrusted side may import of the package: the wire format and the host's facts both
#: sides read. A worker importing the grading code, the suites or the session would hold the
#: judging logic (and the reference's whereabouts) next to student code.
SHARED = _folder("wire") | {"autograder.host", "autograder.limits", "autograder.paths",
                            "autograder"}

#: (importer, imported) pairs allowed across the boundary, each with its reason.
CROSSINGS = {
    # The suites run inside the notebook kernel: nbgrader's model, where the student's code runs
    # in this very process (docs/design/threat-model.md). The adapter IS the worker there.
    ("autograder.exports.nbgrader.adapter", "autograder.sandbox.worker"):
        "nbgrader's in-kernel model: the adapter dispatches through the worker's own handler",
}

#: A module is one job (docs/design/README.md); its length is only a tripwire for two jobs grown
#: into one file, high enough that no job has to be split in two to pass it.
MAX_LINES = 600

#: The modules outside ``autograder/suites/`` over :data:`MAX_LINES` that are still one job, and
#: why (none now).
LONG_MODULES: dict[str, str] = {}


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(source: str, name: str, known: set[str]) -> set[str]:
    """The package modules ``source`` (the module ``name``) imports, at any depth of its code.

    ``from autograder.sandbox import worker`` names the module ``autograder.sandbox.worker``;
    ``from autograder.sandbox.worker import Server`` and ``import autograder.sandbox.worker``
    the same; relative imports are resolved against ``name``; a string passed to
    ``importlib.import_module`` counts too. Only names in ``known`` are kept.
    """
    found: set[str] = set()
    package = name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # A submodule named in ``from pkg import sub`` is the edge; a name of pkg's own
            # (a function, a class) makes pkg the edge.
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                         for a in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
                node.func, "id", None)) == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: imports_of(p.read_text("utf-8"), m, known) for m, p in mods.items()}


def trust_violations(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(trusted importer, untrusted module) pairs of ``graph`` not in :data:`CROSSINGS`."""
    return sorted((m, d) for m, deps in graph.items() if m not in UNTRUSTED
                  for d in deps if d in UNTRUSTED and (m, d) not in CROSSINGS)


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order, the first repeated), or None."""
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


def test_the_trusted_side_never_imports_the_untrusted_side():
    assert not trust_violations(_graph())


def test_the_check_sees_every_form_of_import_and_lazy_ones():
    """The checker itself: each spelling of an import of the worker, inside a function too."""
    known = {"autograder.sandbox.worker", "autograder.sandbox", "autograder.driver.session",
             "autograder.wire.codec"}
    for code in ("from autograder.sandbox import worker",
                 "from autograder.sandbox.worker import Server",
                 "import autograder.sandbox.worker as w",
                 "def f():\n    from autograder.sandbox import worker",
                 "def f():\n    from ..sandbox import worker",
                 "import importlib\nimportlib.import_module('autograder.sandbox.worker')"):
        graph = {"autograder.driver.session": imports_of(code, "autograder.driver.session",
                                                          known)}
        assert trust_violations(graph) == [
            ("autograder.driver.session", "autograder.sandbox.worker")], code
    shared = imports_of("from autograder.wire import codec\nfrom autograder.wire.codec "
                        "import encode", "autograder.driver.session", known)
    assert shared == {"autograder.wire.codec"}
    assert trust_violations({"autograder.driver.session": shared}) == []


def test_the_untrusted_side_imports_only_what_both_sides_share():
    graph = _graph()
    bad = sorted((m, d) for m in UNTRUSTED for d in graph.get(m, ())
                 if d not in SHARED and d not in UNTRUSTED)
    assert not bad, bad


def test_every_named_module_exists():
    """The lists above name real modules: a rename must not leave the boundary unchecked."""
    mods = _modules()
    missing = sorted((UNTRUSTED | SHARED | {m for pair in CROSSINGS for m in pair}) - set(mods))
    assert not missing, missing


def test_each_allowed_crossing_is_still_made():
    """A crossing that is no longer made leaves the list: the debt shown is the real one."""
    graph = _graph()
    stale = sorted(pair for pair in CROSSINGS if pair[1] not in graph.get(pair[0], ()))
    assert not stale, stale


def test_no_import_cycle():
    graph = _graph()
    found = cycle(graph)
    assert found is None, " -> ".join(found or [])


def test_the_cycle_finder_finds_cycles():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def test_no_module_outside_the_suites_is_over_the_line_cap_unless_listed():
    over = {m: _lines(p) for m, p in _modules().items()
            if not m.startswith("autograder.suites") and _lines(p) > MAX_LINES}
    unlisted = {m: n for m, n in over.items() if m not in LONG_MODULES}
    assert not unlisted, f"over {MAX_LINES} lines: {unlisted}"
    stale = sorted(set(LONG_MODULES) - set(over))
    assert not stale, f"no longer over {MAX_LINES} lines, remove from LONG_MODULES: {stale}"


#: Layers that must not import upward (issue 35, item 3): a package -> the packages it may not
#: import. `cli/` sits above everything; `student/` serves it; `results/` is what a graded
#: submission becomes, below the code that grades and the commands that show it.
NO_UPWARD = {
    "autograder.student": ("autograder.cli",),
    "autograder.results": ("autograder.grading", "autograder.student", "autograder.cli"),
}
#: The upward arrows still there, and why (each a lazy import); none now.
UPWARD_LEFT: dict[tuple[str, str], str] = {}


def upward_arrows(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs of ``graph`` that cross :data:`NO_UPWARD`, less
    :data:`UPWARD_LEFT`."""
    found = []
    for m, deps in graph.items():
        for low, highs in NO_UPWARD.items():
            if m == low or m.startswith(low + "."):
                found += [(m, d) for d in deps for h in highs
                          if (d == h or d.startswith(h + ".")) and (m, d) not in UPWARD_LEFT]
    return sorted(set(found))


def test_no_arrow_runs_upward():
    assert upward_arrows(_graph()) == []
    stale = [pair for pair in UPWARD_LEFT if pair[1] not in _graph().get(pair[0], set())]
    assert not stale, f"no longer imported, remove from UPWARD_LEFT: {stale}"


def test_the_arrow_check_sees_an_upward_import():
    graph = {"autograder.student.watch": {"autograder.cli.app"},
             "autograder.results.report": {"autograder.grading.batch", "autograder.catalogue"},
             "autograder.cli.app": {"autograder.student.watch"}}
    assert upward_arrows(graph) == [("autograder.results.report", "autograder.grading.batch"),
                                    ("autograder.student.watch", "autograder.cli.app")]


def worker_uses(source: str) -> set[str]:
    """The attributes :class:`~autograder.driver.pipeline.Pipeline` (in ``source``) reads or
    calls of its worker: ``self.worker.X``, and ``worker.X`` after ``worker = self.worker``."""
    tree = ast.parse(source)
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Pipeline"]
    used = set()
    for node in ast.walk(cls):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        if (isinstance(base, ast.Name) and base.id == "worker") or (
                isinstance(base, ast.Attribute) and base.attr == "worker"
                and isinstance(base.value, ast.Name) and base.value.id == "self"):
            used.add(node.attr)
    return used


def test_the_pipeline_uses_its_session_only_through_the_worker_interface():
    """A session's pipeline is an object of its own: what it needs of the session is the
    ``Worker`` protocol, no attribute of its host beyond it (and no ``Session`` import)."""
    from autograder.driver import pipeline

    source = (PACKAGE / "driver" / "pipeline.py").read_text("utf-8")
    interface = {n for n in vars(pipeline.Worker) if not n.startswith("_")} | set(
        pipeline.Worker.__annotations__)
    used = worker_uses(source)
    assert used and used <= interface, f"beyond the Worker protocol: {used - interface}"
    assert "autograder.driver.session" not in _graph()["autograder.driver.pipeline"]
    # the check itself sees a host attribute read either way
    assert worker_uses(source.replace("worker.generation", "worker.slot", 1)) - interface \
        == {"slot"}


def test_the_batch_keeps_its_slot_state_in_one_object():
    """The batch's per-process slot state is one ``SlotProcess`` (slot_process.py): the only
    module global the batch's code rebinds is the one reference signal handlers and the pool's
    task functions reach it by."""
    rebound = {}
    for name in ("batch", "slot_process"):
        source = (PACKAGE / "grading" / f"{name}.py").read_text("utf-8")
        rebound[name] = sorted(g for node in ast.walk(ast.parse(source))
                               if isinstance(node, ast.Global) for g in node.names)
    assert rebound == {"batch": [], "slot_process": ["_current"]}
