"""The `course` command: stubs, check, hint and grade for students and instructors."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from autograder import catalogue, paths
from autograder.limits import Limits
from autograder.cli.student_commands import (cmd_check, cmd_hint, cmd_list, cmd_notebook,
                                                cmd_reset, cmd_submit, cmd_watch)
from autograder.cli.shard_commands import (add_cluster_parser, add_report_parser, shard_arg,
                                           shard_note)
from autograder.cli.class_commands import cmd_export_grades, cmd_similarity

ROOT = paths.ROOT


def cmd_stubs(args: argparse.Namespace) -> int:
    from autograder.authoring import stubs

    written, backups = stubs.write_all(ROOT)
    print(f"exercises/: {len(written)} stub file(s) regenerated" if written
          else "exercises/: already up to date")
    for b in backups:
        print(f"  your previous {b.name.split('.py.')[0]}.py is kept as {b.relative_to(ROOT)}")
    return 0


def _site_url(command: str, arg: str | None) -> tuple[bool, str | None]:
    """(ok, the lesson site graded feedback links to): ``--site-url`` when given ("" = none),
    else mkdocs.yml's ``site_url``, else None (links name the repository's lesson files);
    ok False, said on stderr, for an address that is not http(s)."""
    try:
        return True, (catalogue.check_site_url(arg) if arg is not None
                      else catalogue.configured_site_url())
    except ValueError as exc:
        print(f"course {command}: {exc}", file=sys.stderr)
        return False, None


def cmd_grade(args: argparse.Namespace) -> int:
    from autograder.grading import batch as grade
    from autograder.grading import submission
    from rich.markup import escape

    from autograder.console import (PUBLIC_ONLY, console, grade_progress, grade_table,
                                        public_tests_only)
    from autograder.results.text import printable

    if not args.submissions and not args.class_dir:
        print("course grade: give submissions and/or --class DIR", file=sys.stderr)
        return 2
    site_ok, site_url = _site_url("grade", args.site_url)
    if not site_ok:
        return 2
    try:
        paths = submission.discover(args.submissions, args.class_dir)
    except submission.UsageError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2
    class_size = len(paths)
    if args.shard is not None:  # a part of the class (autograder.grading.shards)
        from autograder.grading import shards

        paths = shards.select(paths, args.shard)
        print(f"shard {args.shard}: {len(paths)} of the class's {class_size} submissions",
              file=sys.stderr)
    elif not paths:
        print(f"course grade: no submissions found ({args.class_dir} has no folder or .zip "
              "child); writing empty outputs", file=sys.stderr)
    limits = Limits(call_seconds=args.call_timeout, submission_seconds=args.submission_timeout)
    from autograder.driver import allowlist
    from autograder.driver import cgroups

    # What this machine's sandbox gives (docs/design/threat-model.md's table), once.
    print(f"sandbox: {allowlist.status()}; {cgroups.status()}", file=sys.stderr)
    plan_path = None
    if args.plan and class_size >= grade.PLAN_MIN:
        # Recorded once per grader version and replayed by every later batch (plan_file.kept).
        from autograder.grading import plan_file

        plan_path, said = plan_file.kept()
        print(f"grading plan: {said}", file=sys.stderr)
    t0 = time.monotonic()
    try:
        with grade_progress() as bar:
            planned = args.plan and class_size >= grade.PLAN_MIN and plan_path is None
            task = bar.add_task("grading", total=len(paths),
                                last="each slot first grades the reference" if planned else "")
            # Two sweeps (every public phase, then every hidden one): the bar counts each.
            summaries = grade.grade_batch(
                paths, Path(args.out), jobs=args.jobs, limits=limits, plan_batches=args.plan,
                visibility_hidden=args.hidden_visibility, site_url=site_url,
                class_files=args.shard is None, plan_size=class_size, plan_path=plan_path,
                sweep=lambda name, done, total: bar.update(
                    task, description=f"{name} tests", completed=done, total=total),
                # the id as text: escaped rich markup ("[link=…]"), no terminal escapes
                progress=lambda s: bar.update(task,
                                              last=f"{escape(printable(s.id))}: {s.total:.2f}"))
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: one line, no traceback
        # Results are written per submission, atomically: the same command resumes.
        saved = (f"{exc.saved}/{exc.total} submissions saved; "
                 if isinstance(exc, grade.Interrupted) else "")
        print(f"course grade: interrupted: {saved}run the same command again to resume "
              "(grades.csv and report.html are written once every submission is graded)",
              file=sys.stderr)
        code = exc.exit_code if isinstance(exc, grade.Interrupted) else 130
        # Everything is saved and every slot closed: leave now. A normal exit joins the pool's
        # manager thread, which hung once after a stop under load (tests/test_interrupt.py).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
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
                  + (f"; outputs in {args.out}/ (grades.csv, results/, feedback/, "
                     "report.html)" if args.shard is None else shard_note(args)))
    if public_tests_only():  # a student release: a score out of 100 must not read as a grade
        console.print(f"[bold yellow]grades.csv and this table: {PUBLIC_ONLY}[/] (the hidden "
                      "tests run when you are graded)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from autograder.cli.demo import prepare, print_legend

    t0 = time.monotonic()
    class_dir = prepare(Path(args.out))
    rc = main(["grade", "--class", str(class_dir), "--out", args.out, "--jobs", str(args.jobs)])
    from autograder.console import console

    print_legend(console)
    print(f"demo finished in {time.monotonic() - t0:.1f} s")
    return rc


def cmd_nbgrader(args: argparse.Namespace) -> int:
    from autograder.exports.nbgrader import export as nbgrader_export

    site_ok, site_url = _site_url("nbgrader", args.site_url)
    if not site_ok:
        return 2
    from autograder.console import step_printer

    try:
        written = nbgrader_export.build(Path(args.dir), topics=args.topic or None,
                                        site_url=site_url, progress=step_printer("nbgrader"))
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

    site_ok, site_url = _site_url("gradescope", args.site_url)
    if not site_ok:
        return 2
    try:
        out = gradescope.build(Path(args.out), hidden_visibility=args.hidden_visibility,
                               call_timeout=args.call_timeout,
                               submission_timeout=args.submission_timeout, site_url=site_url)
    except FileNotFoundError as exc:
        print(f"course gradescope: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: upload it as the autograder of a Gradescope programming assignment")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from autograder.console import step_printer
    from autograder.exports import release

    try:
        out = release.build(Path(args.out), force=args.force,
                            progress=step_printer("release"))
    except release.ReleaseError as exc:
        print(f"course release: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: the student repository (no solutions, no hidden tests; scanned for both)")
    return 0


def cmd_points(args: argparse.Namespace) -> int:
    from autograder.grading import points

    if args.write:
        changed = points.write()
        print(f"{points.TABLE_PATH}: {'updated' if changed else 'up to date'}")
        return 0
    if args.topic:
        try:
            topic = catalogue.get_topic(args.topic).module
        except (KeyError, ValueError) as exc:
            print(f"course points: {exc.args[0] if exc.args else exc}", file=sys.stderr)
            return 2
        print(points.topic_table(topic), end="")
    else:
        print(points.table(), end="")
    return 0


def _limit_options(s: argparse.ArgumentParser) -> None:
    # The defaults are Limits' own (autograder/limits.py: one home for them).
    s.add_argument("--call-timeout", type=float, default=Limits.call_seconds,
                   help=f"seconds per call ({Limits.call_seconds:g})")
    s.add_argument("--submission-timeout", type=float, default=Limits.submission_seconds,
                   help=f"seconds of calls per submission ({Limits.submission_seconds:g})")


def _site_url_option(s: argparse.ArgumentParser) -> None:
    s.add_argument("--site-url", metavar="URL", default=None,
                   help="where the lesson site is published, for the lesson links of graded "
                        "feedback (default: mkdocs.yml's site_url; unset, links name the "
                        "lesson's file, docs/lessons/...; '' forces that)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/")
    s.set_defaults(func=cmd_stubs, instructor=True)

    s = sub.add_parser("check", help="run the public tests on your exercises")
    s.add_argument("topic", nargs="?", metavar="TOPIC_OR_EXERCISE",
                   help="a topic: ex03_softmax, ex03, ex3, 3 or softmax (any case); or one "
                        "exercise: ex03_softmax.logsumexp or logsumexp (default: all topics)")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="show the whole traceback of an error your code raised (the "
                        "libraries' frames too), not only the lines of your own files")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("hint", help="tiered hints for one exercise (or a topic's first hints)")
    s.add_argument("exercise", help="e.g. ex03_softmax.softmax or softmax; a topic (8, ex08, "
                                    "flash_attention) lists each exercise's first hint")
    s.add_argument("--level", type=int, default=1, help="how many tiers to show (default 1)")
    s.set_defaults(func=cmd_hint)

    s = sub.add_parser("list", help="your progress per topic and exercise")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--static", action="store_true",
                   help="do not run the public tests: show the exercises, points and which "
                        "still raise the stub's NotImplementedError")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("watch", help="re-check a topic each time you save its file")
    s.add_argument("topic", nargs="?",
                   help="watch only this topic: ex03_softmax, ex03, ex3, 3 or softmax "
                        "(default: all)")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--once", action="store_true",
                   help="exit after the first re-check (0 if that topic passes, else 1)")
    s.set_defaults(func=cmd_watch)

    s = sub.add_parser("reset", help="restore one exercise's stub, or a whole topic's file "
                                     "(your file is backed up)")
    s.add_argument("target", metavar="EXERCISE_OR_TOPIC", nargs="?",
                   help="one exercise (ex03_softmax.logsumexp or logsumexp) or a whole topic "
                        "(ex03_softmax, ex03, ex3, 3; a name that is both, like softmax, is "
                        "the topic)")
    s.add_argument("--undo", action="store_true",
                   help="put the newest backup in .backup/ back (of TOPIC's file only, when "
                        "given); the file it replaces is backed up first")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--yes", action="store_true",
                   help="reset a whole topic without asking (needed when not run from a "
                        "terminal); answering no exits 1")
    s.set_defaults(func=cmd_reset)

    s = sub.add_parser("notebook", help="write a topic's stub as a Jupyter notebook "
                                        "(exNN_topic.ipynb) into your exercises folder")
    s.add_argument("topic", help="ex01_vectors, ex01, ex1, 1 or vectors (any case)")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--force", action="store_true",
                   help="overwrite an existing notebook, backed up first into .backup/ "
                        "(otherwise refused, exit 1)")
    s.add_argument("--move-py", action="store_true",
                   help="move the topic's .py in the same folder (which would be graded "
                        "instead) into .backup/ without asking; `course reset --undo` brings "
                        "it back")
    s.set_defaults(func=cmd_notebook)

    s = sub.add_parser("submit", help="zip your exercises with a manifest, ready to hand in")
    s.add_argument("--dir", help="the folder holding your exercise files (default: exercises/)")
    s.add_argument("--out", default=None,
                   help="the zip to write (default <your id>.zip); its name is your "
                        "submission's id when graded")
    s.add_argument("--id", help="your student id for the manifest (default: $USER)")
    s.add_argument("--no-check", action="store_true",
                   help="do not run the public checks first")
    s.set_defaults(func=cmd_submit)

    s = sub.add_parser("grade", help="grade submissions (instructors)",
                       epilog="exit codes: 0 the batch finished (whatever the grades), 1 grader "
                              "fault, 2 usage, 130 interrupted (what was graded is kept; run "
                              "again to resume; 143 for SIGTERM)")
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
    _site_url_option(s)
    s.add_argument("--shard", type=shard_arg, metavar="K/N", default=None,
                   help="grade only the K-th (from 0) of N parts of the class, split by "
                        "submission id; N shards may share one --out; then `course report`")
    s.set_defaults(func=cmd_grade)
    add_report_parser(sub)
    add_cluster_parser(sub)

    s = sub.add_parser("similarity", help="score every pair of submissions' code per topic "
                                          "(copydetect), an HTML and a CSV report",
                       epilog="exit codes: 0 the reports were written, 2 usage")
    s.add_argument("submissions", nargs="*", help="submission folders or .zip files")
    s.add_argument("--class", dest="class_dir", help="each direct child of this folder too")
    s.add_argument("--out", required=True,
                   help="folder for similarity.html and similarity.csv")
    s.add_argument("--threshold", type=float, default=0.5,
                   help="the score from which a pair is shown side by side in the HTML "
                        "(0 to 1, default 0.5; the CSV scores every pair)")
    s.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                   help="processes that tokenise the files (default: the CPUs, at most 4)")
    s.set_defaults(func=cmd_similarity)

    s = sub.add_parser("export-grades", help="a graded batch's grades as a Canvas or Moodle "
                                             "grade-import CSV, ids mapped through a roster",
                       epilog="exit codes: 0 written, 2 usage or a roster that does not fit "
                              "(graded ids missing from it are named; nothing is written)")
    s.add_argument("batch", help="the folder `course grade --out` wrote")
    s.add_argument("--format", required=True, choices=["canvas", "moodle"])
    s.add_argument("--roster", required=True,
                   help="CSV with a header: the LMS's gradebook export, or any list with a "
                        "column of submission ids and the LMS's user columns")
    s.add_argument("--match", metavar="COLUMN",
                   help="the roster column holding submission ids (default: Canvas 'SIS "
                        "Login ID'; Moodle the first of 'Username', 'ID number', "
                        "'Email address')")
    s.add_argument("--columns", choices=["total", "topics"], default="total",
                   help="one grade column for the total (default) or one per topic")
    s.add_argument("--name", default="Linear Algebra for Transformers",
                   help="the grade column's name (topics: NAME: ex01_vectors, …); an "
                        "existing assignment's name updates it")
    s.add_argument("--missing-zero", action="store_true",
                   help="give roster users with no submission 0 instead of an empty cell")
    s.add_argument("--out", help="the file to write (default BATCH/grades-FORMAT.csv)")
    s.set_defaults(func=cmd_export_grades)

    s = sub.add_parser("demo", help="grade the bundled example class and print its table")
    s.add_argument("--out", default=str(ROOT / "build" / "demo"))
    s.add_argument("--jobs", type=int, default=2)
    s.set_defaults(func=cmd_demo, instructor=True)

    s = sub.add_parser("nbgrader", help="build an nbgrader course: config + a notebook per topic")
    s.add_argument("dir", help="the nbgrader course folder to write")
    s.add_argument("--topic", action="append",
                   help="export only this topic (repeatable; default: all)")
    _site_url_option(s)
    s.set_defaults(func=cmd_nbgrader, instructor=True)

    s = sub.add_parser("gradescope", help="build a Gradescope autograder zip")
    s.add_argument("--out", default="autograder.zip", help="the zip (default autograder.zip)")
    s.add_argument("--hidden-visibility", default="after_published",
                   choices=["hidden", "after_due_date", "after_published", "visible"],
                   help="Gradescope visibility of hidden tests (default after_published)")
    _limit_options(s)
    _site_url_option(s)
    s.set_defaults(func=cmd_gradescope, instructor=True)

    s = sub.add_parser("points", help="every graded test and its points, as a Markdown table "
                                      "(instructors)")
    s.add_argument("topic", nargs="?", help="one topic (default: all)")
    s.add_argument("--write", action="store_true",
                   help="update the checked-in table, docs/design/points.md")
    s.set_defaults(func=cmd_points, instructor=True)

    s = sub.add_parser("release", help="build the student repository (no solutions, no hidden "
                                       "tests)")
    s.add_argument("out", help="the folder to write (must be empty or absent)")
    s.add_argument("--force", action="store_true", help="replace a non-empty OUT")
    s.set_defaults(func=cmd_release, instructor=True)
    # Each subcommand knows its parser: main() reports a stray argument with that parser's
    # usage line, not the top-level one that lists only the command names.
    for s in sub.choices.values():
        s.set_defaults(parser=s)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        # parse_known_args, not parse_args: argparse leaves arguments no subcommand takes
        # ("course check 3 4") to the top-level parser, whose usage lists only the commands.
        args, extra = parser.parse_known_args(argv)
        if extra:
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:
        return 2 if exc.code not in (0, None) else 0
    if getattr(args, "instructor", False) and not paths.SOLUTIONS.is_dir():
        # A student release ships these commands' code but nothing they work from: one line,
        # before any of them writes (`course nbgrader` left a half-written folder there).
        print(f"course {args.command} is for the instructor's repository: this student "
              "release has no solutions/", file=sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

