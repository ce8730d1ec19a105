"""Code the lessons show (snippet sections of the companion notebooks) fits the page."""

from __future__ import annotations

import re

import pytest

from .conftest import DOCS

# Material's code blocks show about 82 monospace characters at the default desktop width;
# longer lines scroll sideways, and a comment hidden off-screen is a comment not read.
SHOWN_WIDTH = 80


def shown_lines(path):
    """(line number, text) of every line inside a ``--8<-- [start:…]``/``[end:…]`` section."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.search(r"--8<-- \[start:", line):
            inside = True
        elif re.search(r"--8<-- \[end:", line):
            inside = False
        elif inside:
            yield number, line


@pytest.mark.parametrize(
    "notebook", sorted((DOCS / "notebooks").glob("*.py")), ids=lambda p: p.stem
)
def test_shown_code_fits_the_page(notebook):
    long = [f"{n}: {len(s)}" for n, s in shown_lines(notebook) if len(s) > SHOWN_WIDTH]
    assert not long, f"{notebook.name}: lines wider than {SHOWN_WIDTH} shown in a lesson: {long}"


def test_every_included_section_exists():
    """Each ``--8<-- "docs/notebooks/…py:name"`` of a lesson names a section that is there."""
    for lesson in (DOCS / "lessons").glob("*.md"):
        for path, name in re.findall(
            r'--8<-- "docs/notebooks/([\w.-]+\.py):(\w+)"', lesson.read_text(encoding="utf-8")
        ):
            text = (DOCS / "notebooks" / path).read_text(encoding="utf-8")
            assert f"[start:{name}]" in text and f"[end:{name}]" in text, (lesson.name, name)
