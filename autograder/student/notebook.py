"""`course notebook TOPIC`: a topic's stub as a Jupyter notebook, ``exNN_topic.ipynb``.

The notebook holds exactly the stub's code (the one `course stubs` generates, as
:func:`autograder.student.reset.pristine_stub` finds it), split into cells: a markdown cell with
the topic's title and lesson link, one code cell for the imports, then one code cell per
exercise (and per helper the stub asks for). `course check` and `course grade` read its code
cells back (:func:`autograder.grading.submission.notebook_to_source`), so the notebook is graded
as the ``.py`` stub would be — unless an ``exNN_topic.py`` sits in the same folder: then the
``.py`` wins (docs/design/interface.md's upload rule), and `course notebook` warns about it.

`course reset` of a topic that lives in a notebook resets the notebook (:func:`reset_exercise`,
:func:`reset_topic`), backed up first as a ``.py`` is: writing a ``.py`` beside it would hide it.
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder import catalogue
from autograder.authoring import stubs
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
            "Fill in every body marked `TODO`, save, then check your work with the last cell "
            f"(`%course check {topic.number}`), or from a terminal: "
            f"`course check {topic.number}` (add `--dir FOLDER` when this notebook is not in "
            "`exercises/`). The grader reads this notebook's code cells; an "
            f"`{topic.filename}` in the same folder would be graded instead.\n\n"
            f"Lesson: [docs/{topic.lesson_page}]({catalogue.SITE_URL}{page}/)")


def check_cell(topic: catalogue.Topic) -> str:
    """The last code cell: checks the topic from inside Jupyter with the ``%course`` magic
    (:func:`load_ipython_extension`). Magics only: the grader comments every magic out
    (``grading.magics``), so the cell is no code of the submission's and never runs when graded."""
    first = topic.exercises[0].qualname
    return ("# Check your work: save the notebook first (the check reads the saved file), then\n"
            "# run this cell. It runs the public tests in worker processes outside this kernel,\n"
            f"# exactly as `course check {topic.number}` does in a terminal. One exercise only:\n"
            f"# %course check {first}\n"
            "%load_ext autograder.student.notebook\n"
            f"%course check {topic.number}")


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
                                      + [nbformat.v4.new_code_cell(c) for c in cells]
                                      + [nbformat.v4.new_code_cell(check_cell(topic))])
    else:
        markdown = "\n".join(f"# {line}".rstrip() for line in intro(topic).splitlines())
        text = "# %% [markdown]\n" + markdown + "\n" + "".join(f"\n# %%\n{c}\n" for c in cells)
        text += f"\n# %%\n{check_cell(topic)}\n"
        nb = jupytext.reads(text, fmt={"extension": ".py", "format_name": "percent",
                                       "comment_magics": False})
        nb.metadata.pop("jupytext", None)  # a plain notebook, not one paired with a .py
        for cell in nb.cells:
            cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata["kernelspec"] = dict(_KERNEL)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write(folder: Path, key: str, force: bool = False
          ) -> tuple[catalogue.Topic, Path, Path | None, Path | None]:
    """Write topic ``key``'s stub notebook into ``folder`` (created if missing); with
    ``force``, an existing notebook is backed up first (``.backup/``, as `course reset` does):
    it may hold the student's work.

    Returns:
        (the topic, the notebook written, the ``.py`` of the same topic in ``folder`` — which
        the grader reads instead of the notebook — or None, the backup of the notebook
        replaced or None).

    Raises:
        KeyError: unknown topic (usage).
        NotebookError: the notebook exists and ``force`` is false, or no stub is available.
    """
    topic = catalogue.get_topic(key)
    path = folder / filename(topic)
    if path.exists() and not force:
        raise NotebookError(f"{path} already exists; nothing written (pass --force to "
                            "overwrite it with a fresh stub)")
    nb = build(topic, _stub(topic, NotebookError))
    folder.mkdir(parents=True, exist_ok=True)
    backup = stubs.backup_copy(path) if path.exists() else None
    reset.write_keeping_mode(path, nbformat.writes(nb).encode("utf-8"))
    shadow = folder / topic.filename
    return topic, path, shadow if shadow.exists() else None, backup


# ---------------------------------------------------------------- `course reset` in a notebook

