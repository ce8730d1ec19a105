"""Banks of alternative implementations, graded by tests/test_banks.py.

Each ``wrong_<topic>.py`` / ``correct_<topic>.py`` module defines ``BANK: list[Variant]``. A
variant's ``code`` is appended to the reference solution of its topic, so its definitions replace
the reference's; the result is graded through the real sandbox on the topic's full suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    function: str  # the catalogue exercise the code replaces (function or class name)
    why: str  # the plausible mistake, or what makes this correct version different
    code: str  # Python source defining ``function`` (and anything it needs)
    # Other exercises of the topic that may also lose points because they call ``function``.
    also: tuple[str, ...] = field(default=())
