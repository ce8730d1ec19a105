"""The API reference shows a row for every parameter of every documented function.

mkdocstrings renders a function's Args section as a table, one row per entry that griffe's
Google-style parser finds. Two parameters described on one line (``q: ...; k: ...``) read as
one entry, and the reference silently drops the other's row (``FlashAttention.forward`` lost k
and v that way). Parsed here as the site parses them, from the stubs the site documents.
"""

from __future__ import annotations

import griffe
import pytest
from griffe import DocstringSectionKind

from .conftest import ROOT

MODULES = sorted(p.stem for p in (ROOT / "exercises").glob("ex0*.py"))


def documented_functions(obj):
    for name, member in obj.members.items():
        if member.is_alias or (name.startswith("_") and name != "__init__"):
            continue
        if member.is_class:
            yield from documented_functions(member)
        elif member.is_function and member.docstring:
            yield member


@pytest.mark.parametrize("module", MODULES)
def test_every_parameter_has_a_row(module):
    mod = griffe.load(module, search_paths=[str(ROOT / "exercises")], docstring_parser="google")
    missing = []
    for fn in documented_functions(mod):
        # the options mkdocs.yml gives the python handler
        sections = fn.docstring.parse("google", returns_multiple_items=False)
        rows = {
            p.name.lstrip("*")
            for s in sections
            if s.kind is DocstringSectionKind.parameters
            for p in s.value
        }
        params = [p.name for p in fn.parameters if p.name not in ("self", "cls")]
        if rows:  # a function whose docstring has an Args section at all
            missing += [f"{fn.path}: {p}" for p in params if p not in rows]
    assert not missing, f"parameters with no row in the API reference: {missing}"
