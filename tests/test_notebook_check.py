"""A notebook made by `course notebook` checks itself (issue 38, item 2): its last cell's
``%course check N`` runs the topic's public tests in worker processes outside the kernel and
shows the table and feedback `course check` shows; graded, the cell is no code (magics are
commented out), so it never runs in a worker.

Executed for real with nbclient and the venv's own ipykernel.
"""

from __future__ import annotations

import ast
import os

import nbformat
import pytest

from autograder.grading import submission
from autograder.student import notebook
from tests.helpers import ROOT, course, stub_source

nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def _run(path):
    nb = nbformat.read(path, as_version=4)
    # The kernel runs this checkout's package (as the venv's editable install does).
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env_path}" if env_path else str(ROOT)
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    return nb


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_the_notebooks_last_cell_checks_it_outside_the_kernel(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    assert course("notebook", "3", "--dir", str(folder)).returncode == 0
    path = folder / "ex03_softmax.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert "%course check 3" in nb.cells[-1].source
    # Graded, the check cell is comments only: the notebook is the stub's code.
    graded = submission.notebook_to_source(path.read_bytes()).decode()
    assert ast.dump(ast.parse(graded)) == ast.dump(ast.parse(stub_source("ex03_softmax")))

    ran = _run(path)
    shown = _text(ran.cells[-1])
    # the same report as `course check 3`: the folder, the table, the unwritten exercises
    assert f"Checking {folder.resolve()} (public tests)" in shown
    assert "course check (public tests)" in shown and "ex03_softmax" in shown
    assert "ex03_softmax.softmax: not written yet" in shown
    terminal = course("check", "3", "--dir", str(folder))
    assert terminal.stdout.splitlines()[1:] == shown.splitlines()[1:]


def test_the_magic_runs_only_commands_that_end(tmp_path, capsys):
    assert notebook.course_in_kernel("watch 3", cwd=tmp_path) == 2
    assert "use a terminal" in capsys.readouterr().out
    assert notebook.course_in_kernel("", cwd=tmp_path) == 2


def test_a_line_of_the_graded_notebook_is_named_by_its_code_cell_and_line(tmp_path):
    from autograder.console import located, notebook_place

    folder = tmp_path / "work"
    folder.mkdir()
    assert course("notebook", "3", "--dir", str(folder)).returncode == 0
    path = folder / "ex03_softmax.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(2, nbformat.v4.new_code_cell(""))  # an empty cell still takes a line
    nbformat.write(nb, path)
    graded = submission.notebook_to_source(path.read_bytes()).decode().splitlines()
    code = [c.source.splitlines() for c in nb.cells if c.cell_type == "code"]
    for number, text in enumerate(graded, 1):
        place = notebook_place(path, number)
        if text.strip() and not text.startswith("# (magic)"):
            cell, line = place
            assert code[cell - 1][line - 1] == text
    assert notebook_place(path, len(graded) + 5) is None
    message = 'f raised ValueError: x\n  File "<submission>/ex03_softmax.py", line 3, in f'
    cell, line = notebook_place(path, 3)
    assert located(message, folder) == (f'f raised ValueError: x\n    File "{path}", code cell '
                                        f"{cell}, line {line}, in f")
