"""One submission's result: the one type every output is written from and read back into.

Each test's record (:class:`TestOutcome`: its kind, points, score, message and hint) is made
where the test ran (:meth:`autograder.grading.runner.TestResult.outcome`), and each topic's
kind where its note arose (:func:`autograder.grading.loop.run_phase`); :meth:`Result.of`
gathers them into the one record of a submission. That record is written as
``results/<id>.json`` (Gradescope's schema, with the structure below in ``extra_data``:
:mod:`autograder.results.writers`) and carried in memory to every writer of the batch
(feedback, grades.csv, report.html, the summary); what is read back from disk (a resumed
submission, `course report`, `course export-grades`) goes through :func:`from_json` alone.
Nothing reads the prose of ``output`` (docs/design/interface.md, outputs).

``extra_data["tests"]`` lists every graded test, the skipped ones too (Gradescope's ``tests``
leaves those out), as ``{name, topic, exercise, visibility, points, score, kind, message}``;
``extra_data["topic_kinds"]`` says, for each topic in ``topic_notes``, why it did not (fully)
run. A test's ``kind`` is one of :data:`KINDS`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder import catalogue

#: What happened to one test. ``failed``: it ran and its check failed (a wrong result, or the
#: code raised or timed out); the rest say why it did not run at all.
KINDS = {
    "passed": "it ran and passed",
    "failed": "it ran and failed",
    "skipped": "it needs a CUDA device and the grading machine has none (no points)",
    "missing": "the topic's file is not in the submission",
    "unreadable": "the topic's file is there but could not be read",
    "import_error": "the topic's file did not load (it raised or exited on import, or timed out)",
    "not_graded": "nothing in the submission could be graded",
}
#: The kinds of a test that never ran because of its topic (or its submission).
NOT_RUN = frozenset({"missing", "unreadable", "import_error", "not_graded"})
#: A topic's kind (``topic_kinds``): one of :data:`NOT_RUN`, or ``timeout`` (it ran, and some
#: call took too long: those tests failed; the later calls of that function were refused).
TOPIC_KINDS = NOT_RUN | {"timeout"}
#: The note :func:`autograder.grading.runner.run_topic` gives a topic that ran but timed out
#: (:data:`autograder.grading.runner.TIMED_OUT`; its kind is recorded, never read from it).
TIMED_OUT = "timed out"

#: The longest failure message kept for one test: messages quote what the student's code
#: returned or raised, which may be megabytes (hostile battery: huge_names).
MAX_MESSAGE = 4000


class ResultError(ValueError):
    """A results file that is not one this grader wrote (names the file and what is wrong)."""


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome: what it tests (topic, exercise, visibility ``public``/``hidden``),
    its points and score, its :data:`KINDS` ``kind`` and its failure message ("" if passed;
    at most :data:`MAX_MESSAGE` characters and a note of how many were cut).

    ``hint``: the hint a student is shown with a failed test, recorded where it ran
    (:func:`autograder.results.failures.hint_for`); None for a passed or skipped one, and for a
    record read back from a results file, which does not carry it (the schema is unchanged):
    the grader that reads it back records it again from its suites
    (:func:`autograder.grading.loop.with_hints`).
    """

    name: str
    topic: str
    exercise: str
    visibility: str
    points: float
    score: float
    kind: str
    message: str = ""
    hint: str | None = field(default=None, compare=False)

    @property
    def passed(self) -> bool:
        """Whether the test passed."""
        return self.kind == "passed"

    @property
    def skipped(self) -> bool:
        """Whether the test was skipped (no CUDA): neither passed nor failed, no points."""
        return self.kind == "skipped"

    def to_json(self) -> dict:
        """The ``extra_data["tests"]`` entry (points and score rounded as Gradescope's are)."""
        return {"name": self.name, "topic": self.topic, "exercise": self.exercise,
                "visibility": self.visibility, "points": round(self.points, 4),
                "score": round(self.score, 4), "kind": self.kind, "message": self.message}


