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
import html
import io
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

from autograder import catalogue, templating
from autograder.results import model
from autograder.results.model import Result, TestOutcome
from autograder.results.text import one_line
from autograder.results.writers import write_atomic
from autograder.sandbox.errors import without_frames

REPORT_NAME = "report.html"
#: How many distinct failure messages the "commonest failures" table shows.
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
#: (autograder.sandbox.errors), and a bare NotImplementedError is taken as not written either.
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


def common_failures(results: list[Result]) -> tuple[list[tuple[str, int, list[str], list[str]]],
                                                      int]:
    """The commonest failure messages: (message, failed tests, submission ids, test names),
    most frequent first, and how many failures were left out because their whole topic did not
    run (kind :data:`~autograder.results.model.NOT_RUN`: listed per submission instead).
    Failures that are only an unwritten exercise's stub (:func:`is_stub_failure`) are in
    neither: :func:`not_written` counts them."""
    count: Counter[str] = Counter()
    who: dict[str, set[str]] = {}
    which: dict[str, set[str]] = {}
    skipped = 0
    for r in results:
        for t in r.graded_tests():
            if t.passed or is_stub_failure(t):
                continue
            if t.kind in model.NOT_RUN:
                skipped += 1
                continue
            # One mistake in two submissions sits on different lines: grouped without them.
            msg = without_frames(t.message).strip()
            count[msg] += 1
            who.setdefault(msg, set()).add(r.id)
            which.setdefault(msg, set()).add(t.name)
    ranked = sorted(count, key=lambda m: (-count[m], m))[:TOP_FAILURES]
    return [(m, count[m], sorted(who[m]), sorted(which[m])) for m in ranked], skipped


def problem_rows(results: list[Result]) -> list[tuple[Result, list[str]]]:
    """Submissions with status error or partial, each with its reasons (the missing topics
    folded into one line so a student who handed in one topic is one line, not six)."""
    rows = []
    for r in results:
        if r.status not in ("error", "partial"):
            continue
        lines, missing = [], []
        # Every topic of a submission that could not be read has that one reason as its note
        # (grading.loop): said once, not once per topic (a new user counted 9 of them).
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


# ---------------------------------------------------------------- HTML

def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _rate_cell(passed: int, graded: int) -> str:
    pct = 100.0 * passed / graded if graded else 0.0
    return (f'<td class="n"><span class="track"><span class="bar" style="width:{pct:.0f}%">'
            f'</span></span>{pct:.0f} %</td>')


def _summary_section(results: list[Result]) -> list[str]:
    totals = [r.score for r in results]
    statuses = Counter(r.status for r in results)
    stats = [("submissions", str(len(results)))]
    if totals:
        stats += [("mean", f"{statistics.mean(totals):.2f}"),
                  ("median", f"{statistics.median(totals):.2f}"),
                  ("min", f"{min(totals):.2f}"), ("max", f"{max(totals):.2f}"),
                  ("std dev", f"{statistics.pstdev(totals):.2f}")]
    stats += [(f"status {s}", str(statuses.get(s, 0))) for s in ("ok", "partial", "error")]
    cells = "".join(f"<tr><th>{_e(k)}</th><td class=\"n\">{_e(v)}</td></tr>" for k, v in stats)
    return [f'<table id="summary">{cells}</table>']


def _plots_section(results: list[Result]) -> list[str]:
    try:
        hist, topics = histogram_svg(results), topics_svg(results)
    except ImportError:
        return ['<p class="muted">(plots need matplotlib: <code>pip install matplotlib</code>)</p>']
    return [f'<img id="histogram" alt="histogram of totals" src="{hist}">',
            f'<img id="topic-means" alt="mean score per topic" src="{topics}">']


def _grades_section(results: list[Result]) -> list[str]:
    modules = catalogue.topic_modules()
    head = "".join(f"<th>ex{m[2:4]}</th>" for m in modules)
    rows = [(f'<table id="grades"><thead><tr><th>id</th>{head}<th>total</th><th>max</th>'
             "<th>status</th></tr></thead><tbody>")]
    for r in results:
        cells = "".join(f'<td class="n">{r.topics.get(m, 0.0):.2f}</td>' for m in modules)
        rows.append(f"<tr><td>{_e(r.id)}</td>{cells}<td class=\"n\">{r.score:.2f}</td>"
                    f"<td class=\"n\">{r.max_score:.2f}</td>"
                    f'<td class="{_e(r.status)}">{_e(r.status)}</td></tr>')
    rows.append("</tbody></table>")
    return rows


