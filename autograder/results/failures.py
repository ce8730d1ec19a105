"""Which failures a student sees first, and as what: the one rule of `course check`,
`course watch` and feedback/<id>.md (issue 15).

A failed test of an exercise the student has written is shown on its own (its message, hint and
lesson), and those come first: they are the mistakes to fix. An exercise whose every failure is
its stub's own ``NotImplementedError`` is one line ("ex03_softmax.softmax: not written yet
(5 tests)"), and a topic that could not run (its file is missing or did not import) is one line
with the reason, not one copy of it per test. Caps on how many failures are shown count the
individual failures only.

Works on the one test record, :class:`autograder.results.model.TestOutcome` (check and watch
make theirs with :meth:`autograder.grading.runner.TestResult.outcome`): a test that never ran is
known by its recorded ``kind``, its hint is the one recorded where it ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from autograder import catalogue
from autograder.results.model import NOT_RUN, TestOutcome

#: The message `course watch`/`list` give every test of a file still byte-identical to its
#: generated stub (it is not run: every stub fails every test).
NOT_STARTED = "not started: still the generated stub"

#: What :class:`Shown` entries are: one failed test; an exercise not written yet; a topic whose
#: tests could not run.
KINDS = ("failed", "unwritten", "not_run")


@dataclass(frozen=True)
class Shown:
    """One entry of a failure list (:func:`arrange`).

    ``kind`` is one of :data:`KINDS`. ``failed``: ``test`` is the failed result; ``unwritten``:
    ``count`` failed tests of ``exercise``, each the stub's NotImplementedError;
    ``not_run``: ``count`` tests of ``topic`` that failed with its ``note`` (why it could not
    run: the file, the line and the error).
    """

    kind: str
    topic: str
    exercise: str = ""
    count: int = 1
    test: Any = None
    note: str = ""

    def line(self) -> str:
        """The one line of an ``unwritten`` or ``not_run`` entry (plain text; a ``not_run``
        note is student-sourced: escape it for the output it goes to)."""
        tests = f"{self.count} test{'s' if self.count != 1 else ''}"
        if self.kind == "unwritten":
            return f"{self.topic}.{self.exercise}: not written yet ({tests})"
        if self.kind == "not_run":
            return f"{self.topic}: could not run ({tests}): {self.note}"
        raise ValueError(f"a {self.kind!r} entry is shown as a block, not one line")


def stub_failure(message: str, ex: catalogue.Exercise, visibility: str = "public") -> bool | None:
    """Whether a failed test of ``ex`` failed because its stub's NotImplementedError was
    raised: True (the message quotes the stub's own), None (a hidden test: the message only
    says a NotImplementedError was raised in ``ex``, its text hidden), False (anything else).

    The stub's message is recognised as `course list --static` recognises the stub's raise
    (:attr:`autograder.catalogue.Exercise.stub_message_start`).
    """
    if message == NOT_STARTED:
        return True
    start = ex.stub_message_start
    if re.search(rf" raised NotImplementedError: {start}", message):
        return True
    # A hidden test names the call that raised ("ex04_svd_lora.LoRALinear.forward"), no more,
    # at the start or after an error test's "expected ValueError for …, but: " (all grader
    # text in a hidden test: the new-user review's stub feedback listed those one by one).
    if visibility == "hidden" and re.search(
            rf"(^|, but: ){re.escape(ex.qualname)}(\.[\w.]+)? raised NotImplementedError "
            r"\(message hidden", message):
        return None
    return False


def arrange(results: Iterable[TestOutcome],
            notes: dict[str, str] | None = None) -> list[Shown]:
    """The failures among ``results`` (in the order graded), as they are shown.

    First each topic that could not run (its tests whose recorded kind is one of
    :data:`~autograder.results.model.NOT_RUN`; the line quotes the topic's note from ``notes``,
    :attr:`autograder.grading.loop.Outcome.notes`) as one ``not_run`` line; then each
    failed test of a written exercise (``failed``); last each exercise not written yet as one
    ``unwritten`` line. An exercise is not written yet when none of its tests passed and every
    failure is its stub's NotImplementedError (:func:`stub_failure`), at least one of them
    with the stub's message in full. Passed and skipped tests are left out.
    """
    notes = notes or {}
    results = [r for r in results if not r.skipped]
    passed = {(r.topic, r.exercise) for r in results if r.passed}
    failed = [r for r in results if not r.passed]

    not_run: dict[str, int] = {}
    said: dict[str, str] = {}
    rest = []
    for r in failed:
        if r.kind in NOT_RUN:
            not_run[r.topic] = not_run.get(r.topic, 0) + 1
            said.setdefault(r.topic, notes.get(r.topic, r.message))
        else:
            rest.append(r)

    verdicts: dict[tuple[str, str], list[bool | None]] = {}
    for r in rest:
        ex = catalogue.get_topic(r.topic).exercise(r.exercise)
        verdicts.setdefault((r.topic, r.exercise), []).append(
            stub_failure(r.message, ex, r.visibility))
    unwritten = {key: len(v) for key, v in verdicts.items()
                 if key not in passed and True in v and False not in v}

    shown = [Shown("not_run", t, count=n, note=said[t]) for t, n in not_run.items()]
    shown += [Shown("failed", r.topic, r.exercise, test=r) for r in rest
              if (r.topic, r.exercise) not in unwritten]
    shown += [Shown("unwritten", t, e, count=n) for (t, e), n in unwritten.items()]
    return shown


@dataclass(frozen=True)
class Mistake:
    """One mistake in one exercise: its ``first`` failed test, and the failed tests of the same
    exercise that follow it (``more``), most likely failing from the same mistake (a wrong
    function fails each case that calls it)."""

    first: TestOutcome
    more: tuple[TestOutcome, ...] = ()


def mistakes(failed: Iterable[TestOutcome]) -> list[Mistake]:
    """The failed tests ``failed`` (ran and failed, in the order graded: an exercise's public
    tests first) folded per exercise under the first of them (:class:`Mistake`), in the order
    of those firsts."""
    groups: dict[tuple[str, str], list[TestOutcome]] = {}
    for t in failed:
        groups.setdefault((t.topic, t.exercise), []).append(t)
    return [Mistake(ts[0], tuple(ts[1:])) for ts in groups.values()]


def limited(shown: list[Shown], limit: int | None) -> tuple[list[Shown], list[Shown]]:
    """(what to show, the failed tests left out): every line entry, and the first ``limit``
    ``failed`` entries (all with ``limit`` None), in :func:`arrange`'s order."""
    if limit is None:
        return shown, []
    out, left, seen = [], [], 0
    for s in shown:
        if s.kind == "failed":
            seen += 1
            if seen > limit:
                left.append(s)
                continue
        out.append(s)
    return out, left


