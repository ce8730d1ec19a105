"""Every companion notebook runs top to bottom in a fresh Jupyter kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import DOCS, LESSONS

pytestmark = pytest.mark.slow

NOTEBOOKS = sorted((DOCS / "notebooks").glob("[0-9][0-9]-*.py"))


def test_one_notebook_per_lesson():
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in LESSONS]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(source: Path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    from nbclient import NotebookClient

    monkeypatch.delenv("COURSE_FIGURES", raising=False)  # display figures, save nothing
    monkeypatch.setenv("MPLBACKEND", "agg")
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}}
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
