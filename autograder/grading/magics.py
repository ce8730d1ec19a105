"""IPython magics in a notebook's code cells, found where IPython finds them, so that the
cells can be graded as one Python file (:func:`autograder.grading.submission.notebook_to_source`).
"""

from __future__ import annotations

import re

#: Cell magics whose body IPython runs as Python in the notebook's namespace: the body is kept
#: (a definition under ``%%time`` exists in Jupyter). Any other cell magic (``%%writefile``,
#: ``%%bash``, ``%%script false``, ``%%html``…) takes its body as data: commented out whole.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
#: A magic whose result is assigned (``files = !ls``, ``t = %timeit -o f()``): never Python.
_ASSIGNED_MAGIC = re.compile(r"^\s*[A-Za-z_][\w.,\s]*=\s*[%!]")


def without_magics(lines: list[str]) -> list[str]:
    """A code cell's lines with its IPython magics commented out, as IPython finds them: a
    line magic (``%timeit``, ``!ls``, ``x = !ls``) only where a logical line starts, so a line
    that continues an open bracket, string or backslash (``% (u.shape, v.shape)`` under a
    ``"…%s" ``) stays code (seventh red team: such a line was commented out, the topic failed
    to import and scored 0, while the notebook ran in Jupyter); a cell magic on the first line
    comments the whole cell unless it runs its body as Python (:data:`PYTHON_CELL_MAGICS`).
    One pass over the characters (:class:`LogicalLines`): a 2 MiB notebook costs no more
    than reading it."""
    out: list[str] = []
    if lines and lines[0].lstrip().startswith("%%"):
        name = lines[0].lstrip()[2:].split(maxsplit=1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return [f"# (magic) {line}" for line in lines]
        out, lines = [f"# (magic) {lines[0]}"], lines[1:]
    scan = LogicalLines()
    for line in lines:
        stripped = line.lstrip()
        if scan.at_start() and (stripped.startswith(("%", "!")) or _ASSIGNED_MAGIC.match(line)):
            out.append(f"# (magic) {line}")
            continue
        out.append(line)
        scan.feed(line)
    return out


class LogicalLines:
    """Where Python's logical lines start, fed one physical line at a time: the depth of open
    brackets, an open triple-quoted string, a trailing backslash. Comments and the insides of
    strings are skipped; enough to tell a continuation from a new statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.triple = ""  # the open triple quote, or ""
        self.backslash = False

    def at_start(self) -> bool:
        """Whether the next physical line starts a logical line."""
        return self.depth == 0 and not self.triple and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.backslash = False
        while i < n:
            c = line[i]
            if self.triple:
                if c == "\\":
                    i += 2
                elif line.startswith(self.triple, i):
                    self.triple, i = "", i + 3
                else:
                    i += 1
                continue
            if c == "#":
                return
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "'\"":
                if line.startswith(c * 3, i):
                    self.triple, i = c * 3, i + 3
                    continue
                i += 1
                while i < n and line[i] != c:
                    i += 2 if line[i] == "\\" else 1
            i += 1
        self.backslash = not self.triple and line.endswith("\\")
