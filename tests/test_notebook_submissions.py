"""`course grade` on notebook submissions (``exNN_*.ipynb``, code cells read with nbformat)."""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys
import warnings
import zipfile

import nbformat
import pytest

from autograder import catalogue
from autograder.grading import magics, submission, uploads
from tests.helpers import ROOT, solution_source


def solution_notebook(topic: str) -> nbformat.NotebookNode:
    """The reference solution as a notebook: a markdown cell, then a code cell per top-level
    statement, the first with an IPython magic (which the grader must tolerate)."""
    source = solution_source(topic)
    lines = source.splitlines()
    tree = ast.parse(source)
    cells = [nbformat.v4.new_markdown_cell(f"# {topic}, solved")]
    body = tree.body[1:]  # the docstring stays out
    starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))])
              for n in body]  # a decorated kernel starts at its decorator
    for i, node in enumerate(body):
        start = starts[i]
        end = starts[i + 1] - 1 if i + 1 < len(body) else len(lines)
        text = "\n".join(lines[start - 1:end]).rstrip()
        if i == 1:
            text = "%matplotlib inline\n" + text
        cells.append(nbformat.v4.new_code_cell(text))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def test_notebook_to_source_keeps_code_and_drops_magics_and_nbgrader_test_cells():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("%timeit 1\nx = 1\n!ls"),
        nbformat.v4.new_code_cell("def f():\n    return x"),
        nbformat.v4.new_code_cell("tests.run('a hidden test')"),
    ])
    nb.cells[2].metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "f"}
    nb.cells[3].metadata["nbgrader"] = {"solution": False, "grade": True, "grade_id": "t",
                                        "points": 1}
    src = submission.notebook_to_source(nbformat.writes(nb).encode()).decode()
    assert "x = 1" in src and "def f():" in src
    assert "# (magic) %timeit 1" in src and "# (magic) !ls" in src
    assert "tests.run" not in src  # the course's own test cells are not the student's code
    ast.parse(src)
    with pytest.raises(ValueError, match="not a readable notebook"):
        submission.notebook_to_source(b'{"cells": [')


#: Cells Jupyter runs as they are, whose lines start with % or ! only inside a statement: a
#: message formatted with % on its own line, a comparison with != on the next line, inside a
#: docstring, after a backslash (seventh red team: each was commented out, the topic failed
#: to import and scored 0, the same code as a .py full marks).
CONTINUED = [
    'def f(u, v):\n    raise ValueError("u %s and v %s differ"\n                     % (u, v))',
    "ok = (1\n      != 2)",
    'DOC = """\n% not a magic\n! nor this\n"""',
    "total = 7 \\\n    % 4",
    "d = {'a': 1,  # a comment with a ( bracket\n     'b': 2}\n%time x = 1",
]


@pytest.mark.parametrize("cell", CONTINUED)
def test_a_line_that_continues_a_statement_is_code_not_a_magic(cell):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    src = submission.notebook_to_source(nbformat.writes(nb).encode()).decode()
    ast.parse(src)  # commenting a continuation out broke the statement
    kept = [line for line in cell.splitlines() if not line.startswith("%time")]
    assert all(line in src.splitlines() for line in kept), src
    assert ("# (magic) %time x = 1" in src) == ("%time" in cell)


def test_magics_are_found_where_ipython_finds_them():
    cells = ["%matplotlib inline\nx = 1\n  !pip list\nfiles = !ls\nt = %timeit -o 1",
             "%%writefile helper.py\ndef g():\n    return 1",  # its body is a file, not code
             "%%time\ndef h():\n    return 2"]  # its body runs in the namespace
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    src = submission.notebook_to_source(nbformat.writes(nb).encode()).decode()
    namespace: dict = {}
    exec(compile(src, "nb", "exec"), namespace)
    assert namespace["x"] == 1 and namespace["h"]() == 2 and "g" not in namespace
    for magic in ("%matplotlib inline", "  !pip list", "files = !ls", "t = %timeit -o 1",
                  "%%writefile helper.py", "def g():", "%%time"):
        assert f"# (magic) {magic}" in src


