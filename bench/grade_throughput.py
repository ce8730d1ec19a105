"""Grading throughput: `course grade` against one-pytest-per-submission and nbgrader autograde.

    python bench/grade_throughput.py [--n 300] [--jobs 2] [--pytest-sample 10] [--no-nbgrader]

Generates a class of N submissions in a temp dir (a realistic mix: complete ones each written
their own way, partly right, stubs, broken, slow; see ``make_class``), then times, in one run on
the same class:
  1. `course grade --jobs J` on all N (the real CLI, a fresh process);
  2. the same suites run by one plain `pytest` process per submission, on a sample, scaled;
  3. `nbgrader autograde` on the notebook form of a correct and a stub student (all topics).
It prints seconds per submission, the ratio against each baseline, peak memory, and the time spent
in student code vs grader overhead. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import catalogue  # noqa: E402

SLOW = '''
import time
import numpy as np

def dot(u, v):
    time.sleep(0.05)  # a slow but correct student
    return float(np.dot(np.asarray(u, dtype=float), np.asarray(v, dtype=float)))
'''
BROKEN = "def dot(u, v)\n    return 0\n"


def _bank(kind: str, topic: str) -> list:
    """The repository's own alternative implementations (tests/banks), if present."""
    import importlib

    try:
        return importlib.import_module(f"tests.banks.{kind}_{topic}").BANK
    except ImportError:
        return []


def _variant_source(topic: str, kind: str, i: int) -> str:
    """The reference of ``topic`` with the ``i``-th correct or wrong variant in place (rotating
    through the bank), so that no two students hand in byte-identical code."""
    source = (ROOT / "solutions" / f"{topic}.py").read_text()
    bank = _bank(kind, topic)
    if not bank:
        return source
    return source + "\n\n# --- this student's version ---\n" + bank[i % len(bank)].code + "\n"


def make_class(dest: Path, n: int, topics: list[str] | None = None) -> list[Path]:
    """n submissions: 40 % complete, 25 % partly right, 15 % stubs, 10 % broken, 10 % slow.

    "Complete" students each write one function of every topic their own (correct) way, and
    partly right ones mix such topics with a plausible mistake (tests/banks) and untouched
    stubs: a class of copies of the reference would be graded faster than any real one.
    """
    ex = ROOT / "exercises"
    kinds = ["complete"] * 8 + ["partial"] * 5 + ["stub"] * 3 + ["broken"] * 2 + ["slow"] * 2
    dest.mkdir(parents=True)
    for i in range(n):
        kind = kinds[i % len(kinds)]
        d = dest / f"s{i:04d}_{kind}"
        d.mkdir()
        for j, t in enumerate(catalogue.topics()):
            if topics and t.module not in topics:
                continue  # a missing topic: graded as such, in no time
            if kind == "complete" or (kind == "partial" and (i + j) % 3 == 0):
                (d / t.filename).write_text(_variant_source(t.module, "correct", i + j))
            elif kind == "partial" and (i + j) % 3 == 1:
                (d / t.filename).write_text(_variant_source(t.module, "wrong", i + j))
            elif kind in ("stub", "partial"):
                shutil.copy(ex / t.filename, d / t.filename)
        if kind == "broken":
            (d / "ex01_vectors.py").write_text(BROKEN)
        if kind == "slow":
            shutil.copy(ROOT / "solutions" / "ex01_vectors.py", d / "ex01_vectors.py")
            with open(d / "ex01_vectors.py", "a") as f:
                f.write(SLOW)
    return sorted(dest.iterdir())


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    return time.monotonic() - t0, proc


