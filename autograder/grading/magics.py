"""IPython magics in a notebook's code cells, found where IPython finds them, so that the
cells can be graded as one Python file (:func:`autograder.grading.submission.notebook_to_source`).

Where a statement starts is decided by the standard library's :mod:`tokenize`, not by IPython's
own input transformer (``IPython.core.inputtransformer2.TransformerManager``, what Jupyter
runs): IPython is no dependency of the grader (``pyproject.toml`` names it nowhere; it comes
only with the docs and nbgrader extras, through ipykernel), and the grader reads notebooks
wherever it runs. :mod:`tokenize` is Python's own reading of brackets, strings, comments and
backslash continuations, which is what IPython's transformer also asks it
(``make_tokens_by_line``). What counts as a magic at such a start is IPython's rule, kept here
in a few patterns: an escape (``%``, ``!``, ``?``) opening the line, an assigned one
(``files = !ls``, ``t = %timeit -o f()``), a help request ending it (``np.dot?``,
``x = obj??``), and a cell magic on the cell's first line that is not blank.
``tests/test_notebook_submissions.py`` checks these against IPython's transformer where
IPython is installed.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Iterator

#: Cell magics whose body IPython runs as Python in the notebook's namespace: the body is kept
#: (a definition under ``%%time`` exists in Jupyter). Any other cell magic (``%%writefile``,
#: ``%%bash``, ``%%script false``, ``%%html``…) takes its body as data: commented out whole.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

#: A magic or shell escape whose result is assigned (IPython's ``MagicAssign`` and
#: ``SystemAssign``): ``files = !ls``, ``a, b = !ls``, ``x[0] = !ls``, ``t = %timeit -o 1``.
#: The target holds no quote, ``#`` or operator, so no string or comment can match.
_ASSIGNED = re.compile(r"\s*[A-Za-z_][\w.,\s\[\]-]*=\s*[%!]")
#: A help request ending the line (IPython's ``HelpEnd``, its ``_help_end_re`` on an object
#: name), optionally assigned as IPython allows (``x = np.dot??``): ``np.dot?``, ``%time?``.
_HELP_END = re.compile(r"\s*(?:[A-Za-z_][\w.,\s\[\]]*=\s*)?"
                       r"%{0,2}(?!\d)[\w*]+(?:\.(?!\d)[\w*]+|\[-?\d+\])*\?\??\s*")

_MARK = "# (magic) "


def is_magic(line: str) -> bool:
    """Whether ``line``, a physical line that starts a logical line, is an IPython line magic,
    shell escape or help request (not Python).

    >>> [is_magic(s) for s in ("%timeit f()", "  !ls", "x[0] = !ls", "np.dot?", "x = 1  # ok?")]
    [True, True, True, True, False]
    """
    return (line.lstrip().startswith(("%", "!", "?")) or _ASSIGNED.match(line) is not None
            or _HELP_END.fullmatch(line) is not None)


def without_magics(lines: list[str]) -> list[str]:
    """A code cell's lines (without line ends) with its IPython magics commented out, as
    IPython finds them.

    A line magic, shell escape or help request (:func:`is_magic`) is one only where a logical
    line starts, as :mod:`tokenize` reads the code before it: a line that continues an open
    bracket, string or backslash (``% (u.shape, v.shape)`` under a ``"…%s"``) stays code
    (seventh red team: such a line was commented out, the topic failed to import and scored 0,
    while the notebook ran in Jupyter). A magic line ending in a backslash takes the next line
    with it, as IPython joins them. A cell magic on the first line that is not blank comments
    the whole cell unless it runs its body as Python (:data:`PYTHON_CELL_MAGICS`: then only
    its own line). A magic that is the first statement of a block (right under a line ending
    in ``:``) becomes ``pass`` with the magic as its comment, so the block is not left empty.
    Every line is kept, commented or not, so line numbers agree with the cell's.
    """
    head = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if head < len(lines) and lines[head].lstrip().startswith("%%"):
        name = lines[head].lstrip()[2:].split(maxsplit=1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return lines[:head] + [_MARK + line for line in lines[head:]]
        return lines[:head] + [_MARK + lines[head]] + without_magics(lines[head + 1:])
    return list(_commented(lines))


def _commented(lines: list[str]) -> Iterator[str]:
    """:func:`without_magics` on a cell without a cell magic: the tokenizer is fed the cell
    one line at a time, and each line is judged when the tokenizer asks for it, knowing every
    token before it (the pure-Python tokenizer reads a line only after it has handed out the
    last token of the one before). A magic line is fed as a blank line, so a shell command's
    quotes never reach the tokenizer."""
    out: list[str] = []
    # "opener": the last logical line ended with ":" (a block's header), so a magic here is
    # its block's first statement: it becomes ``pass`` (IPython runs a call there; a comment
    # alone would leave the block empty, a syntax error).
    state = {"depth": 0, "last": None, "magic_continues": False, "opener": False}
    # Only a line that looks like a magic needs the tokenizer's verdict: a cell without one is
    # returned as it is, and the tokenizer stops after the last one (it reads ten times
    # slower than the cell is split into lines: 2 MiB of code take seconds).
    last_candidate = max((i for i, line in enumerate(lines) if is_magic(line)), default=-1)

    def readline() -> str:
        i = len(out)
        if i == len(lines) or (i > last_candidate and not state["magic_continues"]):
            return ""
        line = lines[i]
        last = state["last"]
        at_start = i == 0 or (last is not None and last.type in (tokenize.NEWLINE, tokenize.NL)
                              and state["depth"] == 0)
        if state["magic_continues"] or (at_start and is_magic(line)):
            opens = at_start and not state["magic_continues"] and state["opener"]
            indent = line[:len(line) - len(line.lstrip())]
            out.append(indent + "pass  " + _MARK + line if opens else _MARK + line)
            state["magic_continues"] = line.endswith("\\")
            return "\n"
        out.append(line)
        return line + "\n"

    previous = None  # the last token of the logical line being read
    try:
        for tok in tokenize.generate_tokens(readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                state["depth"] += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                state["depth"] = max(0, state["depth"] - 1)
            if tok.type not in (tokenize.INDENT, tokenize.DEDENT):
                state["last"] = tok
            if tok.type == tokenize.NEWLINE:
                state["opener"] = previous is not None and previous.string == ":" \
                    and previous.type == tokenize.OP
            elif tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT,
                                  tokenize.DEDENT):
                previous = tok
    except (tokenize.TokenError, SyntaxError):
        # Code the tokenizer gives up on (an unterminated string at the cell's end, an
        # inconsistent dedent) does not compile either: the rest is kept as written, and
        # Python names the error when the file is loaded.
        pass
    yield from out
    yield from lines[len(out):]
