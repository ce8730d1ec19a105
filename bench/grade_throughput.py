"""Grading throughput: `course grade` against one-pytest-per-submission, nbgrader autograde and
Otter-Grader's `otter run`.

    python bench/grade_throughput.py [--n 300] [--jobs 2] [--pytest-sample 10] [--no-nbgrader]
                                     [--otter-sample 10] [--shards 2]

Generates a class of N submissions in a temp dir (a realistic mix: complete ones each written
their own way, partly right, stubs, broken, slow; see ``make_class``), then times, in one run on
the same class:
  1. `course grade --jobs J` on all N (the real CLI, a fresh process);
  2. the same suites run by one plain `pytest` process per submission, on a sample, scaled;
  2b. with --shards N (default 2): N concurrent `course grade --shard K/N --jobs 1` on this
      machine into one folder, then `course report` (the merge), wall time for the class;
  3. `nbgrader autograde` on the notebook form of a correct and a stub student (all topics);
  4. `otter run` (Otter-Grader 7, the command Gradescope's Otter images run per submission), one
     call per topic the student handed in (a topic is one Otter assignment, its autograder zip
     built once by `otter generate` from the same suites: bench/otter_bridge.py), on a sample,
     scaled; plus a complete and a stub student, whose scores are printed beside course grade's
     to show that the bridge grades. Only where bench/setup_otter.sh made bench/.otter-venv.
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


def timed(cmd: list[str], env: dict[str, str] | None = None,
          **kw) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``cmd`` with the repository on PYTHONPATH (and ``env`` on top); (seconds, process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
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


def bench_shards(class_dir: Path, out: Path, shards: int, whole: Path) -> dict:
    """`course grade --shard K/N --jobs 1` for K = 0..N-1, all at once on this machine into one
    output folder, then `course report --class`: the wall time of the whole, and whether its
    grades.csv is the unsharded run's (``whole``) byte for byte. On one machine the shards are
    N graders that the host-wide phase lock orders (hidden sweeps one at a time): this is what
    one node of a cluster pays, not a cluster's speed-up."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", "--class",
                               str(class_dir), "--out", str(out), "--jobs", "1", "--shard",
                               f"{k}/{shards}"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for k in range(shards)]
    errors = [p.communicate()[1] for p in procs]
    for p, err in zip(procs, errors):
        if p.returncode != 0:
            raise SystemExit(f"course grade --shard failed:\n{err[-3000:]}")
    secs, proc = timed([sys.executable, "-m", "autograder.cli", "report", str(out), "--class",
                        str(class_dir)])
    if proc.returncode != 0:
        raise SystemExit(f"course report failed:\n{proc.stderr[-3000:]}")
    same = (out / "grades.csv").read_bytes() == (whole / "grades.csv").read_bytes()
    return {"seconds": time.monotonic() - t0, "report_seconds": secs, "same": same,
            "shards": shards}


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


OTTER_VENV = ROOT / "bench" / ".otter-venv"
OTTER = OTTER_VENV / "bin" / "otter"
#: `otter run`'s kernel as course grade's workers run: torch on one thread
#: (autograder.sandbox.interpreter.prepare), Triton kernels on CPU tensors through Triton's
#: interpreter (autograder.driver.slot); the kernel inherits this environment.
OTTER_ENV = {"OMP_NUM_THREADS": "1", "TRITON_INTERPRET": "1"}
#: A do-nothing assignment: its `otter run` is Otter's own start-up (CLI, kernel, logging).
NOOP_TEST = (
    "from otter.test_files import test_case\n\nOK_FORMAT = False\nname = 'noop'\n\n\n"
    "@test_case(points=1)\ndef noop(env):\n    pass\n")


def otter_generate(tests: Path, dest: Path) -> Path:
    """``otter generate`` an autograder zip of the test files in ``tests``; its path.

    Run in ``tests``' parent so that no otter_config.json, requirements.txt or environment.yml
    of the caller's folder is picked up (and none is asked for: `otter run` installs nothing).

    Raises:
        SystemExit: otter generate failed.
    """
    out = dest / "autograder.zip"
    _, proc = timed([str(OTTER), "generate", "-t", str(tests), "-o", str(out), "--no-config",
                     "--no-requirements", "--no-environment"], cwd=tests.parent)
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"otter generate failed:\n{proc.stderr[-3000:]}")
    return out


