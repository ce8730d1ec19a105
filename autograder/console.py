"""Everything `course` prints: tables, progress bars and failure reports (rich)."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from autograder import catalogue
from autograder.grading import loop
from autograder.grading.runner import TestResult
from autograder.results import failures
from autograder.results.model import Result
from autograder.results.text import one_line, printable

# Wide enough for the grade table even when output is piped (CI logs, `make demo | tee`).
_probe = Console()
console = Console(highlight=False, width=None if _probe.is_terminal else 120)


#: What `course grade` says of its scores in a student release (no hidden tests there).
PUBLIC_ONLY = "public tests only — not your grade"


def public_tests_only() -> bool:
    """Whether this is a student release: no topic has a hidden suite
    (:func:`autograder.grading.runner._suite_module` finds none), so `course grade` scores the
    public tests alone and its total is not a grade."""
    from autograder.grading import runner

    return all(runner._suite_module("hidden", m) is None for m in catalogue.topic_modules())


def grade_table(summaries: list[Result], public_only: bool | None = None) -> Table:
    """The grade table `course grade` prints: per submission each topic's score, total, status.
    Titled :data:`PUBLIC_ONLY` when ``public_only`` (default: :func:`public_tests_only`)."""
    if public_only is None:
        public_only = public_tests_only()
    t = Table(title=f"Scores: {PUBLIC_ONLY}" if public_only else "Grades", show_lines=False)
    t.add_column("id")
    for top in catalogue.topics():
        t.add_column(f"ex{top.number:02d}\n/{top.points}", justify="right")
    t.add_column("total\n/100", justify="right")
    t.add_column("status")
    for s in summaries:
        colour = {"ok": "green", "partial": "yellow", "error": "red"}.get(s.status, "")
        # the id as plain text: neither rich markup ("[link=…]") nor a terminal's escapes
        t.add_row(Text(printable(s.id)), *(f"{s.topics[m]:.2f}" for m in catalogue.topic_modules()),
                  f"{s.score:.2f}", f"[{colour}]{s.status}[/]")
    return t


def step_printer(command: str, stream=None):
    """A ``progress(message)`` callback for a long command's steps: each call prints one line,
    ``course COMMAND: [  12.3 s] message``, the seconds since the first call, on stderr (or
    ``stream``), flushed at once. Lines, not a spinner: they also show in CI logs and pipes,
    where rich draws nothing (`course release` was silent there for 80 s)."""
    import sys
    import time

    t0: list[float] = []

    def progress(message: str) -> None:
        if not t0:
            t0.append(time.monotonic())
        out = stream or sys.stderr
        print(f"course {command}: [{time.monotonic() - t0[0]:6.1f} s] {message}", file=out,
              flush=True)

    return progress


def grade_progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.fields[last]}"), console=console,
                    transient=False)


#: How many failed tests `course check` prints when it checks every topic (one topic: all;
#: a topic that could not run and an exercise not written yet are one line each, uncounted).
CHECK_FAILURES = 40
#: The most of what the student's code printed that `course check`/`watch` show: the last lines.
OUTPUT_LINES = 30
OUTPUT_CHARS = 3000


def located(message: str, folder: Path | None = None) -> str:
    """A failure's message as `course check` prints it: the lines after the first indented
    under it, and the traceback's ``<submission>/NAME`` (the grader's name for the worker's
    copy of the student's files: errors.own_frames) as the student's own ``folder/NAME``
    where that file exists there, or as the notebook's code cell and line where the topic is
    graded from ``folder``'s notebook (:func:`notebook_place`); else the placeholder stays."""
    def place(m: re.Match) -> str:
        name, line = m.group(1), int(m.group(2))
        if folder is None:
            return m.group(0)
        if (folder / name).is_file():
            return f'File "{folder / name}", line {line}'
        nb = (folder / name).with_suffix(".ipynb")
        cell = notebook_place(nb, line) if name.endswith(".py") and nb.is_file() else None
        return f'File "{nb}", code cell {cell[0]}, line {cell[1]}' if cell else m.group(0)

    text = re.sub(r'File "<submission>/([^"\n]+)", line (\d+)', place, message)
    return text.replace("\n", "\n  ")


def notebook_place(path: Path, line: int) -> tuple[int, int] | None:
    """(code cell, line in it), both from 1, of ``line`` of the Python file the grader makes
    of the notebook at ``path`` (grading.submission.notebook_to_source: the code cells, nbgrader
    test cells left out, one blank line between cells, magics commented out line for line);
    None when the notebook cannot be read or is shorter."""
    import warnings

    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's per-cell mending notes
            nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable notebook: the placeholder stays
        return None
    start, number = 1, 0
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            continue
        number += 1
        count = max(1, len(str(cell.get("source", "")).splitlines()))
        if start <= line < start + count:
            return number, line - start + 1
        start += count + 1
    return None


