"""What `course grade` writes: results/<id>.json (Gradescope's schema), feedback/<id>.md and
grades.csv (docs/design/interface.md, outputs), each from one :class:`~autograder.results.model.Result`.
Every file is written atomically (temp file + rename), so an interrupted batch never leaves a
half-written one.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from pathlib import Path

from autograder import catalogue
from autograder.results import failures, model
from autograder.results.model import Result
from autograder.results.text import csv_cell, md_text, one_line

__all__ = ["CSV_HEADER", "feedback_md", "gradescope_json", "remove_stale_temps", "results_json",
           "write_atomic", "write_grades_csv", "write_submission"]

CSV_HEADER = ["id", *catalogue.topic_modules(), "total", "max", "status"]


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temp file and a rename, with the
    permissions ``open()`` would give; an interrupted write leaves the old file, or none."""
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


def remove_stale_temps(out: Path, ids: list[str] | None = None) -> None:
    """Delete temp files that a killed run left mid-write (they never count as results): all
    of them, or with ``ids`` only those of these submissions' results and feedback files (the
    other temp files of a folder that several shards share may be writes in progress)."""
    own = None
    if ids is not None:
        # write_atomic's names: "." + the file's name + "." + mkstemp's 8 characters + ".tmp";
        # matched whole, so that id "a" never claims the temp file of id "a.json".
        files = "|".join(re.escape(f"{sid}{ext}") for sid in ids for ext in (".json", ".md"))
        own = re.compile(rf"\.(?:{files})\.[a-z0-9_]{{8}}\.tmp") if files else None
        if own is None:
            return
    for sub in ("results", "feedback") if own is not None else ("results", "feedback", "."):
        for p in (out / sub).glob(".*.tmp"):
            if own is not None and not own.fullmatch(p.name):
                continue
            try:
                p.unlink()
            except OSError:
                pass


def _test_output(t: model.TestOutcome, site_url: str | None = None) -> str:
    if t.passed:
        return ""
    ex = catalogue.get_topic(t.topic).exercise(t.exercise)
    return (f"{t.message}\nHint: {failures.hint(t)}\n"
            f"Lesson: {catalogue.lesson_link(ex, site_url)}")


def _capped(text: str, limit: int = 8000) -> str:
    if len(text) <= limit:
        return text
    # Say so, or a flood's "[output … dropped]" note is lost too.
    return text[:limit] + f"\n[{len(text) - limit} more characters of output not shown]"


