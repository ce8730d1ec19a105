"""An nbgrader feedback preprocessor: test cells show verdicts, never hidden test internals.

nbgrader's default feedback shows each autograded cell as it ran: the hidden tests' source, and
on an error a full IPython traceback, which quotes the lines around the failing one (hidden lines
included). The course's `nbgrader_config.py` runs nbgrader's ``ClearHiddenTests`` on the feedback
to drop the hidden regions from the source, then this preprocessor, which cuts every error output
of a test cell to its last line (``ename: evalue``) and drops the ``stderr`` streams of test cells.
What remains of a test cell is the public part of its source and the verdict lines that
:mod:`autograder.exports.nbgrader.adapter` prints (hidden tests' messages never hold inputs).
"""

from __future__ import annotations

from typing import Any

from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor


class HideTestInternals(NbGraderPreprocessor):
    """Cut tracebacks and stderr out of autograded test cells (feedback only)."""

    def preprocess_cell(self, cell: Any, resources: Any, index: int) -> tuple[Any, Any]:
        """An autograded test cell with its tracebacks cut and its stderr dropped; any other
        cell as it is (nbconvert's preprocessor hook)."""
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return cell, resources
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                continue
            kept.append(out)
        cell["outputs"] = kept
        return cell, resources