@dataclass
class Result:
    """One submission's result, as written to and read from ``results/<id>.json``.

    ``topics`` is each topic's score (exact when made by :meth:`of`, rounded to 2
    places when read back, as grades.csv writes them); ``score``/``max_score`` likewise.
    ``resumed``: read back by a re-run instead of graded (never written).
    """

    id: str
    sha256: str
    status: str
    tests: list[TestOutcome]
    topics: dict[str, float]
    score: float
    max_score: float
    topic_notes: dict[str, str] = field(default_factory=dict)
    topic_kinds: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    output: str = ""
    hidden_output: str = ""
    seconds: float = 0.0
    student_seconds: float = 0.0
    busy_seconds: float = 0.0
    grader_version: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    resumed: bool = False

    @property
    def total(self) -> float:
        """The total score (``score``; the name the CLI's table and progress line use)."""
        return self.score

    @property
    def reasons(self) -> dict[str, str]:
        """Why topics did not run: topic -> note, and under "" why nothing could be graded."""
        reasons = dict(sorted(self.topic_notes.items()))
        return {"": self.error, **reasons} if self.error else reasons

    def graded_tests(self) -> list[TestOutcome]:
        """The tests that count as passed or failed (the skipped ones left out)."""
        return [t for t in self.tests if not t.skipped]

    @classmethod
    def of(cls, id: str, sha256: str, tests: list[TestOutcome], *, error: str | None = None,
           topic_notes: dict[str, str] | None = None, topic_kinds: dict[str, str] | None = None,
           output: str = "", hidden_output: str = "", seconds: float = 0.0,
           student_seconds: float = 0.0, busy_seconds: float = 0.0, grader_version: str = "",
           versions: dict[str, str] | None = None) -> Result:
        """The record of a graded submission, from its tests' records and its topics' notes
        and kinds as they were decided (nothing re-derived): each topic's score, the total
        and maximum summed from the tests, and the status (``error`` when nothing could be
        read, ``partial`` when some topic has a note, else ``ok``).

        Raises:
            ValueError: a topic kind that is not one of :data:`TOPIC_KINDS`, or a note
                without a kind.
        """
        notes, kinds = dict(topic_notes or {}), dict(topic_kinds or {})
        if set(notes) != set(kinds) or not set(kinds.values()) <= TOPIC_KINDS:
            raise ValueError(f"topic kinds {kinds} do not match the notes of {sorted(notes)}")
        topics = {m: 0.0 for m in catalogue.topic_modules()}
        for t in tests:
            topics[t.topic] += t.score
        status = "error" if error else "partial" if notes else "ok"
        return cls(id=id, sha256=sha256, status=status, tests=list(tests), topics=topics,
                   score=sum(topics.values()), max_score=sum(t.points for t in tests),
                   topic_notes=dict(sorted(notes.items())),
                   topic_kinds=dict(sorted(kinds.items())), error=error, output=output,
                   hidden_output=hidden_output, seconds=seconds,
                   student_seconds=student_seconds, busy_seconds=busy_seconds,
                   grader_version=grader_version, versions=dict(versions or {}))

    def as_written(self) -> Result:
        """This record with its numbers as the results file holds them (topics and totals to
        2 places, tests' points and scores to 4): what :func:`from_json` would read back, so
        that grades.csv and report.html made in memory match those made from the files."""
        return dataclasses.replace(
            self, topics={k: round(v, 2) for k, v in self.topics.items()},
            score=round(self.score, 2), max_score=round(self.max_score, 2),
            tests=[dataclasses.replace(t, points=round(t.points, 4), score=round(t.score, 4))
                   for t in self.tests])


def capped_message(m: str) -> str:
    """A failure message cut to :data:`MAX_MESSAGE` characters, saying how many were cut."""
    if len(m) <= MAX_MESSAGE:
        return m
    return m[:MAX_MESSAGE] + f" … [{len(m) - MAX_MESSAGE} more characters]"