def more_line(left: list[Shown]) -> str:
    """"… and N more failures", with the command that shows them all (per topic)."""
    per_topic: dict[str, int] = {}
    for s in left:
        per_topic[s.topic] = per_topic.get(s.topic, 0) + 1
    where = "; ".join(f"`course check {t}` ({n})" for t, n in per_topic.items())
    n = len(left)
    return f"… and {n} more failure{'s' if n != 1 else ''}: see {'them' if n != 1 else 'it'} " \
           f"with {where}"


#: A result of the right shape but the wrong dtype, in the checks' own wording
#: (``checks.expect_array``/``expect_tensor``): "expected (7, 7) float32, got (7, 7) float64",
#: "expected tensor (2, 3) float16 on cpu, got tensor (2, 3) float32 on cpu".
_DTYPE_MISMATCH = re.compile(r"expected (?:tensor )?(\([^)]*\)) (\w+)(?: on (\S+))?, "
                             r"got (?:tensor )?(\([^)]*\)) (\w+)(?: on (\S+))?")
#: An error that was expected and not raised (``checks.expect_raises``).
_NOT_RAISED = re.compile(r"(?:^|: )expected (\w+) for ")

#: The hints of two kinds of failure that an exercise's first hint, about its maths, does not
#: explain (a new user's walk-through: a float64 ``softmax_jacobian`` was told how to split the
#: Jacobian). Shown only where the test has no hint of its own.
DTYPE_HINT = ("The values may be right, the dtype is not: read the docstring's dtype rule "
              "(which dtypes are kept, which are promoted, where the work is done in float32) "
              "and cast the result where it says.")
RAISE_HINT = ("This input must raise {exc}: read the docstring's Raises section (which shapes, "
              "dtypes and values are refused) and check them before computing, naming the "
              "offending shapes or values in the message.")


def _kind_hint(message: str) -> str:
    """The hint of the failure's kind (:data:`DTYPE_HINT`, :data:`RAISE_HINT`), or ""."""
    raised = _NOT_RAISED.search(message)
    if raised:
        return RAISE_HINT.format(exc=raised.group(1))
    m = _DTYPE_MISMATCH.search(message)
    if m and m.group(1) == m.group(4) and m.group(2) != m.group(5) and m.group(3) == m.group(6):
        return DTYPE_HINT
    return ""


def hint_for(topic: str, exercise: str, own: str, message: str) -> str:
    """The hint shown with a failed test of ``topic``'s ``exercise``: its own (``own``, from
    ``graded(..., hint=...)``), else the hint of its failure's kind where ``message`` shows one
    (a wrong dtype, an error not raised: :func:`_kind_hint`), else the exercise's first hint.
    Called where the test ran (:meth:`autograder.grading.runner.TestResult.outcome`)."""
    return (own or _kind_hint(message or "")
            or catalogue.get_topic(topic).exercise(exercise).hints[0])


def hint(t: TestOutcome) -> str:
    """The hint shown with the failed test ``t``: the one recorded with it. A record read back
    from a results file (which does not carry hints: the schema is unchanged) has its hints
    recorded again by the grader that reads it (:func:`autograder.grading.loop.with_hints`);
    one that still has none gets :func:`hint_for` without a test's own hint (its failure's
    kind's, else its exercise's first)."""
    if t.hint is not None:
        return t.hint
    return hint_for(t.topic, t.exercise, "", t.message)