def print_failures(results: list[TestResult], limit: int | None,
                   notes: dict[str, str] | None = None,
                   folder: Path | None = None) -> list[TestResult]:
    """Print the failures of ``results`` in :func:`autograder.results.failures.arrange`'s
    order: a topic that could not run (``notes``: topic -> why) and an exercise not written yet
    one line each; each other failed test with its message, its hint (the test's own, else the
    exercise's first) and the lesson, at most ``limit`` of them (None: all), then how many
    more and the `course check TOPIC` that shows them. A message's traceback lines (a public
    test's: errors.own_frames) name the student's files in ``folder`` (:func:`located`).
    Returns all the failed (not skipped) results. The one failure printer of `course check`
    and `course watch`."""
    # The results as records (their kind and hint decided where they ran), as feedback.md has them.
    records = [loop.record(r) for r in results]
    shown, left = failures.limited(failures.arrange(records, notes), limit)
    previous = "failed"
    for s in shown:
        gap = "\n" if s.kind == "failed" or previous == "failed" else ""  # lines: one block
        previous = s.kind
        if s.kind == "not_run":
            console.print(f"{gap}[bold red]✗[/] {escape(one_line(s.line()))}")
            continue
        if s.kind == "unwritten":
            console.print(f"{gap}[yellow]•[/] {escape(s.line())}  "
                          f"(start: course hint {s.topic}.{s.exercise})")
            continue
        r = s.test
        ex = catalogue.get_topic(r.topic).exercise(r.exercise)
        console.print(f"\n[bold red]✗ {escape(r.name)}[/]")
        console.print(f"  {escape(printable(located(r.message, folder), keep=chr(10)))}",
                      soft_wrap=True)
        more_hints = f"  (more: course hint {ex.qualname} --level 2)" if len(ex.hints) > 1 else ""
        console.print(f"  [cyan]Hint:[/] {escape(failures.hint(r))}{more_hints}")
        console.print(f"  [cyan]Lesson:[/] {ex.lesson_link}")
    if left:
        console.print(f"\n{escape(failures.more_line(left))}")
    return [r for r in results if not r.passed and not r.skipped]


def print_output(output: str) -> None:
    """Print what the student's code printed during the public tests, under "Your code
    printed:": the last :data:`OUTPUT_LINES` lines and at most :data:`OUTPUT_CHARS` characters,
    saying when it was cut. Nothing when it printed nothing. Only ever the public phase's
    output (:attr:`autograder.grading.loop.Outcome.output`): the hidden phase's is never shown."""
    text = output.rstrip()
    if not text.strip():
        return
    lines = text.splitlines()
    kept = "\n".join(lines[-OUTPUT_LINES:])
    if len(kept) > OUTPUT_CHARS:
        kept = kept[-OUTPUT_CHARS:]
    cut = len(kept) < len("\n".join(lines))
    console.print("\n[bold]Your code printed[/] (during the public tests"
                  + (f"; cut to the last {OUTPUT_LINES} lines / {OUTPUT_CHARS} characters"
                     if cut else "") + "):")
    console.print(printable(kept, keep="\n\t"), markup=False, highlight=False, soft_wrap=True)


def check_report(results: list[TestResult], topics: list[catalogue.Topic],
                 notes: dict[str, str] | None = None, output: str = "",
                 folder: Path | None = None) -> None:
    """`course check`'s report: a table of public tests passed per topic, the failures
    (:func:`print_failures`; all of them when one topic was checked, else the first
    :data:`CHECK_FAILURES`; tracebacks naming the files in ``folder``), then what the code
    printed (:func:`print_output`)."""
    t = Table(title="course check (public tests)")
    t.add_column("topic")
    t.add_column("passed", justify="right")
    t.add_column("")
    for top in topics:
        rs = [r for r in results if r.spec.topic == top.module]
        ok = sum(r.passed for r in rs)
        mark = "[green]✓[/]" if rs and ok == len(rs) else "[red]✗[/]" if rs else "-"
        # `course check TOPIC.NAME` runs one exercise's tests: the row names that exercise.
        only = {r.spec.exercise for r in rs}
        label = f"{top.module}.{only.pop()}" if len(only) == 1 < len(top.exercises) else top.module
        t.add_row(label, f"{ok}/{len(rs)}", mark)
    console.print(t)
    failed = print_failures(results, None if len(topics) == 1 else CHECK_FAILURES, notes,
                            folder)
    print_output(output)
    if results and not failed:
        console.print("\n[bold green]All public tests pass.[/] Hidden tests run when you are graded.")
