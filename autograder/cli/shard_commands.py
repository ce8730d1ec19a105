"""The commands of grading in shards: `course grade --shard K/N`'s option, `course report`
(grades.csv and report.html from the results files) and `course cluster` (the file a cluster
engine runs). The logic is :mod:`autograder.grading.shards` and :mod:`autograder.exports.cluster`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: How many missing submissions `course report` names before "… and N more".
NAMED_MISSING = 20


def shard_arg(text: str):
    """argparse's ``type`` for ``--shard K/N``: a :class:`~autograder.grading.shards.Shard`;
    a bad value is a usage error (exit 2) with :func:`~autograder.grading.shards.parse`'s
    message."""
    from autograder.grading import shards

    try:
        return shards.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def shard_note(args: argparse.Namespace) -> str:
    """The end of `course grade --shard`'s last line: where its outputs are, what comes next."""
    cls = f" --class {args.class_dir}" if args.class_dir else ""
    return (f"; outputs in {args.out}/ (results/, feedback/); once every shard is done, "
            f"`course report {args.out}{cls}` writes grades.csv and report.html")


def cmd_report(args: argparse.Namespace) -> int:
    """`course report DIR [--class CLASS]`: 0 written, 1 submissions of CLASS lack a result
    (named; nothing written), 2 usage."""
    from autograder.grading import shards, submission
    from autograder.results import model, report, writers
    from autograder.results.text import printable

    out = Path(args.dir)
    if not (out / "results").is_dir():
        print(f"course report: '{printable(args.dir)}' has no results/ folder (give the --out "
              "folder of `course grade`)", file=sys.stderr)
        return 2
    if args.class_dir is None:
        ids = [p.stem for p in (out / "results").glob("*.json")]
    else:
        try:
            paths = submission.discover([], args.class_dir)
        except submission.UsageError as exc:
            print(f"course report: {exc}", file=sys.stderr)
            return 2
        gaps = shards.missing(out, paths)
        if gaps:
            named = ", ".join(f"{printable(g.id)} ({g.why})" for g in gaps[:NAMED_MISSING])
            more = f", … and {len(gaps) - NAMED_MISSING} more" if len(gaps) > NAMED_MISSING else ""
            print(f"course report: {len(gaps)} of {len(paths)} submissions have no result yet: "
                  f"{named}{more}. Run their shards again (each grades only what is missing); "
                  "grades.csv and report.html are not written.", file=sys.stderr)
            return 1
        ids = [shards.graded_id(p) for p in paths]
    try:
        results = model.load_all(out, ids)
    except model.ResultError as exc:  # never a row silently missing from grades.csv
        print(f"course report: {printable(str(exc))}; grades.csv and report.html are not "
              "written (grade that submission again, or remove the file)", file=sys.stderr)
        return 1
    writers.write_grades_csv(out, results)
    report.write_report(out, results)
    versions = sorted({r.grader_version for r in results})
    if len(versions) > 1:  # shards run by different checkouts: the page lists them too
        print(f"course report: warning: the results come from {len(versions)} grader versions "
              f"({', '.join(versions)}); grade every shard with one", file=sys.stderr)
    print(f"{out}/grades.csv and {out}/report.html: {len(results)} submission(s)")
    return 0


def cmd_cluster(args: argparse.Namespace) -> int:
    """`course cluster ENGINE ...`: print the engine's file; 2 for a value it cannot hold."""
    from autograder.exports import cluster

    try:
        text = cluster.render(args.engine, args.class_dir, args.out, args.shards,
                              jobs=args.jobs, image=args.image)
    except cluster.ClusterError as exc:
        print(f"course cluster: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    """Register `course report`."""
    s = sub.add_parser("report", help="write grades.csv and report.html from the results in "
                                      "an output folder (after `course grade --shard`)",
                       epilog="exit codes: 0 written, 1 a submission of --class has no result "
                              "yet (named; nothing written), 2 usage")
    s.add_argument("dir", metavar="DIR", help="the output folder the shards wrote into")
    s.add_argument("--class", dest="class_dir",
                   help="the class that was graded: report exactly its submissions, and exit "
                        "1 naming those that have no result yet (default: every result in DIR)")
    s.set_defaults(func=cmd_report)


def add_cluster_parser(sub: argparse._SubParsersAction) -> None:
    """Register `course cluster`."""
    from autograder.exports.cluster import DEFAULT_IMAGE, ENGINES

    s = sub.add_parser("cluster", help="print the file that grades a class in shards on "
                                       "Slurm, Kubernetes or GitHub Actions")
    s.add_argument("engine", choices=list(ENGINES))
    s.add_argument("--class", dest="class_dir", required=True,
                   help="the class folder, as the engine's machines see it")
    s.add_argument("--out", required=True, help="the output folder, as they see it")
    s.add_argument("--shards", type=int, required=True, help="how many shards (N)")
    s.add_argument("--jobs", type=int, default=1,
                   help="worker slots per shard, and CPUs asked for each (default 1)")
    s.add_argument("--image", default=DEFAULT_IMAGE,
                   help=f"kubernetes: the container image with the course (default "
                        f"{DEFAULT_IMAGE})")
    s.set_defaults(func=cmd_cluster, instructor=True)
