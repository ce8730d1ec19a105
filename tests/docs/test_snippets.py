"""Code the lessons show (snippet sections of the companion notebooks) fits the page."""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from .conftest import DOCS

# Material's code blocks show about 82 monospace characters at the default desktop width;
# longer lines scroll sideways, and a comment hidden off-screen is a comment not read.
SHOWN_WIDTH = 80


def shown_lines(path):
    """(line number, text) of every line inside a ``--8<-- [start:…]``/``[end:…]`` section."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.search(r"--8<-- \[start:", line):
            inside = True
        elif re.search(r"--8<-- \[end:", line):
            inside = False
        elif inside:
            yield number, line


@pytest.mark.parametrize(
    "notebook", sorted((DOCS / "notebooks").glob("*.py")), ids=lambda p: p.stem
)
def test_shown_code_fits_the_page(notebook):
    long = [f"{n}: {len(s)}" for n, s in shown_lines(notebook) if len(s) > SHOWN_WIDTH]
    assert not long, f"{notebook.name}: lines wider than {SHOWN_WIDTH} shown in a lesson: {long}"


def test_every_included_section_exists():
    """Each ``--8<-- "docs/notebooks/…py:name"`` of a lesson names a section that is there."""
    for lesson in (DOCS / "lessons").glob("*.md"):
        for path, name in re.findall(
            r'--8<-- "docs/notebooks/([\w.-]+\.py):(\w+)"', lesson.read_text(encoding="utf-8")
        ):
            text = (DOCS / "notebooks" / path).read_text(encoding="utf-8")
            assert f"[start:{name}]" in text and f"[end:{name}]" in text, (lesson.name, name)


def shown_sections(notebook) -> dict[str, str]:
    """Each ``--8<-- [start:name]`` … ``[end:name]`` section of a notebook source, by name."""
    sections, current = {}, None
    for line in notebook.read_text(encoding="utf-8").splitlines():
        start = re.search(r"--8<-- \[start:(\w+)\]", line)
        if start:
            current = start.group(1)
            sections[current] = []
        elif re.search(r"--8<-- \[end:", line):
            current = None
        elif current:
            sections[current].append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def bound_names(tree) -> set[str]:
    """Every name a piece of code binds: assignments, defs, classes, arguments, imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return names


@pytest.mark.parametrize("lesson", sorted((DOCS / "lessons").glob("*.md")), ids=lambda p: p.stem)
def test_shown_code_defines_what_it_uses(lesson):
    """A name the code on a lesson page uses is defined in that code, earlier on the page.

    Only the modules the companion notebook imports (``np``, ``torch``, ``ex`` ...) may come
    from outside what the page shows: a ``device`` or a helper defined in a hidden cell leaves
    a reader who copies the code with a NameError.
    """
    defined, missing = set(dir(builtins)), []
    for path, name in re.findall(
        r'--8<-- "docs/notebooks/([\w.-]+\.py):(\w+)"', lesson.read_text(encoding="utf-8")
    ):
        notebook = DOCS / "notebooks" / path
        imported = {
            a.asname or a.name.split(".")[0]
            for node in ast.walk(ast.parse(notebook.read_text(encoding="utf-8")))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names
        }
        tree = ast.parse(shown_sections(notebook)[name])
        used = {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        bound = bound_names(tree)
        missing += [f"{name}: {u}" for u in sorted(used - defined - bound - imported)]
        defined |= bound
    assert not missing, f"{lesson.name} shows code using names it never defines: {missing}"
