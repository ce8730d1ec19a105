"""`course list`: the public checks of one exercises folder, as a progress table.

The checks run exactly as `course check` runs them: through the sandbox (autograder.grading.loop),
never in this process.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from autograder import catalogue
from autograder.grading import runner
from autograder.grading import submission, uploads
from autograder.console import console
from autograder.grading.runner import TestResult
from autograder.results import failures
from autograder.student.reset import exercise_state, pristine_stub


# ---------------------------------------------------------------- reading the student's folder

def load_folder(folder: Path) -> submission.Loaded:
    """``folder`` read as the grader reads a submission (:func:`uploads.load`), its "not found"
    messages worded for a student's own folder: that a notebook would do too."""
    loaded = uploads.load(folder, named=False)  # its name names no output file
    for topic in loaded.missing:
        loaded.problems[topic] = loaded.problems[topic].replace(
            submission.not_found_head(topic),
            f"{topic}.py not found in the checked folder {folder} (an {topic}.ipynb notebook "
            "works too)", 1)
    return loaded


def shadowed_notebooks(folder: Path, topics: list[catalogue.Topic]) -> list[tuple[Path, Path]]:
    """(notebook, .py) for each of ``topics`` with both files in ``folder``: the ``.py`` is
    what `course check` and the grader read (:func:`submission.choose`)."""
    pairs = [(folder / f"{t.module}.ipynb", folder / t.filename) for t in topics]
    return [(nb, py) for nb, py in pairs if nb.is_file() and py.is_file()]


def warn_shadowed(command: str, folder: Path, topics: list[catalogue.Topic]) -> None:
    """Say on stderr, per notebook the ``.py`` beside it hides, that it is not what is read:
    a student working in the notebook otherwise sees its edits do nothing."""
    for nb, py in shadowed_notebooks(folder, topics):
        print(f"course {command}: warning: {nb} is ignored: {py} in the same folder wins "
              "(move the .py away to work in the notebook)", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- running the public checks

@dataclass
class PublicRun:
    """The public checks of some topics: results per topic, why a topic could not run
    (``notes``), and what the submission printed (``output``: the public phase only)."""

    results: dict[str, list[TestResult]]
    notes: dict[str, str]
    output: str


def check_public(slot, folder: Path, topics: list[catalogue.Topic],
                 skip_untouched: bool = True) -> PublicRun:
    """Run the public tests of ``topics`` on the files in ``folder`` (sandboxed, like
    `course check`). A file still byte-identical to its generated stub is not run: every stub
    fails every test (a repository test enforces it), so the answer is known
    (:data:`autograder.results.failures.NOT_STARTED`)."""
    from autograder.grading import loop

    loaded = load_folder(folder)
    out = PublicRun({}, {}, "")
    todo = []
    for top in topics:
        specs = runner.collect(top.module, hidden=False)
        stub = pristine_stub(top.module) if skip_untouched else None
        if stub is not None and loaded.sources.get(top.module) == stub.encode("utf-8"):
            out.results[top.module] = [TestResult(s, False, failures.NOT_STARTED) for s in specs]
        else:
            todo.append((top.module, specs))
    if todo:
        outcome = loop.grade(slot, loaded.sources, dict(todo), problems=loaded.problems)
        out.results.update(outcome.results)
        out.notes, out.output = dict(outcome.notes), outcome.output
    return out


def run_public(slot, folder: Path, topics: list[catalogue.Topic],
               skip_untouched: bool = True) -> dict[str, list[TestResult]]:
    """Public test results per topic for the files in ``folder`` (:func:`check_public`'s)."""
    return check_public(slot, folder, topics, skip_untouched).results


@dataclass
class Row:
    """One exercise's progress."""

    exercise: catalogue.Exercise
    state: str
    passed: int | None  # None: not checked
    total: int


def progress(folder: Path, topics: list[catalogue.Topic],
             results: dict[str, list[TestResult]]) -> dict[str, list[Row]]:
    """Per topic, per exercise: its state in the file and its public tests passed/total.
    The file is the one the grader reads (a notebook's code cells when there is no ``.py``)."""
    sources = load_folder(folder).sources
    table: dict[str, list[Row]] = {}
    for top in topics:
        try:
            text = sources[top.module].decode("utf-8") if top.module in sources else None
        except UnicodeDecodeError:
            text = None
        rs = results.get(top.module)
        specs = [r.spec for r in rs] if rs is not None else runner.collect(top.module,
                                                                           hidden=False)
        rows = []
        for ex in top.exercises:
            total = sum(1 for s in specs if s.exercise == ex.name)
            passed = None if rs is None else sum(r.passed for r in rs
                                                 if r.spec.exercise == ex.name)
            rows.append(Row(ex, exercise_state(text, ex), passed, total))
        table[top.module] = rows
    return table


def _mark(passed: int | None, total: int) -> str:
    if passed is None or total == 0:
        return "[dim]–[/]"
    return "[green]✓[/]" if passed == total else "[red]✗[/]"


def progress_table(table: dict[str, list[Row]], title: str = "Progress (public tests)",
                   exercises: bool | set[str] = True) -> Table:
    """One row per topic, and one per exercise of the topics ``exercises`` names (all: True)."""
    t = Table(title=title)
    t.add_column("topic / exercise")
    t.add_column("points", justify="right")
    t.add_column("code")
    t.add_column("public tests", justify="right")
    t.add_column("")
    state_style = {"written": "green", "todo": "yellow", "missing": "red", "no file": "red"}
    for module, rows in table.items():
        checked = all(r.passed is not None for r in rows)
        passed = sum(r.passed or 0 for r in rows)
        total = sum(r.total for r in rows)
        t.add_row(f"[bold]{module}[/]", str(sum(r.exercise.points for r in rows)), "",
                  f"[bold]{passed}/{total}[/]" if checked else f"?/{total}",
                  _mark(passed if checked else None, total))
        for r in rows if exercises is True or (exercises and module in exercises) else []:
            t.add_row(f"  {r.exercise.name}", str(r.exercise.points),
                      f"[{state_style[r.state]}]{r.state}[/]",
                      f"?/{r.total}" if r.passed is None else f"{r.passed}/{r.total}",
                      _mark(r.passed, r.total))
    return t


def summary_line(table: dict[str, list[Row]]) -> str:
    rows = [r for rs in table.values() for r in rs]
    done = [r for r in rows if r.passed is not None and r.total and r.passed == r.total]
    pts = sum(r.exercise.points for r in done)
    return (f"{len(done)} of {len(rows)} exercises pass all their public tests "
            f"({pts} of {sum(r.exercise.points for r in rows)} points' worth); "
            "hidden tests decide the grade.")


def show_list(folder: Path, topics: list[catalogue.Topic], run: bool = True) -> int:
    """`course list`: the progress table (with ``run``, from the public checks)."""
    results: dict[str, list[TestResult]] = {}
    if run:
        from autograder.driver.slot import Slot

        with Slot(0) as slot, console.status("running the public checks …"):
            results = run_public(slot, folder, topics)
    table = progress(folder, topics, results)
    console.print(progress_table(table, "Progress (public tests)" if run
                                 else "Exercises (run `course list` without --static to check)"))
    if run:
        console.print(summary_line(table))
    return 0
