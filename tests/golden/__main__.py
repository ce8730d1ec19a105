"""Compute (and with ``--update`` store) the grade fingerprints: ``python -m tests.golden``.

``example``: grades the example class with ``course grade`` and fingerprints its outputs.
``banks``: grades every bank variant call by call and fingerprints its verdicts.
Exit 0 when the fingerprint matches the stored one (or was updated), 1 when it differs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import golden


def example_fingerprint() -> dict[str, str]:
    from autograder.cli import demo

    with tempfile.TemporaryDirectory() as tmp:
        class_dir = demo.assemble(Path(tmp) / "class")[0].parent
        out = Path(tmp) / "out"
        subprocess.run([str(Path(sys.executable).parent / "course"), "grade", "--class", str(class_dir),
                        "--out", str(out), "--jobs", "2"], check=True,
                       stdout=subprocess.DEVNULL)
        return golden.outputs_fingerprint(out)


def banks_fingerprint() -> dict[str, str]:
    from tests.banks import all_variants
    from tests.helpers import grade_sources, with_replacement
    from autograder.sandbox.slot import Slot

    found = {}
    with Slot(0) as slot:
        for key, topic, variant in all_variants():
            results = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic])
            found[key] = golden.verdicts_digest(results)
            print(key, file=sys.stderr)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.golden")
    ap.add_argument("which", choices=("example", "banks"))
    ap.add_argument("--update", action="store_true", help="store the new fingerprint")
    args = ap.parse_args()
    path = golden.EXAMPLE if args.which == "example" else golden.BANKS
    now = example_fingerprint() if args.which == "example" else banks_fingerprint()
    if args.update:
        golden.save(path, now)
        print(f"{path}: {len(now)} fingerprints stored")
        return 0
    stored = golden.load(path)
    changed = sorted(k for k in now.keys() | stored.keys() if now.get(k) != stored.get(k))
    print(f"{len(changed)} of {len(now)} differ" + (": " + ", ".join(changed[:10]) if changed else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
