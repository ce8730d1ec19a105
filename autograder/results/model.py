"""One submission's result: the one type every output is written from and read back into.

The grading loop hands over a :class:`Graded` (its raw record: the ``TestResult`` objects and
the facts about the submission's files); :meth:`Result.from_graded` turns it, once, into a
:class:`Result`. That result is written as ``results/<id>.json`` (Gradescope's schema, with the
structure below in ``extra_data``: :mod:`autograder.results.writers`) and read back by
:func:`load` alone; grades.csv, report.html, the batch's summary and the console's table read
its fields, never the prose of ``output`` (docs/design/interface.md, outputs).

``extra_data["tests"]`` lists every graded test, the skipped ones too (Gradescope's ``tests``
leaves those out), as ``{name, topic, exercise, visibility, points, score, kind, message}``;
``extra_data["topic_kinds"]`` says, for each topic in ``topic_notes``, why it did not (fully)
run. A test's ``kind`` is one of :data:`KINDS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import catalogue

if TYPE_CHECKING:  # only the type: results never import the code that runs tests
    from autograder.grading.runner import TestResult

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
#: The note :func:`autograder.grading.runner.run_topic` gives a topic that ran but timed out.
TIMED_OUT = "timed out"

#: The longest failure message kept for one test: messages quote what the student's code
#: returned or raised, which may be megabytes (hostile battery: huge_names).
MAX_MESSAGE = 4000


class ResultError(ValueError):
    """A results file that is not one this grader wrote (names the file and what is wrong)."""


@dataclass
class Graded:
    """What grading one submission produced, as the grading loop fills it in (trusted data).

    ``missing``: topics with no file at all; ``unreadable``: topics whose file could not be
    read (both from :class:`autograder.grading.submission.Loaded`). Turned into the written
    :class:`Result` by :meth:`Result.from_graded`.
    """

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
    missing: set[str] = field(default_factory=set)
    unreadable: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome: what it tests (topic, exercise, visibility ``public``/``hidden``),
    its points and score, its :data:`KINDS` ``kind`` and its failure message ("" if passed;
    at most :data:`MAX_MESSAGE` characters and a note of how many were cut)."""

    name: str
    topic: str
    exercise: str
    visibility: str
    points: float
    score: float
    kind: str
    message: str = ""

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

    ``topics`` is each topic's score (exact when made by :meth:`from_graded`, rounded to 2
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
    def from_graded(cls, g: Graded, grader_version: str = "",
                    versions: dict[str, str] | None = None) -> Result:
        """The result of a graded submission (the one place a test's ``kind`` is decided)."""
        kinds = {t: topic_kind(g, t, why) for t, why in g.topic_notes.items()}
        tests = [TestOutcome(name=r.spec.name, topic=r.spec.topic, exercise=r.spec.exercise,
                             visibility=r.spec.visibility, points=r.spec.points, score=r.score,
                             kind=_test_kind(r, g.topic_notes.get(r.spec.topic),
                                             kinds.get(r.spec.topic)),
                             message="" if r.passed else _capped_message(r.message))
                 for r in g.results]
        topics = {m: 0.0 for m in catalogue.topic_modules()}
        for t in tests:
            topics[t.topic] += t.score
        return cls(id=g.id, sha256=g.sha256, status=g.status, tests=tests, topics=topics,
                   score=sum(topics.values()), max_score=sum(t.points for t in tests),
                   topic_notes=dict(sorted(g.topic_notes.items())),
                   topic_kinds=dict(sorted(kinds.items())), error=g.error, output=g.output,
                   hidden_output=g.hidden_output, seconds=g.seconds,
                   student_seconds=g.student_seconds, busy_seconds=g.busy_seconds,
                   grader_version=grader_version, versions=dict(versions or {}))


def topic_kind(g: Graded, topic: str, note: str) -> str:
    """Why ``topic`` has a note: one of :data:`TOPIC_KINDS`, from the loader's facts."""
    if g.error:
        return "not_graded"
    if topic in g.missing:
        return "missing"
    if topic in g.unreadable:
        return "unreadable"
    return "timeout" if note == TIMED_OUT else "import_error"


def _test_kind(r: TestResult, note: str | None, kind: str | None) -> str:
    if r.skipped:
        return "skipped"
    if r.passed:
        return "passed"
    # A topic that could not run fails each of its tests with its note, as it is (run_topic):
    # in a phase where it did not load, every test carries exactly that text.
    if kind in NOT_RUN and r.message == note:
        return kind
    return "failed"


def _capped_message(m: str) -> str:
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


def load(out: Path, sid: str) -> Result | None:
    """The result of ``sid`` in the output folder ``out``, or None when its file is missing,
    unreadable, or not one this grader writes (an older grader's: it is then graded again)."""
    path = results_path(out, sid)
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
    except (OSError, ValueError):  # ResultError and json's errors are ValueErrors
        return None


def load_all(out: Path, ids: list[str] | None = None) -> list[Result]:
    """The results of ``ids`` (default: every ``results/*.json``) sorted by id; files that
    :func:`load` cannot read are left out (grades.csv and report.html leave them out too)."""
    if ids is None:
        ids = [p.stem for p in (out / "results").glob("*.json")]
    found = (load(out, sid) for sid in sorted(set(ids)))
    return [r for r in found if r is not None]
