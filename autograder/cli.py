"""The `course` command: stubs, check, hint and grade for students and instructors."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autograder import catalogue

ROOT = Path(__file__).resolve().parent.parent


def _exercises_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    here = Path.cwd() / "exercises"
    return here if here.is_dir() else ROOT / "exercises"


def cmd_stubs(args: argparse.Namespace) -> int:
    from autograder import stubs

    written = stubs.write_all(ROOT)
    print(f"exercises/: {len(written)} stub file(s) regenerated" if written
          else "exercises/: already up to date")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from autograder import runner, submission
    from autograder.console import check_report, console
    from autograder.sandbox import Session, Slot

    try:
        topics = [catalogue.get_topic(args.topic)] if args.topic else list(catalogue.topics())
    except KeyError as exc:
        print(f"course check: {exc.args[0]}", file=sys.stderr)
        return 2
    folder = _exercises_dir(args.dir)
    if not folder.is_dir():
        print(f"course check: no exercises folder at {folder}", file=sys.stderr)
        return 2
    loaded = submission.load(folder)
    results = []
    with Slot(0) as slot:
        session = Session(slot, loaded.sources) if loaded.sources else None
        try:
            for top in topics:
                specs = runner.collect(top.module, hidden=False)
                with console.status(f"checking {top.module} …"):
                    rs, _ = runner.run_topic(session, top.module, specs,
                                             loaded.problems.get(top.module))
                results.extend(rs)
        finally:
            if session is not None:
                session.close()
    check_report(results, topics)
    return 0 if results and all(r.passed for r in results) else 1


def cmd_hint(args: argparse.Namespace) -> int:
    try:
        ex = catalogue.get_exercise(args.exercise)
    except KeyError as exc:
        print(f"course hint: {exc.args[0]}", file=sys.stderr)
        return 2
    tiers = ex.hints[: max(1, min(args.level, len(ex.hints)))]
    for i, h in enumerate(tiers, 1):
        print(f"Hint {i}/{len(ex.hints)}: {h}")
    if len(tiers) < len(ex.hints):
        print(f"(more: course hint {ex.qualname} --level {len(tiers) + 1})")
    print(f"Lesson: {ex.lesson_link}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from autograder import grade, submission
    from autograder.console import console, grade_progress, grade_table
    from autograder.sandbox import Limits

    if not args.submissions and not args.class_dir:
        print("course grade: give submissions and/or --class DIR", file=sys.stderr)
        return 2
    try:
        paths = submission.discover(args.submissions, args.class_dir)
    except submission.UsageError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2
    limits = Limits(call_seconds=args.call_timeout, submission_seconds=args.submission_timeout)
    t0 = time.monotonic()
    try:
        with grade_progress() as bar:
            task = bar.add_task("grading", total=len(paths), last="")
            summaries = grade.grade_batch(
                paths, Path(args.out), jobs=args.jobs, limits=limits,
                visibility_hidden=args.hidden_visibility,
                progress=lambda s: bar.update(task, advance=1, last=f"{s.id}: {s.total:.2f}"))
    except Exception as exc:  # a fault of the grader itself, not of a submission
        import traceback

        traceback.print_exc()
        print(f"course grade: grader fault: {exc}", file=sys.stderr)
        return 1
    console.print(grade_table(summaries))
    fresh = [s for s in summaries if not s.resumed]
    console.print(f"{len(summaries)} submission(s) in {time.monotonic() - t0:.1f} s"
                  + (f" ({len(summaries) - len(fresh)} unchanged, not regraded)"
                     if len(fresh) < len(summaries) else "")
                  + f"; outputs in {args.out}/ (grades.csv, results/, feedback/)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from autograder import demo

    return demo.run(Path(args.out), jobs=args.jobs)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/")
    s.set_defaults(func=cmd_stubs)

    s = sub.add_parser("check", help="run the public tests on your exercises")
    s.add_argument("topic", nargs="?", help="ex01_vectors, ex01, 1 or vectors (default: all)")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("hint", help="tiered hints for one exercise")
    s.add_argument("exercise", help="e.g. ex03_softmax.softmax or softmax")
    s.add_argument("--level", type=int, default=1, help="how many tiers to show (default 1)")
    s.set_defaults(func=cmd_hint)

    s = sub.add_parser("grade", help="grade submissions (instructors)")
    s.add_argument("submissions", nargs="*", help="submission folders or .zip files")
    s.add_argument("--class", dest="class_dir", help="grade each direct child of this folder")
    s.add_argument("--out", required=True, help="output folder")
    s.add_argument("--jobs", type=int, default=1, help="worker slots in parallel (default 1)")
    s.add_argument("--call-timeout", type=float, default=10.0, help="seconds per call (10)")
    s.add_argument("--submission-timeout", type=float, default=120.0,
                   help="seconds of calls per submission (120)")
    s.add_argument("--hidden-visibility", default="after_published",
                   choices=["hidden", "after_due_date", "after_published", "visible"],
                   help="Gradescope visibility of hidden tests (default after_published)")
    s.set_defaults(func=cmd_grade)

    s = sub.add_parser("demo", help="grade the bundled example class and print its table")
    s.add_argument("--out", default=str(ROOT / "build" / "demo"))
    s.add_argument("--jobs", type=int, default=2)
    s.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code not in (0, None) else 0
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

