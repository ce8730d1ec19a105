"""`report.html`: the instructor's one-page view of a graded batch (docs/design/interface.md,
outputs).

Built from the batch's records (:class:`~autograder.results.model.Result`, each as its
results file holds it: :meth:`~autograder.results.model.Result.as_written`), in memory after
`course grade`, read back through :func:`~autograder.results.model.load_all` by `course report`,
so a resumed batch and a report of shards write the same page as a fresh batch. Deterministic: the same results give the same
bytes (no clock, no ``execution_time``; matplotlib's SVG ids are salted with a constant and its
``Date`` metadata dropped). The page is
templates/report.html and templates/report.css, filled by :mod:`autograder.templating`.
Self-contained: CSS inline, plots as ``data:`` URIs, and a
Content-Security-Policy that forbids every network fetch and every script, so nothing a student
wrote (ids, exception messages) can run in the instructor's browser even if escaping failed.

Run it by hand on an existing output folder with ``python -m autograder.results.report OUT``.
"""

from __future__ import annotations

import base64
import functools
import io
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import jinja2

from autograder import catalogue, templating
from autograder.results import failures, model
from autograder.results.model import Result, TestOutcome
from autograder.results.text import one_line
from autograder.results.writers import write_atomic
from autograder.driver.errors import without_frames

REPORT_NAME = "report.html"
#: How many mistakes (an exercise's first failed test) the "commonest mistakes" table shows.
TOP_FAILURES = 20
#: Longest message shown in full (the rest is cut with an ellipsis).
MAX_MESSAGE = 400


def _reasons(doc: dict) -> dict[str, str]:
    """Why topics did not run, from a results document: topic -> note, and under "" why
    nothing could be graded (:attr:`autograder.results.model.Result.reasons`).

    Never parsed from the ``output`` prose: a note quotes what the submission raised, and
    lines of its own there would read as other topics' reasons (test_hidden_text.py).
    """
    return model.from_json(doc).reasons


def load_results(out: Path, ids: list[str] | None = None) -> list[Result]:
    """The results of ``ids`` (default: every ``results/*.json``), sorted by id.

    Raises:
        ResultError: a results file that does not read back (named): never left out.
    """
    return model.load_all(out, ids)


# ---------------------------------------------------------------- aggregation

def test_order(results: list[Result]) -> list[TestOutcome]:
    """Every graded test once (skipped ones left out), in results order (catalogue order)."""
    seen: dict[str, TestOutcome] = {}
    for r in results:
        for t in r.graded_tests():
            seen.setdefault(t.name, t)
    return list(seen.values())


def pass_rates(results: list[Result]) -> list[tuple[TestOutcome, int, int]]:
    """(test, passed, graded) for every test: how many submissions passed it."""
    passed: Counter[str] = Counter()
    graded: Counter[str] = Counter()
    for r in results:
        for x in r.graded_tests():
            graded[x.name] += 1
            passed[x.name] += x.passed
    return [(t, passed[t.name], graded[t.name]) for t in test_order(results)]


#: The failure of a test whose exercise is still the generated stub: its NotImplementedError
#: (autograder.authoring.stubs), "topic.name: not implemented yet" or, for a helper the exercise
#: needs, "topic.name: helper is not implemented yet"; in a hidden test the message is not shown
#: (autograder.driver.errors), and a bare NotImplementedError is taken as not written either.
_STUB_FAILURE = re.compile(
    r"raised NotImplementedError(?:: [\w.]+: (?:\w+ is )?not implemented yet"
    r"| \(message hidden in a hidden test\))"
    # a docstring example's test names its example line after the message
    r"(?:\s*in the docstring example of [^\n]*)?\s*\Z")


def is_stub_failure(t: TestOutcome) -> bool:
    """Whether ``t`` failed only because its exercise is not written yet (the stub's own
    NotImplementedError), not because of anything the student wrote."""
    return t.kind == "failed" and bool(_STUB_FAILURE.search(without_frames(t.message)))


