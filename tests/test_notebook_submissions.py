"""`course grade` on notebook submissions (``exNN_*.ipynb``, code cells read with nbformat)."""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys

import nbformat
import pytest

from autograder import catalogue
from autograder.grading import submission
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


@pytest.mark.slow
def test_notebook_submissions_end_to_end(tmp_path):
    """Solutions as notebooks get full marks; a malformed notebook fails its topic, clearly."""
    klass = tmp_path / "class"
    (klass / "notebooks").mkdir(parents=True)
    for topic in catalogue.topic_modules():
        nbformat.write(solution_notebook(topic), klass / "notebooks" / f"{topic}.ipynb")
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