#: Cells whose every line IPython's transformer reads as the grader does: line by line, a
#: magic (shell escape, assigned magic, help request) or Python. Strings, comments and
#: continuations holding ``%``, ``!`` or ``?`` are Python.
AGREED = [
    "%matplotlib inline\nx = 1\n  !pip list\nfiles = !ls\nt = %timeit -o 1",
    "x[0] = !ls\nx.y = %env HOME\na, b = !ls",
    "np.dot?\n?np.dot\nx = np.dot??\n%time?",
    "print('a?')\nx = 1  # what?\nf(x) ?\ny = 1; %time y",
    'DOC = """\n% not a magic\n! nor this\nnor? this\n"""\n%ls',
    "if True:\n    %time x = 1\n    y = (2\n         % 3)\ndef f():\n    !ls\n    return 1",
    "total = 7 \\\n    % 4\n!echo it's\nz = 0",
]


@pytest.mark.parametrize("cell", AGREED)
def test_the_lines_taken_for_magics_are_those_ipython_takes(cell):
    """Line for line, a line is commented out exactly where IPython's own transformer (what
    Jupyter runs) turns it into a ``get_ipython()`` call."""
    ipython = pytest.importorskip("IPython.core.inputtransformer2")
    theirs = ipython.TransformerManager().transform_cell(cell).splitlines()
    lines = cell.splitlines()
    assert len(theirs) == len(lines)
    ours = magics.without_magics(lines)
    assert [o.lstrip().startswith(("# (magic) ", "pass  # (magic) ")) for o in ours] == \
        ["get_ipython()" in t and "get_ipython()" not in c for t, c in zip(theirs, lines)]