def _read(path: Path, topic: catalogue.Topic) -> nbformat.NotebookNode:
    """``path`` parsed as a notebook (nbformat 4).

    Raises:
        reset.ResetError: it is not a readable notebook (nothing is changed then).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one per cell nbformat mends (a missing id)
            return nbformat.reads(path.read_bytes().decode("utf-8-sig"), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for a bad file
        raise reset.ResetError(f"cannot read {path} as a notebook ({type(exc).__name__}); "
                               f"nothing changed. `course notebook {topic.number} --force` "
                               "writes a fresh one (yours is backed up first)") from None


def _replace(path: Path, nb: nbformat.NotebookNode) -> Path:
    """Back ``path`` up, then replace it with ``nb``; the backup."""
    backup = stubs.backup_copy(path)
    reset.write_keeping_mode(path, nbformat.writes(nb).encode("utf-8"))
    return backup


def _stub(topic: catalogue.Topic, error: type[Exception] = reset.ResetError) -> str:
    """``topic``'s original stub; ``error`` (the caller's kind) when none is available."""
    stub = reset.pristine_stub(topic.module)
    if stub is None:
        raise error(f"no original stub of {topic.filename} is available here (looked in "
                    f"solutions/, {reset.PRISTINE_DIR} and the git history)")
    return stub


def reset_exercise(path: Path, key: str) -> tuple[catalogue.Exercise, Path | None]:
    """Put exercise ``key``'s definition in notebook ``path`` back to its stub: in the last
    code cell that defines it (the one that counts when the cells run in order, and when
    graded), else in a new code cell at the end. Other cells, and the rest of that cell, stay
    as they were; that cell's outputs go (they were of the old code). Returns the exercise and
    the backup (None when nothing changed).

    Raises:
        KeyError: unknown exercise (usage).
        reset.ResetError: no stub available, or the notebook cannot be read.
    """
    ex = catalogue.get_exercise(key)
    topic = catalogue.get_topic(ex.topic)
    stub = _stub(topic)
    section = reset.segment(stub, ex.name)
    if section is None:
        raise reset.ResetError(f"the stub of {topic.filename} does not define {ex.name}")
    nb = _read(path, topic)
    cells = [c for c in nb.cells if c.get("cell_type") == "code"
             and reset.segment(str(c.get("source", "")), ex.name) is not None]
    if not cells:  # deleted: the stub's definition comes back in a cell of its own
        nb.cells.append(nbformat.v4.new_code_cell(section))
    else:
        cell = cells[-1]
        new = reset.replace_definition(str(cell.source), ex.name, stub)
        if new == cell.source:
            return ex, None
        cell.source, cell.outputs, cell.execution_count = new, [], None
    return ex, _replace(path, nb)


def reset_topic(path: Path, key: str,
                confirm: Callable[[catalogue.Topic, Path], bool] = lambda topic, path: True,
                ) -> tuple[catalogue.Topic, Path | None]:
    """Write notebook ``path`` afresh from topic ``key``'s stub (as `course notebook` does),
    after ``confirm(topic, path)`` and a backup, unless its code already is the stub's.
    Returns the topic and the backup (None: nothing changed).

    Raises:
        KeyError: unknown topic (usage).
        reset.ResetError: no stub available, or the notebook cannot be read.
        reset.Declined: ``confirm`` said no.
    """
    from autograder.grading.submission import notebook_to_source

    topic = catalogue.get_topic(key)
    fresh = build(topic, _stub(topic))
    _read(path, topic)  # an unreadable notebook is said, not silently replaced
    if notebook_to_source(path.read_bytes()) == notebook_to_source(
            nbformat.writes(fresh).encode("utf-8")):
        return topic, None
    if not confirm(topic, path):
        raise reset.Declined(f"{path} left as it was")
    return topic, _replace(path, fresh)


# ---------------------------------------------------------------- checking from inside Jupyter

#: The `course` subcommands the ``%course`` magic runs (``watch`` never returns, and a kernel
#: cell that never ends is no way to work).
MAGIC_COMMANDS = ("check", "hint", "list")


def course_in_kernel(line: str, cwd: Path | None = None) -> int:
    """Run ``course LINE`` (``check 3``, ``check ex03_softmax.softmax``, ``hint softmax``) as a
    separate process, and print what it prints: a check then runs the public tests in its own
    worker processes (autograder.sandbox), never in the kernel that calls this, and shows the
    same table and feedback as in a terminal. ``check`` and ``list`` get ``--dir`` the
    kernel's working folder (Jupyter's: the notebook's own) when none is given and it holds an
    exercise file.

    Args:
        line: the arguments, as typed after ``%course``.
        cwd: the folder to check (default: the current working directory).

    Returns:
        ``course``'s exit code (0: every public test passed); 2 for a command the magic does
        not run (:data:`MAGIC_COMMANDS`), said on stdout.
    """
    import os
    import shlex
    import subprocess
    import sys

    args = shlex.split(line)
    if not args or args[0] not in MAGIC_COMMANDS:
        print(f"%course runs {', '.join(MAGIC_COMMANDS)} (e.g. %course check 3); for "
              "`course watch` and the rest, use a terminal")
        return 2
    folder = Path.cwd() if cwd is None else cwd
    mine = {f"{t.module}{ext}" for t in catalogue.topics() for ext in (".py", ".ipynb")}
    if (args[0] in ("check", "list") and "--dir" not in args
            and any((folder / name).is_file() for name in mine)):
        args += ["--dir", str(folder)]
    # The interpreter of this kernel, which imports this package: the same grader, no PATH.
    # Plain text, as `course check | tee` prints it: the kernel's environment asks for colour
    # (FORCE_COLOR), and rich's spinners would fill the cell with escape sequences.
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    env["TERM"] = "dumb"
    proc = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=folder, env=env,
                          check=False,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    print(proc.stdout, end="")
    return proc.returncode


def load_ipython_extension(ipython) -> None:
    """``%load_ext autograder.student.notebook``: registers the ``%course`` line magic
    (:func:`course_in_kernel`)."""
    def course(line: str) -> None:  # None: the cell shows the printed report, no Out[]
        course_in_kernel(line)

    ipython.register_magic_function(course, magic_kind="line", magic_name="course")
