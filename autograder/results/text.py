"""Escaping of student-sourced text for each output (red team: a submission chooses its id
and the messages its code raises, and none of them may become markup, a formula or a line of
its own in what instructors and students read)."""

from __future__ import annotations

import re
import unicodedata

#: Every character ``str.splitlines`` ends a line at, and how :func:`one_line` writes it.
_LINE_BREAKS = {c: c.encode("unicode_escape").decode("ascii")
                for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """``text`` on one line: each line break written as its escape (``\\n``, ``\\u2028``).

    A topic's note quotes what the submission raised, newlines included: in the ``output``
    summary or the feedback's quote, a message could start lines of its own (a fake
    "ex02_projections: …" reason, a markdown heading).
    """
    return "".join(_LINE_BREAKS.get(c, c) for c in text)


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control, format, surrogate or unassigned character (Unicode's
    category C: ESC starts a terminal's escape sequence, U+202E reverses what a reader sees)
    written as its escape (``\\x1b``, ``\\u202e``), but those in ``keep`` (``"\\n\\t"``
    for text shown as lines): an instructor who prints a file or a table in a terminal sees
    the characters, and the terminal obeys none of them (red team: an id holding a
    clear-screen, colours and a window title)."""
    return "".join(c if c in keep or unicodedata.category(c)[0] != "C"
                   else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


def code_span(text: str) -> str:
    """``text`` (one line) as a CommonMark code span: shown as it is, nothing in it read as
    Markdown or HTML. The fence is one backtick longer than the longest run inside, and padded
    with a space each side where the text starts or ends with a backtick or a space (the
    renderer strips one space each side again)."""
    if not text.strip():
        return ""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text[0] in "` " or text[-1] in "` ":
        text = f" {text} "
    return f"{fence}{text}{fence}"


def md_text(text: str) -> str:
    """Student-sourced ``text`` for feedback.md: each line a code span (no Markdown or raw HTML
    of the student's is rendered: no heading, link, image or fake test), the lines after the
    first quoted under the line they belong to, control characters escaped (:func:`printable`).

    Lines end wherever ``str.splitlines`` ends one, which covers CommonMark's ``\\r`` and
    ``\\r\\n`` (red team: a bare ``\\r`` in a message started top-level lines of its own, a
    forged "Total: 100.00 / 100.00" among them).
    """
    head, *rest = [code_span(printable(line)) for line in text.splitlines()] or [""]
    return head + "".join(f"\n  > {line}" for line in rest)


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting with ``= + - @``, a tab or a carriage
    return would be read as a formula (an id like ``=HYPERLINK(…)``: red team), so it gets
    a leading apostrophe, as OWASP advises."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