def results_json(r: Result, visibility_hidden: str = "after_published",
                 site_url: str | None = None) -> str:
    """The results file's text: Gradescope's fields, and in ``extra_data`` the structure that
    :func:`autograder.results.model.load` reads back (the model's docstring lists it). Lesson
    links point at ``site_url``, or name the repository's lesson files when None
    (:func:`autograder.catalogue.lesson_link`)."""
    summary = [f"Status: {r.status}. Score {r.score:.2f} / {r.max_score:.2f}."]
    skipped = [t for t in r.tests if t.skipped]
    if skipped and not r.error:  # nothing ran at all: no test was skipped for want of CUDA
        # Left out of `tests`: Gradescope shows a test as passed or failed, and these were
        # neither (a correct submission's page would show them red).
        summary.append(f"{len(skipped)} test(s) that need a CUDA device were skipped: there is "
                       "none on the grading machine (they carry no points).")
    if r.error:
        summary.append(f"Nothing could be graded: {one_line(r.error)}")
    whole = f"nothing could be graded: {r.error}" if r.error else None
    for topic, why in sorted(r.topic_notes.items()):
        if why != whole:  # the reason above, which every topic's note repeats (grading.loop)
            summary.append(f"{topic}: {one_line(why)}")
    if r.output.strip():
        # Instructors only (extra_data): what student code printed while a hidden test ran
        # could spell out that test's inputs, and Gradescope shows `output` to students.
        # Not even its length: a submission printed N characters with N made of a hidden
        # input's values (red team). Nor whether the hidden phase printed at all: this
        # note is the public phase's alone.
        summary.append("Output of your code: kept for the instructors only (printing during "
                       "hidden tests could reveal them).")
    doc = {
        "score": round(r.score, 2),
        "max_score": round(r.max_score, 2),
        "execution_time": round(r.seconds, 3),
        "output": "\n".join(summary),
        "tests": [
            {
                "name": t.name,
                "score": round(t.score, 4),
                "max_score": round(t.points, 4),
                "status": "passed" if t.passed else "failed",
                "output": _test_output(t, site_url),
                "visibility": "visible" if t.visibility == "public" else visibility_hidden,
            }
            for t in r.graded_tests()
        ],
        "extra_data": {
            "id": r.id,
            "status": r.status,
            "student_output": _capped(r.output),
            "hidden_phase_output": _capped(r.hidden_output),
            # Structured, for grades.csv and report.html (which never parse ``output``).
            "error": r.error,
            "topic_notes": dict(sorted(r.topic_notes.items())),
            "topics": {k: round(v, 2) for k, v in r.topics.items()},
            "submission_sha256": r.sha256,
            "grader_version": r.grader_version,
            **r.versions,
            "topic_kinds": dict(sorted(r.topic_kinds.items())),
            "tests": [t.to_json() for t in r.tests],
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def _groups(r: Result) -> list[tuple[str, str, str, list[model.TestOutcome]]]:
    """(topic, exercise, visibility, tests) of ``r``'s tests, per exercise and visibility, in
    the order graded; a group whose every test was skipped is left out."""
    groups: dict[tuple[str, str, str], list[model.TestOutcome]] = {}
    for t in r.tests:
        groups.setdefault((t.topic, t.exercise, t.visibility), []).append(t)
    return [(*key, ts) for key, ts in groups.items() if any(not t.skipped for t in ts)]


#: The name of a Gradescope entry: one exercise's public or hidden tests.
GROUP_NAME = "{topic}.{exercise}: {which} tests"


def _group_output(tests: list[model.TestOutcome], shown: list[failures.Shown], status: str,
                  site_url: str | None) -> str:
    """What a Gradescope entry shows: how many of its tests passed, each mistake
    (:func:`autograder.results.failures.mistakes`: the first failed test with its message,
    hint and lesson, the failures that follow it in the exercise folded into one line of
    names), an exercise not written yet or a topic that did not run on one line, and the CUDA
    tests skipped where there are some and the status is not ``error``. ``shown``: the whole
    submission's :func:`~autograder.results.failures.arrange` (an exercise is not written yet
    by all of its tests, public and hidden together)."""
    t0 = tests[0]
    graded = [t for t in tests if not t.skipped]
    failed = [t for t in graded if not t.passed]
    mine = {id(t) for t in failed}
    lines = [f"{len(graded) - len(failed)} of {len(graded)} tests passed."]
    for s in shown:
        if s.kind == "not_run" and s.topic == t0.topic and failed:
            lines.append(f"Could not run: {one_line(s.note)}")
        elif s.kind == "unwritten" and (s.topic, s.exercise) == (t0.topic, t0.exercise) \
                and failed:
            lines.append(f"Not written yet (start: course hint {s.topic}.{s.exercise}).")
    for m in failures.mistakes(s.test for s in shown
                               if s.kind == "failed" and id(s.test) in mine):
        ex = catalogue.get_topic(m.first.topic).exercise(m.first.exercise)
        lines += [f"Failed: {m.first.name}", m.first.message,
                  f"Hint: {failures.hint(m.first)}",
                  f"Lesson: {catalogue.lesson_link(ex, site_url)}"]
        if m.more:
            lines.append(f"Also failed, probably from the same mistake ({len(m.more)}): "
                         + "; ".join(t.name for t in m.more))
    skipped = len(tests) - len(graded)
    if skipped and status != "error":
        lines.append(f"{skipped} CUDA test{'s' if skipped != 1 else ''} skipped (no CUDA device "
                     "on the grading machine; no points).")
    return "\n".join(lines)


def gradescope_json(r: Result, visibility_hidden: str = "after_published",
                    site_url: str | None = None) -> str:
    """Gradescope's ``results.json`` for the record ``r`` (what `course gradescope`'s
    ``run_autograder`` writes): the summary of :func:`results_json`, then one entry per
    exercise and visibility (``<topic>.<exercise>: public tests`` shown as ``visible``,
    ``…: hidden tests`` as ``visibility_hidden``, exactly as each test was), its score and
    max_score the sums of its tests' and its output its failures (:func:`_group_output`);
    the per-test record once, in ``extra_data`` (as in ``results/<id>.json``)."""
    doc = json.loads(results_json(r, visibility_hidden, site_url))
    shown = failures.arrange(r.tests, r.topic_notes)
    doc["tests"] = [
        {
            "name": GROUP_NAME.format(topic=topic, exercise=exercise,
                                      which="public" if vis == "public" else "hidden"),
            "score": round(sum(t.score for t in tests), 4),
            "max_score": round(sum(t.points for t in tests), 4),
            "status": "passed" if all(t.passed for t in tests if not t.skipped) else "failed",
            "output": _group_output(tests, shown, r.status, site_url),
            "visibility": "visible" if vis == "public" else visibility_hidden,
        }
        for topic, exercise, vis, tests in _groups(r)
    ]
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


#: How many mistakes (an exercise's first failed test, its dependent failures folded under it)
#: feedback.md lists per topic (lines for an exercise not written yet or a topic that did not
#: run are not counted).
FEEDBACK_FAILURES = 25


def feedback_md(r: Result, site_url: str | None = None) -> str:
    """The student's feedback/<id>.md: per topic its score, why it did not run, and its
    failures in :func:`autograder.results.failures.arrange`'s order: each mistake of a written
    exercise (:func:`autograder.results.failures.mistakes`) as its first failed test with its
    message, hint (the test's own, else the exercise's first) and lesson (student text
    escaped: md_text), the failed tests after it in that exercise folded into one line, at most
    :data:`FEEDBACK_FAILURES` mistakes; each exercise not written yet on one line. Lesson links
    as :func:`results_json` makes them."""
    lines = [f"# Feedback for {md_text(r.id)}", "",
             f"Total: **{r.score:.2f} / {r.max_score:.2f}** (status: {r.status})", ""]
    if r.error:
        lines += [f"Nothing could be graded: {md_text(one_line(r.error))}", ""]
    # Why the whole submission failed, as every topic's note has it (grading.loop): printed
    # once above, so such a topic gets one line, not the reason again.
    whole = f"nothing could be graded: {r.error}" if r.error else None
    for t in catalogue.topics():
        rs = [x for x in r.tests if x.topic == t.module]
        # The topic's score as grades.csv has it, not a sum of the tests': read back, those
        # are rounded to 4 places, and 90 of them summed could print 11.86 for 11.87, so a
        # re-run's feedback never matched the file and regraded the submission every time.
        got = r.topics.get(t.module, sum(x.score for x in rs))
        lines += [f"## {t.module} — {t.title}: {got:.2f} / {t.points}", ""]
        if whole is not None and r.topic_notes.get(t.module) == whole:
            n = sum(1 for x in rs if not x.skipped)
            lines += [f"Not graded: its {n} test{'s' if n != 1 else ''} could not run, for the "
                      "reason above.", ""]
            continue
        if t.module in r.topic_notes:
            lines += [f"> {md_text(one_line(r.topic_notes[t.module]))}", ""]
        skipped = [x for x in rs if x.skipped]
        if skipped:
            lines += [(f"({len(skipped)} test(s) that need a CUDA device were skipped: there "
                       "is none on the grading machine. They carry no points.)"), ""]
            rs = [x for x in rs if not x.skipped]
        failed = [x for x in rs if not x.passed]
        if not rs:
            continue
        if not failed:
            lines += ["All tests passed.", ""]
            continue
        lines.append(f"{len(rs) - len(failed)} of {len(rs)} tests passed. Failed:")
        lines.append("")
        # The shared order (check and watch too): a topic that did not run one line (its note
        # is above), then each mistake of a written exercise: its first failed test in full,
        # the failures after it in the same exercise folded into one line (they most likely
        # fail from the same mistake), then each exercise not written yet on one line.
        shown = failures.arrange(rs, r.topic_notes)
        folded = failures.mistakes(s.test for s in shown if s.kind == "failed")
        kept, more = folded[:FEEDBACK_FAILURES], folded[FEEDBACK_FAILURES:]
        for s in shown:
            if s.kind == "not_run":
                lines.append(f"- {s.count} test{'s' if s.count != 1 else ''} could not run: "
                             "the reason is quoted above")
        for m in kept:
            x = m.first
            ex = t.exercise(x.exercise)
            lines.append(f"- **{x.name}** ({x.visibility})  ")
            lines.append(f"  Why: {md_text(x.message)}  ")
            lines.append(f"  Hint: {failures.hint(x)}  ")
            lines.append(f"  Lesson: {catalogue.lesson_link(ex, site_url)}"
                         + ("  " if m.more else ""))
            if m.more:
                lines.append(f"  Also failed, probably from the same mistake ({len(m.more)}): "
                             + "; ".join(f"{y.name} ({y.visibility})" for y in m.more))
        for s in shown:
            if s.kind == "unwritten":
                lines.append(f"- {s.line()}  ")
                lines.append(f"  Start: `course hint {s.topic}.{s.exercise}`")
        left = [y for m in more for y in (m.first, *m.more)]
        if left:
            lines.append(f"- … and {len(left)} more failed test{'s' if len(left) != 1 else ''} "
                         f"(`course check {t.module}` lists the public ones)")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_submission(out: Path, r: Result, visibility_hidden: str = "after_published",
                     site_url: str | None = None) -> Result:
    """Write ``r``'s feedback and results files into ``out`` (lesson links to ``site_url``, see
    :func:`results_json`); returns the record as written (:meth:`Result.as_written`: its
    numbers rounded as the file rounds them), which the batch carries on to grades.csv and
    report.html."""
    # Feedback first, results last: a results file means the submission is completely done.
    write_atomic(out / "feedback" / f"{r.id}.md", feedback_md(r, site_url))
    write_atomic(model.results_path(out, r.id), results_json(r, visibility_hidden, site_url))
    return r.as_written()


def write_grades_csv(out: Path, results: list[Result]) -> None:
    """Write ``out/grades.csv``: one row per result, sorted by id (the scores as the results
    files round them). The results come from the batch's memory, or from the files through
    :func:`autograder.results.model.load_all` (`course report`), which raises for a file that
    does not read back: no submission is ever silently left out."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r in sorted(results, key=lambda r: r.id):
        w.writerow([csv_cell(r.id), *(f"{r.topics[m]:.2f}" for m in catalogue.topic_modules()),
                    f"{r.score:.2f}", f"{r.max_score:.2f}", r.status])
    write_atomic(out / "grades.csv", buf.getvalue())
