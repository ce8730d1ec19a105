"""Helpers for the repository's own tests: grade source text through the real sandbox."""

from __future__ import annotations

from pathlib import Path

from autograder import catalogue
from autograder.grading import replay as plan
from autograder.grading import run as runner
from autograder.grading import submission
from autograder.grading.run import TestResult
from autograder.sandbox.session import Session, Slot

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"


def solution_source(topic: str) -> str:
    return (SOLUTIONS / f"{topic}.py").read_text(encoding="utf-8")


def grade_sources(slot: Slot, sources: dict[str, str | bytes], topics: list[str] | None = None,
                  hidden: bool = True, plans: dict | None = None) -> dict[str, TestResult]:
    """Grade in-memory topic files (topic -> source) on ``slot``: test name -> result.

    ``plans`` (``autograder.grading.replay.record``'s) grades as a batch does; without, call by call.
    """
    raw = {k: v.encode() if isinstance(v, str) else v for k, v in sources.items()}
    out: dict[str, TestResult] = {}
    session = Session(slot, raw)
    try:
        for topic in topics or list(raw):
            specs = runner.collect(topic, hidden=hidden)
            missing = None if topic in raw else f"{topic}.py not found"
            results, _ = runner.run_topic(session, topic, specs, missing,
                                          plan.planned_runner((plans or {}).get(topic)))
            out.update({r.spec.name: r for r in results})
    finally:
        session.close()
    return out


def grade_folder(slot: Slot, folder: Path, topics: list[str] | None = None,
                 hidden: bool = True) -> dict[str, TestResult]:
    loaded = submission.load(folder)
    return grade_sources(slot, loaded.sources, topics or catalogue.topic_modules(), hidden)


def with_replacement(topic: str, code: str) -> str:
    """The reference solution of ``topic`` with ``code`` appended: definitions in ``code``
    replace the reference's (a later ``def``/``class`` of the same name wins)."""
    return solution_source(topic) + "\n\n# --- replacement under test ---\n" + code + "\n"


def failed_exercises(results: dict[str, TestResult]) -> set[str]:
    return {r.spec.exercise for r in results.values() if not r.passed}
