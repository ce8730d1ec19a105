"""`report.html`: the instructor's one-page view of a graded batch (docs/design/interface.md,
outputs).

Built only from the ``results/<id>.json`` files on disk, never from the batch's memory, so a
resumed batch writes the same page as a fresh one. Deterministic: the same results give the same
bytes (no clock, no ``execution_time``; matplotlib's SVG ids are salted with a constant and its
``Date`` metadata dropped). Self-contained: CSS inline, plots as ``data:`` URIs, and a
Content-Security-Policy that forbids every network fetch and every script, so nothing a student
wrote (ids, exception messages) can run in the instructor's browser even if escaping failed.

Run it by hand on an existing output folder with ``python -m autograder.results.report OUT``.
"""

from __future__ import annotations

import base64
import html
import io
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import catalogue
from autograder.results import writers as outputs

REPORT_NAME = "report.html"
#: How many distinct failure messages the "commonest failures" table shows.
TOP_FAILURES = 20
#: Longest message shown in full (the rest is cut with an ellipsis).
MAX_MESSAGE = 400
_NOT_FOUND = ".py not found in the submission"


@dataclass
class Result:
    """One submission's results file, reduced to what the report shows."""

    id: str
    status: str
    score: float
    max_score: float
    topics: dict[str, float]
    tests: list[dict]
    grader_version: str = ""
    reasons: dict[str, str] = field(default_factory=dict)  # topic (or "") -> why it did not run


def _reasons(doc: dict) -> dict[str, str]:
    """Why topics did not run: ``extra_data``'s ``topic_notes`` (topic -> why) and ``error``
    (nothing could be graded: why, under the key ""), as outputs.results_json writes them.

    Never parsed from the ``output`` prose: a note quotes what the submission raised, and
    lines of its own there would read as other topics' reasons (test_hidden_text.py).
    """
    extra = doc.get("extra_data")
    extra = extra if isinstance(extra, dict) else {}
    notes = extra.get("topic_notes")
    modules = catalogue.topic_modules()
    reasons = {str(t): str(why) for t, why in sorted(notes.items())
               if t in modules} if isinstance(notes, dict) else {}
    if extra.get("error"):
        reasons = {"": str(extra["error"]), **reasons}
    return reasons


def load_results(out: Path, ids: list[str] | None = None) -> list[Result]:
    """The results of ``ids`` (default: every ``results/*.json``), sorted by id; unreadable
    files are skipped (grades.csv skips them too)."""
    if ids is None:
        ids = [p.stem for p in (out / "results").glob("*.json")]
    found = []
    for sid in sorted(set(ids)):
        doc = outputs.read_result(out, sid)
        if not doc:
            continue
        extra = doc.get("extra_data", {})
        found.append(Result(
            id=sid, status=str(extra.get("status", "")), score=float(doc.get("score", 0.0)),
            max_score=float(doc.get("max_score", 0.0)),
            topics={m: float(v) for m, v in extra.get("topics", {}).items()},
            tests=list(doc.get("tests", [])), grader_version=str(extra.get("grader_version", "")),
            reasons=_reasons(doc)))
    return found


# ---------------------------------------------------------------- aggregation

def _message(test: dict) -> str:
    """The failure message without the hint and lesson lines outputs.py appends."""
    return str(test.get("output", "")).rsplit("\nHint: ", 1)[0].strip()


def _topic_of(name: str) -> str:
    return name.split(": ", 1)[0].split(".", 1)[0]


def test_order(results: list[Result]) -> list[dict]:
    """Every test name once, in results order (catalogue order), with points and visibility."""
    seen: dict[str, dict] = {}
    for r in results:
        for t in r.tests:
            seen.setdefault(t["name"], {"name": t["name"], "max_score": t.get("max_score", 0),
                                        "visibility": t.get("visibility", "")})
    return list(seen.values())


def pass_rates(results: list[Result]) -> list[tuple[dict, int, int]]:
    """(test, passed, graded) for every test: how many submissions passed it."""
    passed: Counter[str] = Counter()
    graded: Counter[str] = Counter()
    for r in results:
        for x in r.tests:
            graded[x["name"]] += 1
            passed[x["name"]] += x.get("status") == "passed"
    return [(t, passed[t["name"]], graded[t["name"]]) for t in test_order(results)]


def common_failures(results: list[Result]) -> tuple[list[tuple[str, int, list[str], list[str]]],
                                                      int]:
    """The commonest failure messages: (message, failed tests, submission ids, test names),
    most frequent first, and how many failures were left out because their whole topic did not
    run (those are listed per submission instead)."""
    count: Counter[str] = Counter()
    who: dict[str, set[str]] = {}
    which: dict[str, set[str]] = {}
    skipped = 0
    for r in results:
        for t in r.tests:
            if t.get("status") == "passed":
                continue
            msg = _message(t)
            topic = _topic_of(t["name"])
            if r.status == "error" or (topic in r.reasons and msg == r.reasons[topic]):
                skipped += 1
                continue
            count[msg] += 1
            who.setdefault(msg, set()).add(r.id)
            which.setdefault(msg, set()).add(t["name"])
    ranked = sorted(count, key=lambda m: (-count[m], m))[:TOP_FAILURES]
    return [(m, count[m], sorted(who[m]), sorted(which[m])) for m in ranked], skipped


