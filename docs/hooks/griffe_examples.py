"""Griffe extension for the API reference: read an ``Example:`` section as ``Examples:``.

The exercises' docstrings title their doctest section ``Example:``. Google style's section for
doctests is ``Examples:``; any other title becomes an admonition whose ``>>>`` lines markdown
would turn into nested quotes. Renaming the title before parsing renders them as code.
"""

from __future__ import annotations

import re

from griffe import Extension

EXAMPLE = re.compile(r"^(\s*)Example:\s*$", flags=re.MULTILINE)


class ExampleSections(Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