# ---------------------------------------------------------------- reading back

def results_path(out: Path, sid: str) -> Path:
    """Where the results file of submission ``sid`` lives in the output folder ``out``."""
    return out / "results" / f"{sid}.json"


def from_json(doc: object, where: str = "results file") -> Result:
    """The :class:`Result` a results document (parsed JSON) holds.

    Raises:
        ResultError: ``doc`` lacks a field this grader writes, or one has the wrong type
            (the message names ``where`` and the field).
    """
    def need(obj: object, key: str, kind: type | tuple[type, ...], at: str) -> object:
        if not isinstance(obj, dict) or key not in obj:
            raise ResultError(f"{where}: no {at}{key!r}")
        value = obj[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise ResultError(f"{where}: {at}{key!r} is a {type(value).__name__}")
        return value

    num = (int, float)
    extra = need(doc, "extra_data", dict, "")
    tests = []
    for i, t in enumerate(need(extra, "tests", list, "extra_data.")):
        at = f"extra_data.tests[{i}]."
        kind = need(t, "kind", str, at)
        if kind not in KINDS:
            raise ResultError(f"{where}: {at}'kind' is {kind!r}, not one of {', '.join(KINDS)}")
        tests.append(TestOutcome(
            name=need(t, "name", str, at), topic=need(t, "topic", str, at),
            exercise=need(t, "exercise", str, at), visibility=need(t, "visibility", str, at),
            points=float(need(t, "points", num, at)), score=float(need(t, "score", num, at)),
            kind=kind, message=need(t, "message", str, at)))
    topics = need(extra, "topics", dict, "extra_data.")
    notes = need(extra, "topic_notes", dict, "extra_data.")
    kinds = need(extra, "topic_kinds", dict, "extra_data.")
    error = extra.get("error")
    versions = {k: str(extra[k]) for k in ("python", "numpy", "torch", "triton") if k in extra}
    return Result(
        id=need(extra, "id", str, "extra_data."), sha256=need(extra, "submission_sha256", str,
                                                               "extra_data."),
        status=need(extra, "status", str, "extra_data."), tests=tests,
        topics={str(m): float(need(topics, m, num, "extra_data.topics.")) for m in topics},
        score=float(need(doc, "score", num, "")), max_score=float(need(doc, "max_score", num, "")),
        topic_notes={str(k): str(v) for k, v in notes.items()},
        topic_kinds={str(k): str(v) for k, v in kinds.items()},
        error=None if error is None else str(error),
        output=str(extra.get("student_output", "")),
        hidden_output=str(extra.get("hidden_phase_output", "")),
        seconds=float(doc.get("execution_time", 0.0) or 0.0),
        grader_version=str(extra.get("grader_version", "")), versions=versions)


def read(path: Path) -> Result:
    """The result in the results file ``path``.

    Raises:
        ResultError: the file is missing or unreadable, is not JSON, or is not one this
            grader writes (the message names the file and what is wrong).
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # json's errors and a file that is not UTF-8
        raise ResultError(f"{path}: not a results file ({exc})") from None
    return from_json(doc, str(path))


def load(out: Path, sid: str) -> Result | None:
    """The result of ``sid`` in the output folder ``out``, or None when its file is missing,
    unreadable, or not one this grader writes: what a re-run asks (such a submission is then
    graded again) and what `course report --class` counts as missing."""
    try:
        return read(results_path(out, sid))
    except ResultError:
        return None


def load_all(out: Path, ids: list[str] | None = None) -> list[Result]:
    """The results of ``ids`` (default: every ``results/*.json``) sorted by id: what
    `course report` and `course export-grades` are made from.

    Raises:
        ResultError: a file that is missing or does not read back (:func:`read`); never a
            row silently left out of grades.csv or the report.
    """
    if ids is None:
        ids = [p.stem for p in (out / "results").glob("*.json")]
    return [read(results_path(out, sid)) for sid in sorted(set(ids))]
