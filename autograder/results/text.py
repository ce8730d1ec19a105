"""Escaping of student-sourced text for each output (red team: a submission chooses its id
and the messages its code raises, and none of them may become markup, a formula or a line of
its own in what instructors and students read)."""

from __future__ import annotations

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


def md_text(text: str) -> str:
    """Student-sourced ``text`` for feedback.md: no raw HTML (a Markdown viewer would render a
    ``<script>``), and each further line quoted under the line it belongs to, so a message
    cannot start a heading or a fake test of its own (red team)."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    head, *rest = safe.split("\n")
    return head + "".join(f"\n  > {line}" for line in rest)


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting with ``= + - @``, a tab or a carriage
    return would be read as a formula (an id like ``=HYPERLINK(…)``: red team), so it gets
    a leading apostrophe, as OWASP advises."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
