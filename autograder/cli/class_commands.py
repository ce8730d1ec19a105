"""The instructors' commands on a class beyond grading it: `course similarity` (which
submissions share code) and `course export-grades` (a graded batch's grades for an LMS); their
parsers are in :mod:`autograder.cli.app`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def cmd_similarity(args: argparse.Namespace) -> int:
    """`course similarity`: score every pair of the submissions per topic and write
    similarity.csv and similarity.html into ``--out``. Exit 0, or 2 for usage (no
    submissions, a bad path or id, ``--threshold`` outside [0, 1], ``--jobs`` below 1)."""
    from autograder.console import step_printer
    from autograder.grading import submission
    from autograder.exports import similarity

    if not args.submissions and not args.class_dir:
        print("course similarity: give submissions and/or --class DIR", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"course similarity: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
        return 2
    if not 0.0 <= args.threshold <= 1.0:
        print(f"course similarity: --threshold must lie in [0, 1], got {args.threshold:g}",
              file=sys.stderr)
        return 2
    try:
        found = submission.discover(args.submissions, args.class_dir)
    except submission.UsageError as exc:
        print(f"course similarity: {exc}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    say = step_printer("similarity")
    say(f"reading {len(found)} submission(s) …")
    sources = similarity.read_sources(found)
    pairs = similarity.compare(sources, args.threshold, jobs=args.jobs, progress=say)
    csv_path, html_path = similarity.write(Path(args.out), pairs, args.threshold, len(sources))
    flagged = sum(p.score >= args.threshold for p in pairs)
    print(f"{len(pairs)} pair(s) compared in {time.monotonic() - t0:.1f} s; {flagged} at or "
          f"above {args.threshold:g}: {html_path} (every score: {csv_path})")
    return 0


def cmd_export_grades(args: argparse.Namespace) -> int:
    """`course export-grades`: write a graded batch's grades as Canvas's or Moodle's import
    CSV (autograder.exports.lms) and list the roster users with no submission. Exit 0, or 2
    when the roster does not fit (graded ids missing from it are named; nothing is written)."""
    from autograder.exports import lms

    try:
        path, export = lms.write(Path(args.batch), Path(args.roster), args.format,
                                 Path(args.out) if args.out else None, match=args.match,
                                 columns=args.columns, name=args.name,
                                 missing_zero=args.missing_zero)
    except lms.ExportError as exc:
        print(f"course export-grades: {exc}; nothing written", file=sys.stderr)
        return 2
    print(f"{path}: {export.rows} roster user(s), for {args.format.capitalize()}'s grade import")
    if export.unsubmitted:
        cell = "0" if args.missing_zero else "an empty cell (no grade set)"
        print(f"{len(export.unsubmitted)} roster user(s) with no graded submission, given "
              f"{cell}: {', '.join(export.unsubmitted)}")
    return 0