def problem_rows(results: list[Result]) -> list[tuple[Result, list[str]]]:
    """Submissions with status error or partial, each with its reasons (the "not found" ones
    folded into one line so a student who handed in one topic is one line, not six)."""
    rows = []
    for r in results:
        if r.status not in ("error", "partial"):
            continue
        lines, missing = [], []
        for topic, why in sorted(r.reasons.items()):
            if topic and why == f"{topic}{_NOT_FOUND}":
                missing.append(topic)
            elif topic:  # one line each: a reason's own line breaks cannot start another
                lines.append(f"{topic}: {outputs.one_line(why)}")
            else:
                lines.insert(0, f"nothing could be graded: {outputs.one_line(why)}")
        if missing:
            lines.append("not in the submission: " + ", ".join(missing))
        rows.append((r, lines or [f"status {r.status} (no reason recorded)"]))
    return rows


def topic_maxima(results: list[Result]) -> dict[str, float]:
    """Each topic's graded maximum, from the tests' points (what the results were graded on)."""
    maxima = {m: 0.0 for m in catalogue.topic_modules()}
    for t in test_order(results):
        topic = _topic_of(t["name"])
        if topic in maxima:
            maxima[topic] += float(t["max_score"] or 0.0)
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

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:72em;
 padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0 1em}th,td{padding:.25em .6em;text-align:left;
 vertical-align:top;border-bottom:1px solid #eee}th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.topic td{background:#fafafa;font-weight:600}
.bar{display:inline-block;height:.7em;background:#4c72b0;vertical-align:middle}
.track{display:inline-block;width:6em;background:#e8e8e8;margin-right:.4em;text-align:left;
 line-height:0}
.ok{color:#2e7d32}.partial{color:#b26a00}.error{color:#c62828}
pre{white-space:pre-wrap;margin:0;font:12px/1.35 ui-monospace,monospace}
.muted{color:#666}img{max-width:100%;height:auto}
.row{display:flex;flex-wrap:wrap;gap:1em 2em;align-items:flex-start}.row img{max-width:46em}
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


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
        topic = _topic_of(t["name"])
        if topic != current:
            current = topic
            rows.append(f'<tr class="topic"><td colspan="5">{_e(topic)}</td></tr>')
        vis = "public" if t["visibility"] == "visible" else "hidden"
        rows.append(f"<tr><td>{_e(t['name'])}</td><td>{vis}</td>"
                    f'<td class="n">{float(t["max_score"] or 0):.4g}</td>'
                    f'<td class="n">{passed}/{graded}</td>{_rate_cell(passed, graded)}</tr>')
    rows.append("</tbody></table>")
    return rows


def _failures_section(results: list[Result]) -> list[str]:
    ranked, skipped = common_failures(results)
    out = []
    if skipped:
        out.append(f'<p class="muted">{skipped} failure(s) of topics that did not run at all '
                   "(missing, not importable, nothing gradable) are not counted here; see "
                   "<a href=\"#problems\">Submissions with problems</a>.</p>")
    if not ranked:
        return out + ['<p id="failures">No failed tests.</p>']
    out.append('<table id="failures"><thead><tr><th>failed tests</th><th>submissions</th>'
               "<th>message</th><th>where</th></tr></thead><tbody>")
    for msg, n, ids, names in ranked:
        per_ex = Counter(x.split(": ", 1)[0] for x in names)
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
    """The whole page as text (deterministic in ``results``)."""
    versions = sorted({r.grader_version for r in results if r.grader_version}) or ["unknown"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Grading report — Linear Algebra for Transformers</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Grading report</h1>",
        (f'<p class="muted">Linear Algebra for Transformers, grader {_e(", ".join(versions))}. '
         "Built from <code>results/*.json</code>; grades are in <code>grades.csv</code>, "
         "per-student feedback in <code>feedback/</code>.</p>"),
        '<h2 id="totals">Totals</h2>', '<div class="row">', *_summary_section(results),
        *_plots_section(results), "</div>",
        '<h2 id="problem-list">Submissions with problems</h2>',
        ('<p class="muted">Status <b>error</b>: nothing could be graded; <b>partial</b>: some '
         "topic was missing, did not import or timed out.</p>"), *_problems_section(results),
        '<h2 id="common-failures">Commonest failure messages</h2>', *_failures_section(results),
        '<h2 id="pass-rate">Pass rate per test</h2>',
        f'<p class="muted">Out of {len(results)} submission(s), all statuses counted.</p>',
        *_pass_rate_section(results),
        '<h2 id="all-grades">All grades</h2>', *_grades_section(results),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(out: Path, ids: list[str] | None = None) -> Path:
    """Build ``out/report.html`` from ``out/results/`` (only ``ids`` when given) atomically."""
    path = out / REPORT_NAME
    outputs.write_atomic(path, render(load_results(out, ids)))
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0], "results").is_dir():
        print("usage: python -m autograder.results.report OUT  (OUT: a `course grade --out` folder)",
              file=sys.stderr)
        return 2
    print(write_report(Path(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
