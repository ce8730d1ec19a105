"""The `course` command: stubs, check, hint and grade for students and instructors."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from autograder import catalogue, paths
from autograder.limits import Limits

ROOT = paths.ROOT


def _exercises_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    here = Path.cwd() / "exercises"
    return here if here.is_dir() else ROOT / "exercises"


def cmd_stubs(args: argparse.Namespace) -> int:
    from autograder.authoring import stubs

    written = stubs.write_all(ROOT)
    print(f"exercises/: {len(written)} stub file(s) regenerated" if written
          else "exercises/: already up to date")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from autograder.cli.console import check_report, console
    from autograder.grading import loop, uploads
    from autograder.grading import run as runner
    from autograder.sandbox.slot import Slot

    topics = _topics("check", args.topic)
    folder = _student_folder("check", args.dir) if topics is not None else None
    if folder is None:
        return 2
    loaded = uploads.load(folder)
    specs = {top.module: runner.collect(top.module, hidden=False) for top in topics}
    with Slot(0) as slot:
        outcome = loop.grade(slot, loaded.sources, specs, problems=loaded.problems,
                             status=lambda topic: console.status(f"checking {topic} …"))
    results = outcome.flat()
    check_report(results, topics)
    return 0 if results and all(r.passed for r in results) else 1


def cmd_hint(args: argparse.Namespace) -> int:
    try:
        ex = catalogue.get_exercise(args.exercise)
    except KeyError as exc:
        print(f"course hint: {exc.args[0]}", file=sys.stderr)
        return 2
    if not 1 <= args.level <= len(ex.hints):  # said, not silently clamped (a tester's note)
        print(f"course hint: {ex.qualname} has hint levels 1 to {len(ex.hints)}; showing "
              f"{'all' if args.level > len(ex.hints) else 'the first'}", file=sys.stderr)
    tiers = ex.hints[: max(1, min(args.level, len(ex.hints)))]
    for i, h in enumerate(tiers, 1):
        print(f"Hint {i}/{len(ex.hints)}: {h}")
    if len(tiers) < len(ex.hints):
        print(f"(more: course hint {ex.qualname} --level {len(tiers) + 1})")
    print(f"Lesson: {ex.lesson_link}")
    return 0


def _topics(command: str, arg: str | None) -> list[catalogue.Topic] | None:
    """The topics ``arg`` names (all when None); None, said on stderr, when it names none."""
    try:
        return [catalogue.get_topic(arg)] if arg else list(catalogue.topics())
    except KeyError as exc:
        print(f"course {command}: {exc.args[0]}", file=sys.stderr)
        return None


def _student_folder(command: str, arg: str | None) -> Path | None:
    folder = _exercises_dir(arg)
    if not folder.is_dir():
        print(f"course {command}: no exercises folder at {folder}", file=sys.stderr)
        return None
    return folder


def cmd_list(args: argparse.Namespace) -> int:
    from autograder.student import progress

    folder = _student_folder("list", args.dir)
    if folder is None:
        return 2
    return progress.show_list(folder, list(catalogue.topics()), run=not args.static)


def cmd_watch(args: argparse.Namespace) -> int:
    from autograder.student import watch

    topics = _topics("watch", args.topic)
    folder = _student_folder("watch", args.dir) if topics is not None else None
    if folder is None:
        return 2
    return watch.watch(folder, topics, once=args.once)


def cmd_reset(args: argparse.Namespace) -> int:
    from autograder.student import reset

    folder = _student_folder("reset", args.dir)
    if folder is None:
        return 2
    try:
        ex, backup = reset.reset(folder, args.exercise)
    except KeyError as exc:
        print(f"course reset: {exc.args[0]}", file=sys.stderr)
        return 2
    except reset.ResetError as exc:
        print(f"course reset: {exc}", file=sys.stderr)
        return 1
    if backup is None:
        print(f"{ex.qualname} is already the original stub: nothing changed")
    else:
        print(f"{ex.qualname} restored to its stub in {folder / (ex.topic + '.py')}; "
              f"your previous file is saved as {backup}")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from autograder.student import submit

    folder = _student_folder("submit", args.dir)
    if folder is None:
        return 2
    # The zip's stem is the submission's id when graded: name it after the student.
    # A leading dot would hide the zip, and `course grade` refuses such an id: drop it.
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", submit.student_id(args.id)).lstrip(".")
    out = args.out or (name or "submission") + ".zip"
    return submit.submit(folder, Path(out), args.id, check=not args.no_check)


def cmd_grade(args: argparse.Namespace) -> int:
    from autograder.grading import batch as grade
    from autograder.grading import submission
    from autograder.cli.console import console, grade_progress, grade_table

    if not args.submissions and not args.class_dir:
        print("course grade: give submissions and/or --class DIR", file=sys.stderr)
        return 2
    try:
        paths = submission.discover(args.submissions, args.class_dir)
    except submission.UsageError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2
    if not paths:
        print(f"course grade: no submissions found ({args.class_dir} has no folder or .zip "
              "child); writing empty outputs", file=sys.stderr)
    limits = Limits(call_seconds=args.call_timeout, submission_seconds=args.submission_timeout)
    from autograder.sandbox import allowlist
    from autograder.sandbox import cgroups

    # What this machine's sandbox gives (docs/design/threat-model.md's table), once.
    print(f"sandbox: {allowlist.status()}; {cgroups.status()}", file=sys.stderr)
    t0 = time.monotonic()
    try:
        with grade_progress() as bar:
            planned = args.plan and len(paths) >= grade.PLAN_MIN
            task = bar.add_task("grading", total=len(paths),
                                last="each slot first grades the reference" if planned else "")
            summaries = grade.grade_batch(
                paths, Path(args.out), jobs=args.jobs, limits=limits, plan_batches=args.plan,
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
                  + f"; outputs in {args.out}/ (grades.csv, results/, feedback/, "
                    "report.html)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from autograder.cli import demo

    t0 = time.monotonic()
    class_dir = demo.prepare(Path(args.out))
    rc = main(["grade", "--class", str(class_dir), "--out", args.out, "--jobs", str(args.jobs)])
    print(f"demo finished in {time.monotonic() - t0:.1f} s")
    return rc


def cmd_nbgrader(args: argparse.Namespace) -> int:
    from autograder.exports.nbgrader import export as nbgrader_export

    try:
        written = nbgrader_export.build(Path(args.dir), topics=args.topic or None,
                                        site_url=args.site_url)
    except KeyError as exc:
        print(f"course nbgrader: {exc.args[0]}", file=sys.stderr)
        return 2
    except nbgrader_export.ExportError as exc:
        print(f"course nbgrader: {exc}", file=sys.stderr)
        return 1
    print(f"{args.dir}: nbgrader_config.py and {len(written)} source notebook(s); next, in that "
          "folder: nbgrader generate_assignment ex01_vectors (see its README.md)")
    return 0


def cmd_gradescope(args: argparse.Namespace) -> int:
    from autograder.exports import gradescope

    try:
        out = gradescope.build(Path(args.out), hidden_visibility=args.hidden_visibility,
                               call_timeout=args.call_timeout,
                               submission_timeout=args.submission_timeout)
    except FileNotFoundError as exc:
        print(f"course gradescope: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: upload it as the autograder of a Gradescope programming assignment")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from autograder.exports import release
    from autograder.cli.console import console

    try:
        with console.status("recording reference values and building the release …"):
            out = release.build(Path(args.out), force=args.force)
    except release.ReleaseError as exc:
        print(f"course release: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: the student repository (no solutions, no hidden tests; scanned for both)")
    return 0


def _limit_options(s: argparse.ArgumentParser) -> None:
    # The defaults are Limits' own (autograder/limits.py: one home for them).
    s.add_argument("--call-timeout", type=float, default=Limits.call_seconds,
                   help=f"seconds per call ({Limits.call_seconds:g})")
    s.add_argument("--submission-timeout", type=float, default=Limits.submission_seconds,
                   help=f"seconds of calls per submission ({Limits.submission_seconds:g})")


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

    s = sub.add_parser("list", help="your progress per topic and exercise")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--static", action="store_true",
                   help="do not run the public tests: show the exercises, points and which "
                        "still raise the stub's NotImplementedError")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("watch", help="re-check a topic each time you save its file")
    s.add_argument("topic", nargs="?", help="watch only this topic (default: all)")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--once", action="store_true",
                   help="exit after the first re-check (0 if that topic passes, else 1)")
    s.set_defaults(func=cmd_watch)

    s = sub.add_parser("reset", help="restore one exercise's stub (your file is backed up)")
    s.add_argument("exercise", help="e.g. ex03_softmax.softmax or softmax")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.set_defaults(func=cmd_reset)

    s = sub.add_parser("submit", help="zip your exercises with a manifest, ready to hand in")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--out", default=None,
                   help="the zip to write (default <your id>.zip); its name is your "
                        "submission's id when graded")
    s.add_argument("--id", help="your student id for the manifest (default: $USER)")
    s.add_argument("--no-check", action="store_true",
                   help="do not run the public checks first")
    s.set_defaults(func=cmd_submit)

    s = sub.add_parser("grade", help="grade submissions (instructors)")
    s.add_argument("submissions", nargs="*", help="submission folders or .zip files")
    s.add_argument("--class", dest="class_dir", help="grade each direct child of this folder")
    s.add_argument("--out", required=True, help="output folder")
    s.add_argument("--jobs", type=int, default=1, help="worker slots in parallel (default 1)")
    _limit_options(s)
    s.add_argument("--hidden-visibility", default="after_published",
                   choices=["hidden", "after_due_date", "after_published", "visible"],
                   help="Gradescope visibility of hidden tests (default after_published)")
    s.add_argument("--no-plan", dest="plan", action="store_false",
                   help="grade every call one at a time, without first recording the "
                        "reference's calls (slower; see docs/instructors.md)")
    s.set_defaults(func=cmd_grade)

    s = sub.add_parser("demo", help="grade the bundled example class and print its table")
    s.add_argument("--out", default=str(ROOT / "build" / "demo"))
    s.add_argument("--jobs", type=int, default=2)
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("nbgrader", help="build an nbgrader course: config + a notebook per topic")
    s.add_argument("dir", help="the nbgrader course folder to write")
    s.add_argument("--topic", action="append",
                   help="export only this topic (repeatable; default: all)")
    s.add_argument("--site-url", default=catalogue.SITE_URL,
                   help=f"where the lesson site is served (default {catalogue.SITE_URL})")
    s.set_defaults(func=cmd_nbgrader)

    s = sub.add_parser("gradescope", help="build a Gradescope autograder zip")
    s.add_argument("--out", default="autograder.zip", help="the zip (default autograder.zip)")
    s.add_argument("--hidden-visibility", default="after_published",
                   choices=["hidden", "after_due_date", "after_published", "visible"],
                   help="Gradescope visibility of hidden tests (default after_published)")
    _limit_options(s)
    s.set_defaults(func=cmd_gradescope)

    s = sub.add_parser("release", help="build the student repository (no solutions, no hidden "
                                       "tests)")
    s.add_argument("out", help="the folder to write (must be empty or absent)")
    s.add_argument("--force", action="store_true", help="replace a non-empty OUT")
    s.set_defaults(func=cmd_release)
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

