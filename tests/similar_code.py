"""Topic files for the similarity tests and benchmark: implementations written independently
(from tests/banks/), and the disguises a copier uses (renamed variables, reordered functions)."""

from __future__ import annotations

import ast
import random

from autograder import catalogue
from autograder.student import reset
from tests.banks import all_variants

HEADER = "import math\n\nimport numpy as np\nimport torch\n"


def choices(topic: str) -> dict[str, list[str]]:
    """exercise -> the texts a student might hand in for it: the reference's definition, each
    correct and wrong bank variant, and the stub's (not written)."""
    t = catalogue.get_topic(topic)
    solution = (reset.stubs.solution_path(t)).read_text("utf-8")
    stub = reset.pristine_stub(topic)
    out: dict[str, list[str]] = {e.name: [reset.segment(solution, e.name),
                                          reset.segment(stub, e.name)] for e in t.exercises}
    for _, top, v in all_variants():
        if top == topic:
            out[v.function].append(v.code)
    return out


def independent(topic: str, i: int = 0) -> str:
    """A topic file of correct bank variants only (the ``i``-th of each exercise, cycling):
    code written apart from the reference."""
    by_fn: dict[str, list[str]] = {}
    for _, top, v in all_variants("correct"):
        if top == topic:
            by_fn.setdefault(v.function, []).append(v.code)
    return HEADER + "\n\n".join(vs[i % len(vs)] for vs in by_fn.values())


def disguise(source: str, seed: int = 0) -> str:
    """``source`` with every name it binds (arguments, assigned variables) renamed and its
    top-level definitions in another order: what a copier does to hide a copy (written back
    by :func:`ast.unparse`, so the layout changes too and comments go)."""
    tree = ast.parse(source)
    bound = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
             for a in n.args + n.kwonlyargs + n.posonlyargs} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound -= {"self", "cls", "__all__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in bound:
            node.id = f"my_{node.id}_v"
        elif isinstance(node, ast.arg) and node.arg in bound:
            node.arg = f"my_{node.arg}_v"
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    random.Random(seed).shuffle(defs)
    tree.body = [n for n in tree.body if n not in defs] + defs
    return ast.unparse(tree) + "\n"


def student(topic: str, rng: random.Random, options: dict[str, list[str]]) -> str:
    """A plausible topic file: per exercise one of ``options`` (:func:`choices`), in a random
    order."""
    parts = [rng.choice(opts) for opts in options.values()]
    rng.shuffle(parts)
    return HEADER + "\n\n\n".join(parts) + "\n"
