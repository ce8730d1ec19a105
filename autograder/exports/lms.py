"""`course export-grades`: a graded batch's grades as a file Canvas's or Moodle's gradebook
imports (docs/design/interface.md, outputs of `course export-grades`).

The grades come from the batch's ``results/<id>.json`` (:func:`autograder.results.model.load_all`),
restricted to the ids of its ``grades.csv`` when there is one (results of submissions no longer
in the class may linger in ``results/``). Submission ids are mapped to LMS users through a
roster: a CSV with a header row, for example the LMS's own gradebook export, one of whose
columns holds the submission ids (``--match``).

- **Canvas** (Grades, Import): the columns ``Student, ID, SIS User ID, SIS Login ID, Section``,
  copied from the roster where it has them, then one column per grade; a column that names no
  existing assignment becomes a new one. The second row, ``Points Possible``, gives each
  column's maximum, as Canvas's own export does.
- **Moodle** (Grades, Import, CSV file): the roster's match column (mapped to the user field it
  holds, e.g. "Email address" to ``useremail``, on the import page), then one column per grade.

Every roster user gets a row, in roster order; one with no submission gets an empty cell (the
LMS leaves the grade unset), or 0 with ``missing_zero``. An id graded but absent from the roster
is refused, by name, before anything is written: a grade must not silently go nowhere.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import catalogue
from autograder.results import model
from autograder.results.report import topic_maxima
from autograder.results.writers import write_atomic

FORMATS = ("canvas", "moodle")
#: Canvas's gradebook columns before the grades (its export's, which its import reads).
CANVAS_USER_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
#: The roster column holding submission ids when ``--match`` is not given: the first present.
#: Canvas's "SIS Login ID" is the login, which `course submit` uses by default ($USER).
DEFAULT_MATCH = {"canvas": ["SIS Login ID"],
                 "moodle": ["Username", "ID number", "Email address"]}
COLUMNS = ("total", "topics")
DEFAULT_NAME = "Linear Algebra for Transformers"


class ExportError(ValueError):
    """The grades cannot be exported as asked (the message says what to fix)."""


@dataclass
class Export:
    """An export's text and what the instructor should know: roster users with no submission
    (their match value), in roster order."""

    text: str
    rows: int
    unsubmitted: list[str] = field(default_factory=list)


def graded_results(batch: Path) -> list[model.Result]:
    """The results of the batch in ``batch`` (a `course grade --out` folder), sorted by id.

    Raises:
        ExportError: the folder has no results, or one of them does not read back (named).
    """
    ids = None
    grades = batch / "grades.csv"
    if grades.is_file():
        with grades.open(newline="", encoding="utf-8") as f:
            # csv_cell put an apostrophe before an id starting = + - @ (a spreadsheet formula)
            ids = [r["id"][1:] if r["id"][:1] == "'" and r["id"][1:2] in "=+-@\t\r" else r["id"]
                   for r in csv.DictReader(f)]
    try:
        results = model.load_all(batch, ids)
    except model.ResultError as exc:  # never a student silently left without a grade
        raise ExportError(str(exc)) from None
    if not results:
        raise ExportError(f"{batch} holds no graded results (results/*.json): run course grade "
                          f"--out {batch} first")
    return results


def read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The roster's header and rows (UTF-8, a BOM allowed, as spreadsheets write it); a
    Canvas export's ``Points Possible`` row is skipped.

    Raises:
        ExportError: the file is missing, not UTF-8 text or has no header.
    """
    try:
        text = path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportError(f"cannot read the roster {path}: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h for h in (reader.fieldnames or []) if h is not None]
    if not header:
        raise ExportError(f"the roster {path} is empty: it needs a header row")
    rows = [r for r in reader
            if not (r.get("Student") or "").strip().startswith("Points Possible")]
    return header, rows


def match_column(fmt: str, header: list[str], match: str | None) -> str:
    """The roster column holding submission ids: ``match`` if given, else the first of
    :data:`DEFAULT_MATCH` present.

    Raises:
        ExportError: ``match`` (or every default) is not a column of the roster.
    """
    if match is not None:
        if match not in header:
            raise ExportError(f"the roster has no column {match!r}; its columns: "
                              + ", ".join(header))
        return match
    for name in DEFAULT_MATCH[fmt]:
        if name in header:
            return name
    raise ExportError(f"say which roster column holds the submission ids (--match COLUMN): "
                      f"none of {', '.join(DEFAULT_MATCH[fmt])} is there; its columns: "
                      + ", ".join(header))


def grade_columns(results: list[model.Result], columns: str, name: str
                  ) -> list[tuple[str, float, dict[str, float]]]:
    """(column name, maximum, id -> score) per grade column: the total, or one per topic."""
    if columns == "total":
        return [(name, max(r.max_score for r in results), {r.id: r.score for r in results})]
    maxima = topic_maxima(results)
    return [(f"{name}: {t.module}", maxima[t.module],
             {r.id: r.topics.get(t.module, 0.0) for r in results}) for t in catalogue.topics()]


def build(results: list[model.Result], roster: tuple[list[str], list[dict[str, str]]],
          fmt: str, match: str | None = None, columns: str = "total",
          name: str = DEFAULT_NAME, missing_zero: bool = False) -> Export:
    """The import file's text for ``fmt`` (:data:`FORMATS`).

    Raises:
        ExportError: an unknown format or columns, a match column that is not there, a roster
            that names one user twice, or graded ids the roster lacks (all of them named).
    """
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if columns not in COLUMNS:
        raise ExportError(f"unknown columns {columns!r}: one of {', '.join(COLUMNS)}")
    header, rows = roster
    if fmt == "canvas" and not {"ID", "SIS User ID", "SIS Login ID"} & set(header):
        raise ExportError("Canvas finds users by its ID, SIS User ID or SIS Login ID column, "
                          "and the roster has none: use Canvas's own gradebook export as the "
                          "roster (Grades, Export, Export Entire Gradebook)")
    key = match_column(fmt, header, match)
    counts = Counter(r[key] for r in rows if r[key])
    twice = sorted(v for v, n in counts.items() if n > 1)
    if twice:
        raise ExportError(f"the roster's {key!r} column names these more than once: "
                          + ", ".join(twice))
    listed = {r[key] for r in rows}
    absent = [r.id for r in results if r.id not in listed]
    if absent:
        raise ExportError(f"{len(absent)} graded submission id(s) not in the roster's {key!r} "
                          f"column: {', '.join(absent)} (add them to the roster, rename their "
                          "submissions, or pick the column with --match)")
    grades = grade_columns(results, columns, name)
    graded = {r.id for r in results}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if fmt == "canvas":
        w.writerow(CANVAS_USER_COLUMNS + [c for c, _, _ in grades])
        w.writerow(["Points Possible", "", "", "", ""] + [f"{m:.2f}" for _, m, _ in grades])
        user_columns = CANVAS_USER_COLUMNS
    else:
        w.writerow([key] + [c for c, _, _ in grades])
        user_columns = [key]
    unsubmitted = []
    for r in rows:
        if r[key] in graded:
            cells = [f"{by_id[r[key]]:.2f}" for _, _, by_id in grades]
        else:
            unsubmitted.append(r[key])
            cells = ["0.00" if missing_zero else "" for _ in grades]
        w.writerow([r.get(c) or "" for c in user_columns] + cells)
    return Export(buf.getvalue(), len(rows), unsubmitted)


def write(batch: Path, roster_path: Path, fmt: str, out: Path | None = None,
          **options) -> tuple[Path, Export]:
    """Build the export of the batch in ``batch`` (:func:`build`'s ``options``) and write it
    atomically to ``out`` (default ``batch/grades-<fmt>.csv``); its path and the export.

    Raises:
        ExportError: as :func:`graded_results`, :func:`read_roster` and :func:`build`.
    """
    export = build(graded_results(batch), read_roster(roster_path), fmt, **options)
    path = out or batch / f"grades-{fmt}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, export.text)
    return path, export
