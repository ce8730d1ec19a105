"""Time `course similarity` on a generated class (a benchmark, not a test).

Each student's topic file holds, per exercise, one of: the reference's definition, a correct or
a wrong variant from tests/banks/, or the untouched stub, picked at random and in a random
order (tests/similar_code.py); every tenth student copies one topic of the student before,
with names renamed and definitions reordered. So most pairs share some functions, as a real
class's do, and some are copies.

    .venv/bin/python bench/similarity_class.py [--n 300] [--keep DIR]

Measured (2026-12, the class of 300: 358,800 pairs, 2,416 distinct files): 41 CPU-seconds
(`/usr/bin/time`: 40.4 s user, 0.9 s system, the two tokenising processes included), 88 s of
wall clock on a 2-core machine shared with other jobs (load average 8), 203 s at load average
12; Pygments' lexing is about two thirds of the CPU, the all-pairs scores most of the rest. All
30 disguised copies scored at least 0.66 (threshold 0.5).
"""

from __future__ import annotations

import argparse
import csv
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import catalogue
from tests.similar_code import choices, disguise, student


def build(folder: Path, n: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """Write ``n`` submissions into ``folder``; the disguised copies made, as (topic, a, b)."""
    rng = random.Random(seed)
    options = {t: choices(t) for t in catalogue.topic_modules()}
    copies = []
    previous: dict[str, str] = {}
    for i in range(n):
        files = {t: student(t, rng, opts) for t, opts in options.items()}
        if i % 10 == 9:
            t = rng.choice(list(files))
            files[t] = disguise(previous[t], seed=i)
            copies.append((t, f"s{i - 1:04d}", f"s{i:04d}"))
        sub = folder / f"s{i:04d}"
        sub.mkdir(parents=True)
        for t, text in files.items():
            (sub / f"{t}.py").write_text(text, "utf-8")
        previous = files
    return copies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--keep", type=Path, help="build the class here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "class"
        copies = build(folder, args.n)
        out = Path(tmp) / "out"
        t0 = time.monotonic()
        proc = subprocess.run([str(Path(sys.executable).with_name("course")), "similarity",
                               "--class", str(folder), "--out", str(out)],
                              capture_output=True, text=True, check=False)
        wall = time.monotonic() - t0
        print(proc.stdout.strip() or proc.stderr[-2000:])
        print(f"course similarity on {args.n} submissions ({len(copies)} disguised copies): "
              f"{wall:.1f} s wall clock")
        if proc.returncode:
            return proc.returncode
        with (out / "similarity.csv").open(newline="", encoding="utf-8") as f:
            scores = {(r["topic"], r["a"], r["b"]): float(r["score"]) for r in csv.DictReader(f)}
        found = sorted(scores[c] for c in copies)
        print(f"disguised copies at or above 0.5: {sum(x >= 0.5 for x in found)}/{len(found)} "
              f"(lowest score {found[0]:.2f})" if found else "no copies (n < 10)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
