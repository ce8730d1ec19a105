"""The two sweeps' price: `course grade` on one class, graded by an earlier checkout of the
grader (before the sweeps) and by this one, back to back on the same machine.

    python bench/sweeps_before_after.py --before DIR [--n 300] [--jobs 2] [--order ab|ba]

``--before`` is a checkout of the earlier grader (``git worktree add --detach DIR c2d875e``:
the last commit before the sweeps); it runs with this checkout's virtualenv and that folder
first on PYTHONPATH. The class is bench/grade_throughput.py's realistic mix, made once.
Prints each run's seconds and the ratio after / before. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grade_throughput import make_class  # noqa: E402


def run(tree: Path, class_dir: Path, out: Path, jobs: int) -> float:
    """Seconds of `course grade --class CLASS --out OUT --jobs J` with ``tree``'s grader.

    With a phase lock of its own (autograder/grading/phase_lock.py): the price measured is the
    sweeps', not a wait for another grader that happens to run on this machine."""
    env = {**os.environ, "PYTHONPATH": str(tree),
           "COURSE_PHASE_LOCK": str(out.parent / f"{out.name}.lock")}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--class",
                           str(class_dir), "--out", str(out), "--jobs", str(jobs)],
                          cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=ROOT,
                    help="the checkout of the grader after (default: this one)")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--order", choices=("ab", "ba"), default="ab",
                    help="which runs first: before (ab) or after (ba)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sweeps-bench-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, args.n)
        trees = [("before", args.before.resolve()), ("after", args.after.resolve())]
        if args.order == "ba":
            trees.reverse()
        seconds = {name: run(tree, class_dir, Path(tmp) / f"out-{name}", args.jobs)
                   for name, tree in trees}
    for name, _ in trees:
        print(f"{name:>6}: {seconds[name]:7.1f} s  ({seconds[name] / args.n:.3f} s/submission)")
    print(f" ratio: {seconds['after'] / seconds['before']:.3f} (after / before, class of "
          f"{args.n}, --jobs {args.jobs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