def bench_course(class_dir: Path, out: Path, jobs: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    secs, proc = timed([sys.executable, "-m", "autograder.cli", "grade", "--class",
                        str(class_dir), "--out", str(out), "--jobs", str(jobs)])
    if proc.returncode != 0:
        raise SystemExit(f"course grade failed:\n{proc.stderr[-3000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    docs = [json.loads(p.read_text()) for p in (out / "results").glob("*.json")]
    exec_total = sum(d["execution_time"] for d in docs)
    return {"seconds": secs, "n": len(docs), "peak_kib": peak, "exec_total": exec_total}


def bench_student_share(class_dir: Path, sample: int, jobs: int) -> dict:
    """Student-code seconds vs grader overhead, measured inside grade_batch on a sample."""
    from autograder.grading import batch as grade

    paths = sorted(class_dir.iterdir())[:sample]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        summaries = grade.grade_batch(paths, Path(tmp), jobs=1)
        wall = time.monotonic() - t0
    student = sum(s.student_seconds for s in summaries)
    busy = sum(s.busy_seconds for s in summaries)
    graded = sum(s.seconds for s in summaries)
    return {"n": len(summaries), "wall": wall, "student": student, "graded": graded,
            "busy": busy}


def bench_pytest(class_dir: Path, sample: int, topics: list[str] | None = None) -> dict:
    paths = sorted(class_dir.iterdir())[:sample]
    suites = [str(p) for p in sorted((ROOT / "autograder" / "suites").rglob("ex0*.py"))
              if not topics or p.stem in topics]
    t0 = time.monotonic()
    for p in paths:
        timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites,
               "--submission", str(p)], cwd=ROOT)
    return {"n": len(paths), "seconds": time.monotonic() - t0}


def bench_nbgrader() -> dict | None:
    """nbgrader autograde vs course grade on the same collected notebooks (all topics).

    Reuses the end-to-end flow of tests/test_nbgrader.py (export, release, a correct and a stub
    student, autograde), which times both graders on that class in one run.
    """
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        return None
    os.environ["COURSE_NBGRADER_TOPICS"] = "all"
    from tests import test_nbgrader

    with tempfile.TemporaryDirectory(prefix="bench-nb-") as tmp:
        return test_nbgrader._build_class(Path(tmp))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--pytest-sample", type=int, default=10)
    ap.add_argument("--no-nbgrader", dest="nbgrader", action="store_false",
                    help="skip the nbgrader baseline (about 3 minutes)")
    ap.add_argument("--share-sample", type=int, default=20)
    ap.add_argument("--topics", default="",
                    help="comma-separated topic modules the class hands in (default: all); the "
                         "others are missing. For a quick smoke run, not for a measurement.")
    args = ap.parse_args()
    topics = [t for t in args.topics.split(",") if t] or None
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, args.n, topics)
        course = bench_course(class_dir, Path(tmp) / "out", args.jobs)
        share = bench_student_share(class_dir, min(args.share_sample, args.n), args.jobs)
        pyt = bench_pytest(class_dir, min(args.pytest_sample, args.n), topics)
        nbg = bench_nbgrader() if args.nbgrader else None
    per = course["seconds"] / course["n"]
    rows = [("course grade --jobs %d" % args.jobs, per, 1.0)]
    pyt_per = pyt["seconds"] / pyt["n"]
    rows.append((f"pytest per submission (sample {pyt['n']})", pyt_per, pyt_per / per))
    if nbg:
        nb_per = nbg["nbgrader_autograde_s_per_submission"]
        rows.append((f"nbgrader autograde ({nbg['students']} students)", nb_per, nb_per / per))
    overhead = (share["graded"] - share["student"]) / share["n"]
    setup = share["wall"] - share["graded"]
    print(f"\nclass of {course['n']} submissions, {os.cpu_count()} cores\n")
    print("| grader | s / submission | × course grade |")
    print("|---|---:|---:|")
    for name, s, ratio in rows:
        print(f"| {name} | {s:.3f} | {ratio:.1f} |")
    print(f"\npeak memory (largest child process): {course['peak_kib'] / 1024:.0f} MiB")
    n = share["n"]
    print(f"waiting for workers' replies: {share['student'] / n:.3f} s/submission, of which "
          f"{share['busy'] / n:.3f} s inside the calls themselves (the worker's clock); "
          f"grader overhead (the rest of each submission's wall time, one slot): "
          f"{overhead:.3f} s/submission (sample {n})")
    print(f"everything but the student's own calls: {(share['graded'] - share['busy']) / n:.3f} "
          f"s/submission (the sandbox's encoding, decoding and round trips included)")
    print(f"once per slot and batch, plus reading and writing files (same sample, one slot): "
          f"{setup:.1f} s, i.e. {setup / course['n']:.3f} s/submission over this class")
    if not nbg:
        print("nbgrader: not measured (nbgrader or the export is not available)")


if __name__ == "__main__":
    main()
