"""`course notebook TOPIC`: a topic's stub as a Jupyter notebook, ``exNN_topic.ipynb``.

The notebook holds exactly the stub's code (the one `course stubs` generates, as
:func:`autograder.student.reset.pristine_stub` finds it), split into cells: a markdown cell with
the topic's title and lesson link, one code cell for the imports, then one code cell per
exercise (and per helper the stub asks for). `course check` and `course grade` read its code
cells back (:func:`autograder.grading.submission.notebook_to_source`), so the notebook is graded
as the ``.py`` stub would be — unless an ``exNN_topic.py`` sits in the same folder: then the
``.py`` wins (INTERFACE.md's upload rule), and `course notebook` warns about it.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import nbformat

from autograder import catalogue
from autograder.student import reset

_START = re.compile(r"^# --8<-- \[start:[^\]]*\]\s*$")
_KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}


class NotebookError(Exception):
    """`course notebook` cannot write the notebook (exit code 1)."""


def filename(topic: catalogue.Topic) -> str:
    """The notebook's name, the one the grader looks for: ``ex01_vectors.ipynb``."""
    return f"{topic.module}.ipynb"


def code_cells(stub: str) -> list[str]:
    """Split a stub's text into code cells: everything before the first top-level ``def`` or
    ``class`` (header, docstring, imports), then one cell per top-level definition, starting
    at its ``# --8<-- [start:…]`` marker or decorators and running to the next one. Joined
    with newlines, the cells give back the stub's lines (only blank lines between cells are
    dropped).

    Raises:
        SyntaxError: the stub does not parse.
    """
    lines = stub.splitlines()
    cuts = []
    for node in ast.parse(stub).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            if start > 0 and _START.match(lines[start - 1]):
                start -= 1  # the lesson site's snippet marker belongs with its definition
            cuts.append(start)
    bounds = [0, *cuts, len(lines)]
    cells = ["\n".join(lines[a:b]).strip("\n") for a, b in itertools.pairwise(bounds)]
    return [c for c in cells if c.strip()]


def intro(topic: catalogue.Topic) -> str:
    """The first, markdown, cell: the topic's title, how to check it, its lesson."""
    page = topic.lesson_page.removesuffix(".md")
    return (f"# Topic {topic.number}: {topic.title}\n\n"
            "Fill in every body marked `TODO`, then check your work from a terminal: "
            f"`course check {topic.number}` (add `--dir FOLDER` when this notebook is not in "
            "`exercises/`). The grader reads this notebook's code cells; an "
            f"`{topic.filename}` in the same folder would be graded instead.\n\n"
            f"Lesson: [docs/{topic.lesson_page}]({catalogue.SITE_URL}{page}/)")


def build(topic: catalogue.Topic, stub: str) -> nbformat.NotebookNode:
    """The notebook of ``topic`` holding ``stub``'s code (:func:`code_cells`), made with
    jupytext from the percent format (its magic commenting off: a stub's ``# %…`` comment
    stays a comment), or with nbformat alone where jupytext is not installed.

    Raises:
        SyntaxError: the stub does not parse.
    """
    cells = code_cells(stub)
    try:
        import jupytext
    except ImportError:  # jupytext comes with the docs extra; nbformat with the grader
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(intro(topic))]
                                      + [nbformat.v4.new_code_cell(c) for c in cells])
    else:
        markdown = "\n".join(f"# {line}".rstrip() for line in intro(topic).splitlines())
        text = "# %% [markdown]\n" + markdown + "\n" + "".join(f"\n# %%\n{c}\n" for c in cells)
        nb = jupytext.reads(text, fmt={"extension": ".py", "format_name": "percent",
                                       "comment_magics": False})
        nb.metadata.pop("jupytext", None)  # a plain notebook, not one paired with a .py
        for cell in nb.cells:
            cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata["kernelspec"] = dict(_KERNEL)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write(folder: Path, key: str, force: bool = False) -> tuple[catalogue.Topic, Path, Path | None]:
    """Write topic ``key``'s stub notebook into ``folder`` (created if missing).

    Returns:
        (the topic, the notebook written, the ``.py`` of the same topic in ``folder`` — which
        the grader reads instead of the notebook — or None).

    Raises:
        KeyError: unknown topic (usage).
        NotebookError: the notebook exists and ``force`` is false, or no stub is available.
    """
    topic = catalogue.get_topic(key)
    path = folder / filename(topic)
    if path.exists() and not force:
        raise NotebookError(f"{path} already exists; nothing written (pass --force to "
                            "overwrite it with a fresh stub)")
    stub = reset.pristine_stub(topic.module)
    if stub is None:
        raise NotebookError(f"no original stub of {topic.filename} is available here "
                            f"(looked in solutions/, {reset.PRISTINE_DIR} and the git history)")
    nb = build(topic, stub)
    folder.mkdir(parents=True, exist_ok=True)
    reset.write_keeping_mode(path, nbformat.writes(nb).encode("utf-8"))
    shadow = folder / topic.filename
    return topic, path, shadow if shadow.exists() else None