def not_written(results: list[Result]) -> tuple[int, int]:
    """(failed tests, submissions) that failed only on the stub's NotImplementedError
    (:func:`is_stub_failure`): shown apart from the commonest failures, as one line."""
    tests, who = 0, set()
    for r in results:
        for t in r.graded_tests():
            if is_stub_failure(t):
                tests += 1
                who.add(r.id)
    return tests, len(who)


class Mistake(NamedTuple):
    """One mistake across the class: the first failed test of an exercise (``first``, with
    ``where`` its ``topic.exercise`` and ``message`` the commonest message it failed with) in
    ``ids`` submissions; ``folded``: how many failures of the same exercise followed it in
    those submissions (:func:`autograder.results.failures.mistakes`), and which tests."""

    where: str
    first: str
    visibility: str
    message: str
    ids: list[str]
    folded: int
    dependents: list[str]


def common_mistakes(results: list[Result]) -> tuple[list[Mistake], int]:
    """The commonest mistakes (:class:`Mistake`): each submission's failed tests folded per
    exercise under the first (:func:`autograder.results.failures.mistakes`), grouped across
    the class by that first test, most submissions first (at most :data:`TOP_FAILURES`); and
    how many failures were left out because their whole topic did not run (kind
    :data:`~autograder.results.model.NOT_RUN`: listed per submission instead). Failures that
    are only an unwritten exercise's stub (:func:`is_stub_failure`) are in neither:
    :func:`not_written` counts them."""
    who: dict[str, set[str]] = {}
    facts: dict[str, tuple[str, str]] = {}
    messages: dict[str, Counter[str]] = {}
    folded: Counter[str] = Counter()
    dependents: dict[str, set[str]] = {}
    skipped = 0
    for r in results:
        failed = []
        for t in r.graded_tests():
            if t.passed or is_stub_failure(t):
                continue
            if t.kind in model.NOT_RUN:
                skipped += 1
                continue
            failed.append(t)
        for m in failures.mistakes(failed):
            key = m.first.name
            who.setdefault(key, set()).add(r.id)
            facts[key] = (f"{m.first.topic}.{m.first.exercise}", m.first.visibility)
            # One mistake in two submissions sits on different lines: counted without them.
            messages.setdefault(key, Counter())[without_frames(m.first.message).strip()] += 1
            folded[key] += len(m.more)
            dependents.setdefault(key, set()).update(t.name for t in m.more)
    ranked = sorted(who, key=lambda k: (-len(who[k]), facts[k][0], k))[:TOP_FAILURES]
    return [Mistake(facts[k][0], k, facts[k][1],
                    sorted(messages[k].items(), key=lambda kv: (-kv[1], kv[0]))[0][0],
                    sorted(who[k]), folded[k], sorted(dependents[k])) for k in ranked], skipped


def problem_rows(results: list[Result]) -> list[tuple[Result, list[str]]]:
    """Submissions with status error or partial, each with its reasons (the missing topics
    folded into one line so a student who handed in one topic is one line, not six)."""
    rows = []
    for r in results:
        if r.status not in ("error", "partial"):
            continue
        lines, missing = [], []
        if r.status == "error" and r.error is not None:
            # One reason per submission that could not be graded: every topic's note repeats
            # it (grading.loop), so it is said once, not once per topic (a new user counted 9).
            rows.append((r, [f"nothing could be graded: {one_line(r.error)}"]))
            continue
        whole = f"nothing could be graded: {r.error}" if r.error else None
        for topic, why in sorted(r.reasons.items()):
            if topic and why == whole:
                continue
            if topic and r.topic_kinds.get(topic) == "missing":
                missing.append(topic)
            elif topic:  # one line each: a reason's own line breaks cannot start another
                lines.append(f"{topic}: {one_line(why)}")
            else:
                lines.insert(0, f"nothing could be graded: {one_line(why)}")
        if missing:
            lines.append("not in the submission: " + ", ".join(missing))
        rows.append((r, lines or [f"status {r.status} (no reason recorded)"]))
    return rows


