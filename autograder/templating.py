"""The files outputs and exports are filled from: ``templates/`` folders beside their modules.

A template is ordinary text with ``@{name}`` placeholders (``@@{`` writes a literal ``@{``);
nothing else is special, so shell scripts, Makefiles, CSS and HTML keep their own ``$`` and
braces as they are. It is :class:`string.Template` with that one pattern. Templates are package
data (pyproject's ``[tool.setuptools.package-data]``), read with :mod:`importlib.resources`, so
an installed package finds them too; the grader version digests them
(autograder.results.version).
"""

from __future__ import annotations

import string
from importlib import resources


class FileTemplate(string.Template):
    """``string.Template`` with ``@{name}`` placeholders only (no bare ``@name``)."""

    delimiter = "@"
    pattern = r"""@(?:
        (?P<escaped>@(?=\{))          |  # @@{ -> @{
        \{(?P<braced>[a-z_][a-z0-9_]*)\} |
        (?P<named>(?!))               |  # never: a bare @word is plain text (Makefile's @echo)
        (?P<invalid>\{)                  # @{ not closing a valid name
    )"""


def text(package: str, name: str) -> str:
    """The template ``name`` of ``package`` (its ``templates/`` folder; ``name`` may hold
    ``/``), as text, filled with nothing.

    Raises:
        FileNotFoundError: there is no such template (the message names package and file).
    """
    path = resources.files(package).joinpath("templates", *name.split("/"))
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{package}: no template templates/{name} (is the package "
                                "data installed?)") from None


def fill(package: str, name: str, **values: object) -> str:
    """The template ``name`` of ``package`` with every ``@{key}`` replaced by ``values[key]``.

    Raises:
        KeyError: the template names a value not given (``values`` lacks it).
        ValueError: a malformed placeholder (its line is named).
    """
    try:
        return FileTemplate(text(package, name)).substitute(
            {k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise KeyError(f"{package} templates/{name}: no value for @{{{exc.args[0]}}}") from None
    except ValueError as exc:
        raise ValueError(f"{package} templates/{name}: {exc}") from None
