"""Fingerprints of the grades, kept to show that a change of structure changes no grade.

Two fingerprints live beside this file:

- ``example_class.json``: for each output file of ``course grade`` on the example class
  (``grades.csv``, ``results/<id>.json``, ``feedback/<id>.md``) the SHA-256 of its canonical
  bytes. Canonical means the file as written, except that a results file loses the fields that
  are meant to change between runs or releases: ``execution_time`` and the grader's and
  libraries' versions (docs/design/interface.md, determinism).
- ``banks.json``: for each bank variant (tests/banks/), the SHA-256 of its call-by-call verdicts:
  every test's name, pass/fail and message, in order, with every number in messages replaced
  (sign included) by ``#``: a wrong variant that draws random weights reports values that
  depend on the torch generator's state, which differs with what ran before it in the worker
  (the hidden phase runs in fresh workers, autograder/grading/loop.py).

``tests/test_golden.py`` and ``tests/test_banks.py`` compare against them. After a change that is
meant to change grades (a new test, new points), regenerate them and say why in the commit::

    .venv/bin/python -m tests.golden example --update
    .venv/bin/python -m tests.golden banks --update
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "example_class.json"
BANKS = HERE / "banks.json"

#: Results fields that change between runs (time) or releases (versions) by design.
VOLATILE = ("execution_time",)
VOLATILE_EXTRA = ("grader_version", "python", "numpy", "torch", "triton")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_result(raw: bytes) -> bytes:
    """A results file's bytes without its volatile fields, keys in file order."""
    doc = json.loads(raw)
    for key in VOLATILE:
        doc.pop(key, None)
    for key in VOLATILE_EXTRA:
        doc.get("extra_data", {}).pop(key, None)
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")


def outputs_fingerprint(out: Path) -> dict[str, str]:
    """File (relative to ``out``) -> SHA-256 of its canonical bytes, for a graded batch."""
    found = {"grades.csv": _sha((out / "grades.csv").read_bytes())}
    for p in sorted((out / "results").glob("*.json")):
        found[f"results/{p.name}"] = _sha(canonical_result(p.read_bytes()))
    for p in sorted((out / "feedback").glob("*.md")):
        found[f"feedback/{p.name}"] = _sha(p.read_bytes())
    return found


NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def verdicts_digest(results: dict, unsettled: tuple[str, ...] = ()) -> str:
    """SHA-256 of (name, passed, message with numbers as ``#``) for every test, in order.

    A public test's message without the traceback lines of the variant's own file
    (``errors.without_frames``): where a variant's code sits in its file is no verdict. A test
    whose function name is in ``unsettled`` (a bank variant's
    :attr:`tests.banks.Variant.unsettled`: its verdict follows the BLAS kernel) counts by its
    name alone, so the digest is the same on every processor.
    """
    from autograder.driver.errors import without_frames

    rows = [[name, None, "unsettled"] if r.spec.fn.__name__ in unsettled
            else [name, bool(r.passed), NUMBER.sub("#", without_frames(r.message))]
            for name, r in results.items()]
    return _sha(json.dumps(rows, ensure_ascii=False).encode("utf-8"))


def load(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def save(path: Path, data: dict[str, str]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
