"""Everything `course` prints: tables, progress bars and failure reports (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autograder import catalogue
from autograder.grading.run import TestResult
from autograder.results.model import Result

# Wide enough for the grade table even when output is piped (CI logs, `make demo | tee`).
_probe = Console()
console = Console(highlight=False, width=None if _probe.is_terminal else 120)


def grade_table(summaries: list[Result]) -> Table:
    """The grade table `course grade` prints: per submission each topic's score, total, status."""
    t = Table(title="Grades", show_lines=False)
    t.add_column("id")
    for top in catalogue.topics():
        t.add_column(f"ex{top.number:02d}\n/{top.points}", justify="right")
    t.add_column("total\n/100", justify="right")
    t.add_column("status")
    for s in summaries:
        colour = {"ok": "green", "partial": "yellow", "error": "red"}.get(s.status, "")
        t.add_row(s.id, *(f"{s.topics[m]:.2f}" for m in catalogue.topic_modules()),
                  f"{s.score:.2f}", f"[{colour}]{s.status}[/]")
    return t


def grade_progress() -> Progress:
    return Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.fields[last]}"), console=console,
                    transient=False)


#: How many failures `course check` prints (`course watch` prints fewer after each save).
CHECK_FAILURES = 40


def print_failures(results: list[TestResult], limit: int, more: str) -> list[TestResult]:
    """Print the first ``limit`` failed (not skipped) tests: what failed, why, the exercise's
    hint and its lesson; then how many more, followed by ``more``. Returns all the failures.
    The one failure printer of `course check` and `course watch`."""
    failed = [r for r in results if not r.passed and not r.skipped]
    for r in failed[:limit]:
        ex = catalogue.get_topic(r.spec.topic).exercise(r.spec.exercise)
        console.print(f"\n[bold red]✗ {r.spec.name}[/]")
        console.print(f"  {r.message}")
        more_hints = f"  (more: course hint {ex.qualname} --level 2)" if len(ex.hints) > 1 else ""
        console.print(f"  [cyan]Hint:[/] {ex.hints[0]}{more_hints}")
        console.print(f"  [cyan]Lesson:[/] {ex.lesson_link}")
    if len(failed) > limit:
        console.print(f"\n… and {len(failed) - limit} more {more}")
    return failed


def check_report(results: list[TestResult], topics: list[catalogue.Topic]) -> None:
    t = Table(title="course check (public tests)")
    t.add_column("topic")
    t.add_column("passed", justify="right")
    t.add_column("")
    for top in topics:
        rs = [r for r in results if r.spec.topic == top.module]
        ok = sum(r.passed for r in rs)
        mark = "[green]✓[/]" if rs and ok == len(rs) else "[red]✗[/]" if rs else "-"
        t.add_row(f"{top.module}", f"{ok}/{len(rs)}", mark)
    console.print(t)
    failed = print_failures(results, CHECK_FAILURES, "failures")
    if results and not failed:
        console.print("\n[bold green]All public tests pass.[/] Hidden tests run when you are graded.")
