"""Compute (and with ``--update`` store) the grade fingerprints: ``python -m tests.golden``.

``example``: grades the example class with ``course grade`` and fingerprints its outputs.
``banks``: grades every bank variant call by call and fingerprints its verdicts; ``--topic T``
(repeatable) grades only topic T's variants, compares only their keys, and with ``--update``
merges them into the stored file, leaving every other key as it was (regenerating all of them
takes long).
Exit 0 when the fingerprint matches the stored one (or was updated), 1 when it differs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import golden
from tests.helpers import course_env


def example_fingerprint() -> dict[str, str]:
    from autograder.cli import demo

    with tempfile.TemporaryDirectory() as tmp:
        class_dir = demo.assemble(Path(tmp) / "class")[0].parent
        out = Path(tmp) / "out"
        # this checkout's grader (PYTHONPATH), not whichever one the venv's `course` script was
        # installed from: a worktree's goldens are its own
        subprocess.run([sys.executable, "-m", "autograder", "grade", "--class", str(class_dir),
                        "--out", str(out), "--jobs", "2"], check=True,
                       stdout=subprocess.DEVNULL, env=course_env())
        return golden.outputs_fingerprint(out)


def banks_fingerprint(topics: list[str] | None = None) -> dict[str, str]:
    """Key -> verdicts digest of every bank variant, or only those of ``topics``."""
    from autograder.driver.slot import Slot
    from tests.banks import all_variants
    from tests.helpers import grade_sources, with_replacement

    found = {}
    with Slot(0) as slot:
        for key, topic, variant in all_variants():
            if topics and topic not in topics:
                continue
            results = grade_sources(slot, {topic: with_replacement(topic, variant.code)}, [topic])
            found[key] = golden.verdicts_digest(results, variant.unsettled)
            print(key, file=sys.stderr)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.golden")
    ap.add_argument("which", choices=("example", "banks"))
    ap.add_argument("--update", action="store_true", help="store the new fingerprint")
    ap.add_argument("--topic", action="append", default=[], metavar="TOPIC",
                    help="banks only: just this topic's variants (repeatable), merged into the "
                         "stored file by --update")
    args = ap.parse_args()
    if args.topic and args.which != "banks":
        ap.error("--topic applies to banks only")
    from autograder import catalogue

    unknown = sorted(set(args.topic) - set(catalogue.topic_modules()))
    if unknown:
        ap.error(f"--topic: unknown topic module(s) {', '.join(unknown)} (e.g. ex08_flash_attention)")
    path = golden.EXAMPLE if args.which == "example" else golden.BANKS
    now = example_fingerprint() if args.which == "example" else banks_fingerprint(args.topic)
    stored = golden.load(path)
    if args.topic:
        # Only these topics' keys are compared or replaced; the rest stays as stored.
        mine = {k for k in stored if k.split("-", 2)[1] in args.topic}
        stored = {k: v for k, v in stored.items() if k in mine}
        if args.update:
            merged = {k: v for k, v in golden.load(path).items() if k not in mine}
            golden.save(path, {**merged, **now})
            print(f"{path}: {len(now)} fingerprints of {', '.join(args.topic)} stored")
            return 0
    if args.update:
        golden.save(path, now)
        print(f"{path}: {len(now)} fingerprints stored")
        return 0
    changed = sorted(k for k in now.keys() | stored.keys() if now.get(k) != stored.get(k))
    print(f"{len(changed)} of {len(now)} differ" + (": " + ", ".join(changed[:10]) if changed else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