def otter_run(autograder: Path, script: Path, out: Path) -> tuple[float, float | None, float]:
    """``otter run -a autograder script``: (seconds, score, points possible).

    The score is None when Otter wrote no results (it crashed, or ran past 15 minutes).
    """
    out.mkdir(parents=True)
    cmd = [str(OTTER), "run", "-a", str(autograder), "--no-logo", "-o", str(out), str(script)]
    t0 = time.monotonic()
    try:
        _, proc = timed(cmd, env=OTTER_ENV, timeout=900)
    except subprocess.TimeoutExpired:
        return time.monotonic() - t0, None, 0.0
    secs = time.monotonic() - t0
    try:
        tests = json.loads((out / "results.json").read_text())["tests"]
    except (OSError, ValueError, KeyError):
        print(f"otter run {script.parent.name}/{script.name} wrote no results:\n"
              f"{proc.stderr[-2000:]}", file=sys.stderr)
        return secs, None, 0.0
    # "Public Tests" is Otter's summary entry: no score of its own.
    graded = [t for t in tests if t.get("max_score") is not None]
    return secs, sum(t["score"] for t in graded), sum(t["max_score"] for t in graded)


def bench_otter(class_dir: Path, work: Path, sample: int,
                topics: list[str] | None = None) -> dict | None:
    """`otter run` per submission and topic on the first ``sample`` submissions, plus the first
    complete and the first stub student of the class (scores only, not timed into the mean).

    Returns None where Otter is not installed (bench/setup_otter.sh). Otherwise: ``n`` and
    ``seconds`` (the sample's `otter run` calls), ``per_topic`` (topic -> seconds of each
    call), ``scores`` (submission -> (score, points possible), all its topics), ``startup``
    (one `otter run` of an empty assignment), ``build`` (writing tests and `otter generate`,
    all topics).
    """
    if not OTTER.exists():
        return None
    from bench.otter_bridge import write_tests  # the name Otter's test files import it by

    t0 = time.monotonic()
    zips = {}
    for t in catalogue.topics():
        if topics and t.module not in topics:
            continue
        write_tests(t.module, work / t.module / "tests")
        zips[t.module] = (t.filename, otter_generate(work / t.module / "tests", work / t.module))
    build = time.monotonic() - t0
    noop = work / "noop"
    (noop / "tests").mkdir(parents=True)
    (noop / "tests" / "noop.py").write_text(NOOP_TEST)
    (noop / "noop.py").write_text("x = 1\n")
    startup, _, _ = otter_run(otter_generate(noop / "tests", noop), noop / "noop.py",
                              noop / "out")

    paths = sorted(class_dir.iterdir())
    timed_paths = paths[:sample]
    checks = [next((p for p in paths if p.name.endswith(f"_{kind}")), None)
              for kind in ("complete", "stub")]
    per_topic: dict[str, list[float]] = {}
    scores: dict[str, tuple[float, float]] = {}
    seconds = 0.0
    for p in dict.fromkeys(timed_paths + [c for c in checks if c is not None]):
        got = possible = 0.0
        for topic, (filename, autograder) in zips.items():
            if not (p / filename).exists():
                continue  # not handed in: no Otter assignment to run
            secs, score, most = otter_run(autograder, p / filename, work / "runs" / p.name / topic)
            got, possible = got + (score or 0.0), possible + most
            if p in timed_paths:
                seconds += secs
                per_topic.setdefault(topic, []).append(secs)
        scores[p.name] = (got, possible)
    return {"n": len(timed_paths), "seconds": seconds, "per_topic": per_topic,
            "scores": scores, "checks": [c.name for c in checks if c is not None],
            "startup": startup, "build": build, "topics": len(zips)}