def topic_maxima(results: list[Result]) -> dict[str, float]:
    """Each topic's graded maximum, from the tests' points (what the results were graded on)."""
    maxima = {m: 0.0 for m in catalogue.topic_modules()}
    for t in test_order(results):
        if t.topic in maxima:
            maxima[t.topic] += t.points
    return maxima


# ---------------------------------------------------------------- plots

def _svg_uri(fig) -> str:
    import matplotlib

    buf = io.BytesIO()
    # A constant salt makes matplotlib's element ids repeatable; no Date keeps the bytes stable.
    with matplotlib.rc_context({"svg.hashsalt": "course-report", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def histogram_svg(results: list[Result]) -> str:
    """The totals' histogram, with mean and median marked, as an SVG ``data:`` URI.

    Raises:
        ImportError: matplotlib is not installed (the page then says so instead).
    """
    from matplotlib.figure import Figure  # the OO API: no pyplot, no GUI backend, no globals

    totals = [r.score for r in results]
    top = max([r.max_score for r in results] + [1.0])
    width = next(w for w in (0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100) if top / w <= 25 or w == 100)
    bins = [width * i for i in range(int(-(-top // width)) + 1)]
    fig = Figure(figsize=(7.0, 3.2))
    ax = fig.add_subplot()
    ax.hist(totals, bins=bins, color="#4c72b0", edgecolor="white")
    if totals:
        ax.axvline(statistics.mean(totals), color="#c44e52", linestyle="--",
                   label=f"mean {statistics.mean(totals):.2f}")
        ax.axvline(statistics.median(totals), color="#55a868", linestyle=":",
                   label=f"median {statistics.median(totals):.2f}")
        ax.legend(loc="best", frameon=False)
    ax.set_xlim(0, bins[-1])
    ax.set_xlabel(f"total (of {top:g})")
    ax.set_ylabel("submissions")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"Totals of {len(totals)} submission(s)")
    fig.tight_layout()
    return _svg_uri(fig)


def topics_svg(results: list[Result]) -> str:
    """Each topic's mean score in % of its graded maximum, as an SVG ``data:`` URI.

    Raises:
        ImportError: matplotlib is not installed.
    """
    from matplotlib.figure import Figure

    maxima = topic_maxima(results)
    names = [t.module for t in catalogue.topics()]
    means = [100 * statistics.mean([r.topics.get(m, 0.0) for r in results]) / maxima[m]
             if results and maxima[m] else 0.0 for m in names]
    fig = Figure(figsize=(7.0, 3.0))
    ax = fig.add_subplot()
    bars = ax.barh(names[::-1], means[::-1], color="#4c72b0")
    for bar, v in zip(bars, means[::-1], strict=True):
        ax.text(bar.get_width() + 1, bar.get_y() + bar.get_height() / 2, f"{v:.0f} %",
                va="center", fontsize=8)
    ax.set_xlim(0, 110)
    ax.set_xlabel("mean score, % of the topic's points")
    ax.set_title("Mean score per topic")
    fig.tight_layout()
    return _svg_uri(fig)


# ---------------------------------------------------------------- the page

def _pct(passed: int, graded: int) -> float:
    return 100.0 * passed / graded if graded else 0.0


def rate_tree(results: list[Result]) -> list[dict]:
    """Pass rates per topic, per exercise under it, per test under that: for each topic of the
    catalogue that has graded tests, ``{"module", "title", "passed", "graded", "pct",
    "exercises": [{"name", "passed", "graded", "pct", "tests": [{"test", "passed", "graded",
    "pct"}]}]}``, where ``passed``/``graded`` count test results over the class (all statuses)."""
    by_topic: dict[str, dict[str, list[tuple[TestOutcome, int, int]]]] = {}
    for t, p, n in pass_rates(results):
        by_topic.setdefault(t.topic, {}).setdefault(t.exercise, []).append((t, p, n))
    tree = []
    for top in catalogue.topics():
        exercises = []
        for ex in top.exercises:
            rows = by_topic.get(top.module, {}).get(ex.name)
            if not rows:
                continue
            p, n = sum(r[1] for r in rows), sum(r[2] for r in rows)
            exercises.append({"name": ex.name, "passed": p, "graded": n, "pct": _pct(p, n),
                              "tests": [{"test": t, "passed": tp, "graded": tn,
                                         "pct": _pct(tp, tn)} for t, tp, tn in rows]})
        if exercises:
            p = sum(e["passed"] for e in exercises)
            n = sum(e["graded"] for e in exercises)
            tree.append({"module": top.module, "title": top.title, "passed": p, "graded": n,
                         "pct": _pct(p, n), "exercises": exercises})
    return tree


def _summary(results: list[Result]) -> list[tuple[str, str]]:
    totals = [r.score for r in results]
    statuses = Counter(r.status for r in results)
    stats = [("submissions", str(len(results)))]
    if totals:
        stats += [("mean", f"{statistics.mean(totals):.2f}"),
                  ("median", f"{statistics.median(totals):.2f}"),
                  ("min", f"{min(totals):.2f}"), ("max", f"{max(totals):.2f}"),
                  ("std dev", f"{statistics.pstdev(totals):.2f}")]
    return stats + [(f"status {s}", str(statuses.get(s, 0))) for s in ("ok", "partial", "error")]


def _plots(results: list[Result]) -> dict[str, str] | None:
    try:
        return {"histogram": histogram_svg(results), "topics": topics_svg(results)}
    except ImportError:
        return None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


@functools.cache
def _environment() -> jinja2.Environment:
    # Autoescaping on for every template: student text (ids, messages) is escaped by the
    # engine, never by hand; StrictUndefined makes a misspelt name an error, not a blank.
    return jinja2.Environment(
        loader=jinja2.PackageLoader("autograder.results", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True)


def render(results: list[Result]) -> str:
    """The whole page as text (deterministic in ``results``): templates/report.html.j2,
    rendered by Jinja2 with autoescaping (every student-sourced text escaped), its CSS
    (templates/report.css, the course's own) inlined."""
    versions = sorted({r.grader_version for r in results if r.grader_version}) or ["unknown"]
    mistakes, not_run = common_mistakes(results)
    stub_tests, stub_subs = not_written(results)
    page = _environment().get_template("report.html.j2").render(
        css=templating.text("autograder.results", "report.css"),
        versions=", ".join(versions), count=len(results), summary=_summary(results),
        plots=_plots(results),
        problems=[(r, _cut("\n".join(_cut(x) for x in lines)))
                  for r, lines in problem_rows(results)],
        mistakes=[m._replace(message=_cut(m.message)) for m in mistakes], not_run=not_run,
        stub_tests=stub_tests, stub_subs=stub_subs, tree=rate_tree(results),
        modules=catalogue.topic_modules(), results=results)
    return page


def write_report(out: Path, results: list[Result]) -> Path:
    """Write ``out/report.html`` from ``results`` (the batch's records in memory, or those
    :func:`load_results` read back for `course report`) atomically; its path."""
    path = out / REPORT_NAME
    write_atomic(path, render(sorted(results, key=lambda r: r.id)))
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder.results.report OUT``: rebuild OUT/report.html; 0, 1 when a
    results file does not read back (named), or 2 on bad usage."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0], "results").is_dir():
        print("usage: python -m autograder.results.report OUT  (OUT: a `course grade --out` folder)",
              file=sys.stderr)
        return 2
    try:
        results = load_results(Path(args[0]))
    except model.ResultError as exc:
        print(f"python -m autograder.results.report: {exc}", file=sys.stderr)
        return 1
    print(write_report(Path(args[0]), results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
