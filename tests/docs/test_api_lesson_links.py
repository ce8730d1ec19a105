"""The API reference's lesson lines are links (issue 38, item 4): every ``Lesson NN, "Title"``
of an exercise's docstring becomes a link to an anchor that exists in that lesson's page.

Checked on the docstrings as mkdocstrings gets them (griffe with the site's extensions), without
building the site.
"""

from __future__ import annotations

import re

import pytest

from autograder import catalogue
from tests.helpers import ROOT

griffe = pytest.importorskip("griffe")

LINK = re.compile(r'\[(Lesson: docs/lessons/[\w.-]+\.md|Lesson \d+(?:,\s+"[^"]+")?'
                  r'|lesson section\s+"[^"]+")\]\(\.\./(lessons/[\w.-]+\.md)(#[\w-]+)?\)')


def _docstrings(module: str) -> list[str]:
    extensions = griffe.load_extensions(
        f"{ROOT / 'docs/hooks/griffe_examples.py'}:LessonLinks")
    mod = griffe.load(module, search_paths=[str(ROOT / "exercises")], extensions=extensions)
    members = [m for m in mod.members.values() if not m.is_alias]  # not the imports
    return [m.docstring.value for m in [mod, *members] if m.docstring is not None]


@pytest.mark.parametrize("module", catalogue.topic_modules())
def test_every_lesson_line_of_the_reference_links_to_a_real_anchor(module):
    linked = 0
    for text in _docstrings(module):
        unlinked = re.sub(LINK, "", text)
        assert not re.search(r'\bLesson \d+,\s+"|Lesson: docs/|lesson section\s+"', unlinked), \
            unlinked
        for _, page, anchor in LINK.findall(text):
            lesson = (ROOT / "docs" / page).read_text("utf-8")
            assert page.startswith("lessons/")
            if anchor:
                assert f"{{{anchor}}}" in lesson, (page, anchor)
            linked += 1
    assert linked  # every module names its lesson (its docstring's "Lesson:" line at least)