def course_scores(out: Path, ids: list[str]) -> dict[str, float]:
    """submission id -> course grade's total, read back from its results under ``out``."""
    from autograder.results import model

    results = {sid: model.load(out, sid) for sid in ids}
    return {sid: r.score for sid, r in results.items() if r is not None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--pytest-sample", type=int, default=10,
                    help="submissions timed with one pytest process each (0: skip pytest)")
    ap.add_argument("--no-nbgrader", dest="nbgrader", action="store_false",
                    help="skip the nbgrader baseline (about 3 minutes)")
    ap.add_argument("--otter-sample", type=int, default=10,
                    help="submissions timed with `otter run` (0: skip Otter)")
    ap.add_argument("--share-sample", type=int, default=20)
    ap.add_argument("--shards", type=int, default=2,
                    help="also grade the class as this many concurrent `course grade --shard` "
                         "runs on this machine, then `course report` (0: skip)")
    ap.add_argument("--topics", default="",
                    help="comma-separated topic modules the class hands in (default: all); the "
                         "others are missing. For a quick smoke run, not for a measurement.")
    args = ap.parse_args()
    topics = [t for t in args.topics.split(",") if t] or None
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, args.n, topics)
        course = bench_course(class_dir, Path(tmp) / "out", args.jobs)
        sharded = (bench_shards(class_dir, Path(tmp) / "sharded", args.shards, Path(tmp) / "out")
                   if args.shards > 0 else None)
        share = bench_student_share(class_dir, min(args.share_sample, args.n), args.jobs)
        pyt = (bench_pytest(class_dir, min(args.pytest_sample, args.n), topics)
               if args.pytest_sample > 0 else None)
        nbg = bench_nbgrader() if args.nbgrader else None
        ott = None
        if args.otter_sample > 0:
            ott = bench_otter(class_dir, Path(tmp) / "otter", min(args.otter_sample, args.n),
                              topics)
        graded = course_scores(Path(tmp) / "out", ott["checks"] if ott else [])
    per = course["seconds"] / course["n"]
    rows = [("course grade --jobs %d" % args.jobs, per, 1.0)]
    if pyt:
        pyt_per = pyt["seconds"] / pyt["n"]
        rows.append((f"pytest per submission (sample {pyt['n']})", pyt_per, pyt_per / per))
    if nbg:
        nb_per = nbg["nbgrader_autograde_s_per_submission"]
        rows.append((f"nbgrader autograde ({nbg['students']} students)", nb_per, nb_per / per))
    if ott:
        ott_per = ott["seconds"] / ott["n"]
        rows.append((f"otter run (sample {ott['n']})", ott_per, ott_per / per))
    if sharded:
        sh_per = sharded["seconds"] / course["n"]
        rows.append((f"{sharded['shards']} shards × --jobs 1 + course report", sh_per,
                     sh_per / per))
    overhead = (share["graded"] - share["student"]) / share["n"]
    setup = share["wall"] - share["graded"]
    print(f"\nclass of {course['n']} submissions, {os.cpu_count()} cores\n")
    print("| grader | s / submission | × course grade |")
    print("|---|---:|---:|")
    for name, s, ratio in rows:
        print(f"| {name} | {s:.3f} | {ratio:.1f} |")
    if sharded:
        print(f"\nshards on this one machine: {sharded['seconds']:.1f} s wall for the class "
              f"(course report {sharded['report_seconds']:.1f} s of it); merged grades.csv "
              + ("byte-identical to" if sharded["same"] else "DIFFERENT from")
              + " the unsharded run's")
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
    if ott:
        print("otter: scores, Otter's vs course grade's (same tests, same points): " + "; ".join(
            f"{name} {ott['scores'][name][0]:.2f} / {ott['scores'][name][1]:.2f} "
            f"(course grade {graded.get(name, float('nan')):.2f})" for name in ott["checks"]))
        print("otter: s per `otter run` by topic (mean over the sample): " + ", ".join(
            f"{t} {sum(v) / len(v):.2f}" for t, v in ott["per_topic"].items()))
        print(f"otter: `otter run` of an empty assignment (Otter's own start-up: CLI, Jupyter "
              f"kernel, logging server): {ott['startup']:.2f} s; writing the tests and "
              f"`otter generate` for {ott['topics']} topic(s), once: {ott['build']:.1f} s")
    elif args.otter_sample > 0:
        print("otter: not measured (run bench/setup_otter.sh)")


if __name__ == "__main__":
    main()