def test_magics_a_line_scanner_missed_are_found():
    """Magics IPython runs that a character scanner took for code (the topic failed to import
    and scored 0) or whose data it took for code: a subscripted target, a help request, a
    shell command continued with a backslash, a cell magic under a blank first line."""
    cells = ["x = [0]\nx[0] = !ls\nnp.dot?\n!ls \\\n  -l\ny = 2",
             "\n%%writefile helper.py\ndef g():\n    return 1"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    src = submission.notebook_to_source(nbformat.writes(nb).encode()).decode()
    namespace: dict = {}
    exec(compile(src, "nb", "exec"), namespace)
    assert namespace["y"] == 2 and "g" not in namespace
    for magic in ("x[0] = !ls", "np.dot?", "!ls \\", "  -l", "%%writefile helper.py",
                  "def g():"):
        assert f"# (magic) {magic}" in src


def test_a_magic_alone_in_a_block_leaves_a_block_that_runs():
    """IPython runs a magic that is a block's only statement (a call in its place); a comment
    alone there left the block empty and the topic failed to import."""
    cells = ["n = 0\nfor i in range(3):\n    %time f(i)\nn = 3",
             "def g():\n    !ls \\\n      -l\nclass K:\n    %%time?\nif True:\n    # why\n\n    %ls\n"
             "else:\n    %ls\nm = g()"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    src = submission.notebook_to_source(nbformat.writes(nb).encode()).decode()
    namespace: dict = {}
    exec(compile(src, "nb", "exec"), namespace)
    assert namespace["n"] == 3 and namespace["m"] is None and "K" in namespace
    assert "    pass  # (magic)     %time f(i)" in src.splitlines()
    assert "# (magic)       -l" in src.splitlines()  # a continued magic: a comment, no pass


def _without_cell_ids(nb: nbformat.NotebookNode, same: str | None = None) -> str:
    """``nb`` as nbformat 4.5 JSON whose cells lack the ids 4.5 requires (or all have the id
    ``same``): nbformat mends each cell on reading, with a warning per cell."""
    doc = json.loads(nbformat.writes(nb))
    for cell in doc["cells"]:
        cell.pop("id", None)
        if same is not None:
            cell["id"] = same
    doc["nbformat_minor"] = 5
    return json.dumps(doc)


def test_a_notebook_that_nbformat_mends_is_read_without_a_warning():
    """A notebook of 2,000 cells without ids (or with one id each) made nbformat warn once
    per cell: 4,000 lines on the grader's terminal, or a student's in `course check`."""
    cells = [nbformat.v4.new_code_cell(f"x{i} = {i}") for i in range(2000)]
    nb = nbformat.v4.new_notebook(cells=cells)
    for text in (_without_cell_ids(nb), _without_cell_ids(nb, same="same")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            src = submission.notebook_to_source(text.encode())
        assert [str(w.message)[:80] for w in caught] == []
        assert "x1999 = 1999" in src.decode()


def test_the_batch_reads_notebooks_without_converting_them_and_hashes_them_alike(
        tmp_path, monkeypatch):
    """``load(..., notebooks=False)`` (the batch's own process) gives the id and digest of a
    full load, for notebooks that convert, that do not, and in a zip, without converting."""
    good = nbformat.writes(solution_notebook("ex01_vectors"))
    cases = {
        "good": {"ex01_vectors.ipynb": good, "ex02_projections.py": "x = 1\n"},
        "one_broken": {"ex01_vectors.ipynb": good, "ex02_projections.ipynb": good[:200]},
        "all_broken": {"ex01_vectors.ipynb": good[:200]},
        "py_beats_ipynb": {"ex01_vectors.ipynb": good, "ex01_vectors.py": "x = 1\n"},
    }
    paths = []
    for name, files in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text, encoding="utf-8")
        paths.append(folder)
        with zipfile.ZipFile(tmp_path / f"{name}_zip.zip", "w") as zf:
            for file, text in files.items():
                zf.writestr(f"sub/{file}", text)
        paths.append(tmp_path / f"{name}_zip.zip")
    full = {p: uploads.load(p) for p in paths}
    assert full[tmp_path / "all_broken"].error  # the case where the two loads' errors differ

    def refuse(raw):
        raise AssertionError("a notebook was converted")

    monkeypatch.setattr(submission, "notebook_to_source", refuse)
    for p in paths:
        light = uploads.load(p, notebooks=False)
        assert (light.id, light.sha256) == (full[p].id, full[p].sha256), p.name
        assert set(full[p].sources) <= set(light.sources)
        assert light.unconverted == {t for t in light.sources
                                     if t in full[p].notebook_digests}
    # and the digest still tells notebooks apart: one byte more is another submission
    (tmp_path / "good" / "ex01_vectors.ipynb").write_text(good + "\n", encoding="utf-8")
    assert uploads.load(tmp_path / "good", notebooks=False).sha256 != full[tmp_path /
                                                                             "good"].sha256


@pytest.mark.slow
def test_notebook_submissions_end_to_end(tmp_path):
    """Solutions as notebooks get full marks; a malformed notebook fails its topic, clearly."""
    klass = tmp_path / "class"
    (klass / "notebooks").mkdir(parents=True)
    for topic in catalogue.topic_modules():
        nbformat.write(solution_notebook(topic), klass / "notebooks" / f"{topic}.ipynb")
    # one without the cell ids nbformat 4.5 requires: mended on reading, silently
    (klass / "notebooks" / "ex03_softmax.ipynb").write_text(
        _without_cell_ids(solution_notebook("ex03_softmax")), encoding="utf-8")
    # a second student: topic 1 as a good notebook, topic 2 truncated, nothing else
    (klass / "one_broken").mkdir()
    nbformat.write(solution_notebook("ex01_vectors"), klass / "one_broken" / "ex01_vectors.ipynb")
    text = nbformat.writes(solution_notebook("ex02_projections"))
    (klass / "one_broken" / "ex02_projections.ipynb").write_text(text[:200], encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--class",
                           str(klass), "--out", str(out), "--jobs", "2"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    full = rows["notebooks"]
    assert full["status"] == "ok"
    assert float(full["total"]) == float(full["max"]) == 100.0
    bad = rows["one_broken"]
    assert bad["status"] == "partial"
    assert float(bad["ex02_projections"]) == 0.0
    assert float(bad["ex01_vectors"]) == catalogue.get_topic("ex01_vectors").points
    assert float(bad["total"]) == float(bad["ex01_vectors"])
    doc = json.loads((out / "results" / "one_broken.json").read_text("utf-8"))
    ex02 = [t for t in doc["tests"] if t["name"].startswith("ex02_projections.")]
    assert ex02 and all(t["status"] == "failed" for t in ex02)
    assert all("ex02_projections.ipynb: not a readable notebook" in t["output"] for t in ex02)
    assert "ex02_projections.ipynb: not a readable notebook" in doc["output"]
    feedback = (out / "feedback" / "one_broken.md").read_text("utf-8")
    assert "not a readable notebook" in feedback
