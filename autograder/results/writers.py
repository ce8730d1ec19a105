"""What `course grade` writes: results/<id>.json (Gradescope's schema), feedback/<id>.md and
grades.csv (docs/design/interface.md, outputs). Every file is written atomically (temp file +
rename), so an
interrupted batch never leaves a half-written one.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import platform
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import __version__, catalogue, paths
from autograder.grading.run import TestResult

CSV_HEADER = ["id", *catalogue.topic_modules(), "total", "max", "status"]


@dataclass
class Graded:
    """One submission's outcome, as the batch needs it."""

    id: str
    sha256: str
    status: str  # ok | partial | error
    results: list[TestResult] = field(default_factory=list)
    topic_notes: dict[str, str] = field(default_factory=dict)  # topic -> why it did not run
    error: str | None = None
    output: str = ""  # what the public phase's workers printed
    hidden_output: str = ""  # the hidden phase's: for the instructors only
    seconds: float = 0.0
    student_seconds: float = 0.0  # waiting for the worker's replies
    busy_seconds: float = 0.0  # of which, by the worker's clock, inside the calls themselves


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            # Student text (exception messages, type names) may hold lone surrogates, which
            # strict UTF-8 cannot encode: the batch would crash on one student's message
            # (hostile battery: surrogates_and_controls). backslashreplace keeps the file UTF-8
            # and, inside JSON strings, writes a valid \uXXXX escape.
            f.write(data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes 0600; outputs are ordinary files (a tester found grades.csv unreadable
        # to their group): 0666 less the umask, as open() would give.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stale_temps(out: Path) -> None:
    """Delete temp files that a killed run left mid-write (they never count as results)."""
    for sub in ("results", "feedback", "."):
        for p in (out / sub).glob(".*.tmp"):
            try:
                p.unlink()
            except OSError:
                pass


#: Suffixes of the package's files that take part in grading (code, catalogue, templates).
GRADING_SUFFIXES = (".py", ".toml", ".json", ".txt", ".md", ".html", ".j2", ".sh")


def grading_files(package: Path, solutions: Path) -> list[tuple[str, Path]]:
    """Every file whose change could change a grade, by its name relative to the checkout:
    all of the package (the code that judges — checks, runner, sandbox, codec — as well as
    the suites and catalogue) and the reference solutions. Caches are left out."""
    files: list[tuple[str, Path]] = []
    for base, label in ((package, package.name), (solutions, solutions.name)):
        for f in sorted(base.rglob("*")):
            if (f.is_file() and f.suffix in GRADING_SUFFIXES
                    and "__pycache__" not in f.parts and not f.name.startswith(".")):
                files.append((f"{label}/{f.relative_to(base).as_posix()}", f))
    return files


def compute_grader_version(package: Path, solutions: Path) -> str:
    """The package version plus a digest of every grading file (:func:`grading_files`) and of
    the libraries that make or judge the inputs (a new Hypothesis draws other examples)."""
    h = hashlib.sha256()
    for name, f in grading_files(package, solutions):
        data = f.read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode() + data)
    for lib, version in sorted(_library_versions().items()):
        h.update(f"{lib}={version}\0".encode())
    return f"{__version__}+{h.hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def grader_version() -> str:
    """This checkout's grader version, computed once per process (results carry it; a re-run
    resumes only results made under the same one: autograder.grading.batch)."""
    return compute_grader_version(paths.PACKAGE_DIR, paths.SOLUTIONS)


def _library_versions() -> dict[str, str]:
    import hypothesis

    return {**_versions(), "hypothesis": hypothesis.__version__}


def _versions() -> dict[str, str]:
    import numpy

    try:
        import torch

        tv = torch.__version__
    except ImportError:
        tv = "absent"
    return {"python": platform.python_version(), "numpy": numpy.__version__, "torch": tv}


def topic_scores(g: Graded) -> dict[str, float]:
    scores = {m: 0.0 for m in catalogue.topic_modules()}
    for r in g.results:
        scores[r.spec.topic] += r.score
    return scores


def max_score(g: Graded) -> float:
    return sum(r.spec.points for r in g.results)


#: The longest failure message written for one test: messages quote what the student's code
#: returned or raised, which may be megabytes (hostile battery: huge_names).
MAX_MESSAGE = 4000


#: Every character ``str.splitlines`` ends a line at, and how :func:`one_line` writes it.
_LINE_BREAKS = {c: c.encode("unicode_escape").decode("ascii")
                for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """``text`` on one line: each line break written as its escape (``\\n``, ``\\u2028``).

    A topic's note quotes what the submission raised, newlines included: in the ``output``
    summary or the feedback's quote, a message could start lines of its own (a fake
    "ex02_projections: …" reason, a markdown heading).
    """
    return "".join(_LINE_BREAKS.get(c, c) for c in text)


def md_text(text: str) -> str:
    """Student-sourced ``text`` for feedback.md: no raw HTML (a Markdown viewer would render a
    ``<script>``), and each further line quoted under the line it belongs to, so a message
    cannot start a heading or a fake test of its own (red team)."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    head, *rest = safe.split("\n")
    return head + "".join(f"\n  > {line}" for line in rest)


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting with ``= + - @``, a tab or a carriage
    return would be read as a formula (an id like ``=HYPERLINK(…)``: red team), so it gets
    a leading apostrophe, as OWASP advises."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _message(r: TestResult) -> str:
    m = r.message
    if len(m) <= MAX_MESSAGE:
        return m
    return m[:MAX_MESSAGE] + f" … [{len(m) - MAX_MESSAGE} more characters]"


def _test_output(r: TestResult) -> str:
    if r.passed:
        return ""
    ex = catalogue.get_topic(r.spec.topic).exercise(r.spec.exercise)
    return f"{_message(r)}\nHint: {ex.hints[0]}\nLesson: {ex.lesson_link}"


def _capped(text: str, limit: int = 8000) -> str:
    if len(text) <= limit:
        return text
    # Say so, or a flood's "[output … dropped]" note is lost too.
    return text[:limit] + f"\n[{len(text) - limit} more characters of output not shown]"


def results_json(g: Graded, visibility_hidden: str = "after_published") -> str:
    scores = topic_scores(g)
    total = sum(scores.values())
    summary = [f"Status: {g.status}. Score {total:.2f} / {max_score(g):.2f}."]
    skipped = [r for r in g.results if r.skipped]
    if skipped:
        # Left out of `tests`: Gradescope shows a test as passed or failed, and these were
        # neither (a correct submission's page would show them red). Before the topics' notes,
        # whose continuation lines report._reasons reads.
        summary.append(f"{len(skipped)} test(s) that need a CUDA device were skipped: there is "
                       "none on the grading machine (they carry no points).")
    if g.error:
        summary.append(f"Nothing could be graded: {one_line(g.error)}")
    for topic, why in sorted(g.topic_notes.items()):
        summary.append(f"{topic}: {one_line(why)}")
    if g.output.strip():
        # Instructors only (extra_data): what student code printed while a hidden test ran
        # could spell out that test's inputs, and Gradescope shows `output` to students.
        # Not even its length: a submission printed N characters with N made of a hidden
        # input's values (red team). Nor whether the hidden phase printed at all: this
        # note is the public phase's alone.
        summary.append("Output of your code: kept for the instructors only (printing during "
                       "hidden tests could reveal them).")
    doc = {
        "score": round(total, 2),
        "max_score": round(max_score(g), 2),
        "execution_time": round(g.seconds, 3),
        "output": "\n".join(summary),
        "tests": [
            {
                "name": r.spec.name,
                "score": round(r.score, 4),
                "max_score": round(r.spec.points, 4),
                "status": "passed" if r.passed else "failed",
                "output": _test_output(r),
                "visibility": "visible" if r.spec.visibility == "public" else visibility_hidden,
            }
            for r in g.results
            if not r.skipped
        ],
        "extra_data": {
            "id": g.id,
            "status": g.status,
            "student_output": _capped(g.output),
            "hidden_phase_output": _capped(g.hidden_output),
            # Structured, for report.html (which never parses the prose of ``output``).
            "error": g.error,
            "topic_notes": dict(sorted(g.topic_notes.items())),
            "topics": {k: round(v, 2) for k, v in scores.items()},
            "submission_sha256": g.sha256,
            "grader_version": grader_version(),
            **_versions(),
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def feedback_md(g: Graded) -> str:
    scores = topic_scores(g)
    lines = [f"# Feedback for {md_text(g.id)}", "",
             f"Total: **{sum(scores.values()):.2f} / {max_score(g):.2f}** (status: {g.status})", ""]
    if g.error:
        lines += [f"Nothing could be graded: {md_text(one_line(g.error))}", ""]
    for t in catalogue.topics():
        rs = [r for r in g.results if r.spec.topic == t.module]
        got = sum(r.score for r in rs)
        lines += [f"## {t.module} — {t.title}: {got:.2f} / {t.points}", ""]
        if t.module in g.topic_notes:
            lines += [f"> {md_text(one_line(g.topic_notes[t.module]))}", ""]
        skipped = [r for r in rs if r.skipped]
        if skipped:
            lines += [(f"({len(skipped)} test(s) that need a CUDA device were skipped: there "
                       "is none on the grading machine. They carry no points.)"), ""]
            rs = [r for r in rs if not r.skipped]
        failed = [r for r in rs if not r.passed]
        if not rs:
            continue
        if not failed:
            lines += ["All tests passed.", ""]
            continue
        lines.append(f"{len(rs) - len(failed)} of {len(rs)} tests passed. Failed:")
        lines.append("")
        shown = 0
        for r in failed:
            if shown >= 25:
                lines.append(f"- … and {len(failed) - shown} more")
                break
            ex = t.exercise(r.spec.exercise)
            lines.append(f"- **{r.spec.name}** ({r.spec.visibility})  ")
            lines.append(f"  Why: {md_text(_message(r))}  ")
            lines.append(f"  Hint: {ex.hints[0]}  ")
            lines.append(f"  Lesson: {ex.lesson_link}")
            shown += 1
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_submission(out: Path, g: Graded, visibility_hidden: str = "after_published") -> None:
    # Feedback first, results last: a results file means the submission is completely done.
    write_atomic(out / "feedback" / f"{g.id}.md", feedback_md(g))
    write_atomic(out / "results" / f"{g.id}.json", results_json(g, visibility_hidden))


def read_result(out: Path, sid: str) -> dict | None:
    p = out / "results" / f"{sid}.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_grades_csv(out: Path, ids: list[str]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for sid in sorted(ids):
        doc = read_result(out, sid)
        if doc is None:
            continue
        extra = doc["extra_data"]
        w.writerow([csv_cell(sid),
                    *(f"{extra['topics'][m]:.2f}" for m in catalogue.topic_modules()),
                    f"{doc['score']:.2f}", f"{doc['max_score']:.2f}", extra["status"]])
    write_atomic(out / "grades.csv", buf.getvalue())
