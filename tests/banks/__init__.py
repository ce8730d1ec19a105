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
    # Tests (their function names, ``test_condition_rank_deficient``) whose verdict for this
    # variant the last bits of the BLAS kernel decide, and no input can settle: a wrong method
    # that turns an exactly singular input's σ_min into the sign of a rounding error (the
    # correct grade there is exact on every kernel). tests/golden records them as unsettled,
    # and the variant must lose points in a settled test (docs/design/measured-facts.md, "The
    # same grades on every BLAS kernel").
    unsettled: tuple[str, ...] = field(default=())


def all_variants(kind: str | None = None) -> list[tuple[str, str, Variant]]:
    """Every variant as (key, topic, variant), modules in name order; ``kind``: ``wrong`` or
    ``correct`` (None: both). The key (``wrong-ex05_attention-causal_mask-0``) names the variant
    in test ids and in tests/golden/banks.json."""
    import importlib
    import pkgutil

    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        bank_kind, _, topic = info.name.partition("_")
        if bank_kind not in ("wrong", "correct") or kind not in (None, bank_kind):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for i, v in enumerate(mod.BANK):
            found.append((f"{bank_kind}-{topic}-{v.function}-{i}", topic, v))
    return found