def _pass_rate_section(results: list[Result]) -> list[str]:
    rows = [('<table id="pass-rates"><thead><tr><th>test</th><th>visibility</th>'
             "<th>points</th><th>passed</th><th>pass rate</th></tr></thead><tbody>")]
    current = None
    for t, passed, graded in pass_rates(results):
        if t.topic != current:
            current = t.topic
            rows.append(f'<tr class="topic"><td colspan="5">{_e(t.topic)}</td></tr>')
        vis = "public" if t.visibility == "public" else "hidden"
        rows.append(f"<tr><td>{_e(t.name)}</td><td>{vis}</td>"
                    f'<td class="n">{t.points:.4g}</td>'
                    f'<td class="n">{passed}/{graded}</td>{_rate_cell(passed, graded)}</tr>')
    rows.append("</tbody></table>")
    return rows


def _failures_section(results: list[Result]) -> list[str]:
    ranked, skipped = common_failures(results)
    stub_tests, stub_subs = not_written(results)
    out = []
    if stub_tests:
        out.append(f'<p id="not-written">Not written yet: {stub_tests} test(s) in {stub_subs} '
                   "submission(s) failed only on the stub's <code>NotImplementedError</code> "
                   "(not counted below).</p>")
    if skipped:
        out.append(f'<p class="muted">{skipped} failure(s) of topics that did not run at all '
                   "(missing, not importable, nothing gradable) are not counted here; see "
                   "<a href=\"#problems\">Submissions with problems</a>.</p>")
    if not ranked:
        return out + [f'<p id="failures">No{" other" if stub_tests else ""} failed tests.</p>']
    out.append('<table id="failures"><thead><tr><th>failed tests</th><th>submissions</th>'
               "<th>message</th><th>where</th></tr></thead><tbody>")
    where = {t.name: f"{t.topic}.{t.exercise}" for t in test_order(results)}
    for msg, n, ids, names in ranked:
        per_ex = Counter(where[x] for x in names)
        shown = "<br>".join(f"{_e(ex)} ({k} test{'s' if k > 1 else ''})"
                            for ex, k in sorted(per_ex.items()))
        out.append(f'<tr><td class="n">{n}</td><td class="n">{len(ids)}</td>'
                   f"<td><pre>{_e(_cut(msg))}</pre></td><td>{shown}</td></tr>")
    out.append("</tbody></table>")
    return out


def _problems_section(results: list[Result]) -> list[str]:
    rows = problem_rows(results)
    if not rows:
        return ['<p id="problems">Every submission ran completely (status ok).</p>']
    out = [('<table id="problems"><thead><tr><th>id</th><th>status</th><th>total</th>'
            "<th>reasons</th></tr></thead><tbody>")]
    for r, lines in rows:
        reasons = "\n".join(_cut(x) for x in lines)
        out.append(f'<tr><td>{_e(r.id)}</td><td class="{_e(r.status)}">{_e(r.status)}</td>'
                   f'<td class="n">{r.score:.2f}</td><td><pre>{_e(reasons)}</pre></td></tr>')
    out.append("</tbody></table>")
    return out


def render(results: list[Result]) -> str:
    """The whole page as text (deterministic in ``results``): templates/report.html, its
    CSS inlined, filled with the sections' HTML (every student-sourced text escaped)."""
    versions = sorted({r.grader_version for r in results if r.grader_version}) or ["unknown"]
    package = "autograder.results"
    return templating.fill(
        package, "report.html", css=templating.text(package, "report.css"),
        versions=_e(", ".join(versions)), summary="\n".join(_summary_section(results)),
        plots="\n".join(_plots_section(results)), problems="\n".join(_problems_section(results)),
        failures="\n".join(_failures_section(results)), count=len(results),
        pass_rates="\n".join(_pass_rate_section(results)),
        grades="\n".join(_grades_section(results)))


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
