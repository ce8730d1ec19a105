"""Griffe extensions for the API reference: read an ``Example:`` section as ``Examples:``, and
make a docstring's lesson reference a link (:class:`LessonLinks`).

The exercises' docstrings title their doctest section ``Example:``. Google style's section for
doctests is ``Examples:``; any other title becomes an admonition whose ``>>>`` lines markdown
would turn into nested quotes. Renaming the title before parsing renders them as code.
"""

from __future__ import annotations

import re
from pathlib import Path

from griffe import Extension

EXAMPLE = re.compile(r"^(\s*)Example:\s*$", flags=re.MULTILINE)


class ExampleSections(Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = EXAMPLE.sub(r"\1Examples:", obj.docstring.value)


#: A docstring's lesson references: the module's ``Lesson: docs/lessons/03-softmax.md`` line, a
#: ``Source:`` line's ``Lesson 03, "The max-subtraction trick"`` (the title may wrap onto the next
#: line) or bare ``Lesson 03``, and ``lesson section "Masks and the KV cache"`` (the module's own
#: lesson).
LESSON = re.compile(r'Lesson: docs/(?P<page>lessons/[\w.-]+\.md)'
                    r'|\bLesson (?P<number>\d{1,2})(?:,\s+"(?P<title>[^"]+)")?'
                    r'|\blesson section\s+"(?P<section>[^"]+)"')
#: A lesson page's heading with its explicit id: ``## Overflow {#overflow}``.
HEADING = re.compile(r"^#{2,6}\s+(.+?)\s*\{#([\w-]+)\}\s*$", flags=re.MULTILINE)


def _anchors(page: Path) -> dict[str, str]:
    """A lesson page's heading titles (whitespace collapsed) -> their ids ({} when unread)."""
    try:
        text = page.read_text("utf-8")
    except OSError:
        return {}
    return {" ".join(title.split()): anchor for title, anchor in HEADING.findall(text)}


def lesson_link(m: re.Match, qualname: str, docs: Path) -> str | None:
    """The target, relative to an API reference page (``docs/reference/*.md``), of the lesson
    reference ``m`` (:data:`LESSON`) in the docstring of ``qualname``: the lesson page, at the
    heading of the title named, else at the anchor the catalogue gives exercise ``qualname``
    where that lesson is its topic's, else at the top; None for a lesson the catalogue does not
    know."""
    from autograder import catalogue

    if m.group("page"):
        return f"../{m.group('page')}"
    try:
        topic = catalogue.get_topic(m.group("number") or qualname.split(".")[0])
    except KeyError:
        return None
    title = m.group("title") or m.group("section")
    anchor = _anchors(docs / topic.lesson_page).get(" ".join((title or "").split()), "")
    if anchor:
        anchor = f"#{anchor}"
    elif title:
        try:
            ex = catalogue.get_exercise(qualname)
        except KeyError:
            ex = None
        anchor = ex.anchor if ex is not None and ex.topic == topic.module else ""
    return f"../{topic.lesson_page}{anchor}"


class LessonLinks(Extension):
    """The lesson lines of the exercises' docstrings (:data:`LESSON`) become links to the
    lesson's page and section in the API reference (issue 38: they were plain text, one more
    search for the student)."""

    docs = Path(__file__).resolve().parent.parent

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is None:
            return

        def link(m: re.Match) -> str:
            target = lesson_link(m, obj.path, self.docs)
            return f"[{m.group(0)}]({target})" if target else m.group(0)

        obj.docstring.value = LESSON.sub(link, obj.docstring.value)
