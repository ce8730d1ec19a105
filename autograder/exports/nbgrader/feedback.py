"""nbgrader preprocessors the exported course's `nbgrader_config.py` installs: test cells show
verdicts, never hidden test internals (feedback), and autograde warns only about test cells a
student changed.

nbgrader's default feedback shows each autograded cell as it ran: the hidden tests' source, and
on an error a full IPython traceback, which quotes the lines around the failing one (hidden lines
included). The course's `nbgrader_config.py` runs nbgrader's ``ClearHiddenTests`` on the feedback
to drop the hidden regions from the source, then this preprocessor, which cuts every error output
of a test cell to its last line (``ename: evalue``) and drops the ``stderr`` streams of test cells.
What remains of a test cell is the public part of its source and the verdict lines that
:mod:`autograder.exports.nbgrader.adapter` prints (hidden tests' messages never hold inputs).
"""

from __future__ import annotations

import copy
from typing import Any

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells


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


class OverwriteReleasedCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` (autograde's first step: locked and test cells are put
    back as ``source/`` has them), without the warning every released test cell raised.

    nbgrader stores each cell's checksum as ``source/`` has it, before ``generate_assignment``
    removes the ``### BEGIN HIDDEN TESTS`` regions, so a test cell with hidden tests never
    matches it as released: autograde logged "Attribute 'checksum' for cell test-… has
    changed!" for every such cell of every student, untouched notebooks included. Here that
    one warning is left out when the cell is exactly what the release gave the student (the
    source cell with its hidden regions cleared by nbgrader's own ``ClearHiddenTests``, with
    this cell's metadata); a cell the student did change still warns, and every cell is still
    overwritten from ``source/`` as before, so grades are unchanged either way.
    """

    def preprocess_cell(self, cell: Any, resources: Any, index: int) -> tuple[Any, Any]:
        """``OverwriteCells.preprocess_cell``, remembering the cell for :meth:`report_change`."""
        self._cell, self._resources, self._index = cell, resources, index
        return super().preprocess_cell(cell, resources, index)

    def report_change(self, name: str, attr: str, old: Any, new: Any) -> None:
        """Warn as nbgrader does, unless ``attr`` is the checksum of a cell as released."""
        if attr == "checksum" and new == self._released_checksum(name):
            self.log.debug("cell %s is as released (hidden tests removed): checksum differs "
                           "from source/ by design", name)
            return
        super().report_change(name, attr, old, new)

    def _released_checksum(self, name: str) -> str | None:
        source = self.gradebook.find_source_cell(name, self.notebook_id, self.assignment_id)
        released = copy.deepcopy(self._cell)
        released.source = source.source
        try:
            # parent=self: the course's configured delimiters, as generate_assignment used
            ClearHiddenTests(parent=self).preprocess_cell(released, self._resources,
                                                          self._index)
        except RuntimeError:  # unbalanced markers: not a cell this export wrote
            return None
        return utils.compute_checksum(released)
