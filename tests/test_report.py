"""report.html: content from a small graded class, determinism, and a real browser with the
network cut off."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import shutil
import subprocess
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from autograder import catalogue
from autograder.grading import loop, runner
from autograder.results import model, report
from tests.helpers import ROOT, SOLUTIONS, stub_source, write_stubs
from tests.helpers import course

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("report-class")

ODD_ID = "x<b>y&z"  # a folder name HTML must escape
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Five submissions: topic 1 solved, all stubs, a corrupt zip, a syntax error, and the
    topic 1 stub alone under an id full of HTML metacharacters."""
    root = tmp_path_factory.mktemp("report")
    cls = root / "class"
    (cls / "alice").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ex01_vectors.py", cls / "alice")
    write_stubs(cls / "bob")
    (cls / "carol.zip").write_bytes(b"this is not a zip archive")
    (cls / "dave").mkdir()
    (cls / "dave" / "ex01_vectors.py").write_text("def one_hot(ids, vocab_size)\n    pass\n")
    (cls / ODD_ID).mkdir()
    (cls / ODD_ID / "ex01_vectors.py").write_text(stub_source("ex01_vectors"), "utf-8")
    out = root / "out"
    proc = course("grade", "--class", str(cls), "--out", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return cls, out


def _version(out: Path) -> str:
    return json.loads((out / "results" / "alice.json").read_text("utf-8"))["extra_data"][
        "grader_version"]


def _svg(uri: str) -> ET.Element:
    prefix = "data:image/svg+xml;base64,"
    assert uri.startswith(prefix)
    return ET.fromstring(base64.b64decode(uri[len(prefix):]))


def test_report_is_written_self_contained_and_escaped(graded):
    _, out = graded
    page = (out / "report.html").read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Nothing is fetched: no scripts, no external stylesheets or images, no CSS url().
    assert "<script" not in page.lower() and "url(" not in page
    assert not re.search(r"""(?:src|href)=["'](?!data:|#)""", page), "a non-data, non-anchor link"
    assert "default-src 'none'" in page  # the CSP forbids any fetch the page might still try
    # Student-controlled text is escaped.
    assert "x&lt;b&gt;y&amp;z" in page and ODD_ID not in page
    imgs = re.findall(r'<img id="(\w[\w-]*)"[^>]* src="([^"]+)"', page)
    assert {i for i, _ in imgs} == {"histogram", "topic-means"}
    for _, uri in imgs:
        assert _svg(uri).tag.endswith("svg")


def test_report_content(graded, monkeypatch):
    _, out = graded
    results = report.load_results(out)
    assert [r.id for r in results] == sorted(["alice", "bob", "carol", "dave", ODD_ID])
    n_ex01 = len(runner.collect("ex01_vectors"))
    rates = {t.name: (p, n) for t, p, n in report.pass_rates(results)}
    ex01 = {k: v for k, v in rates.items() if k.startswith("ex01_vectors.")}
    assert len(ex01) == n_ex01 and set(ex01.values()) == {(1, 5)}  # only alice passes topic 1
    assert all(v == (0, 5) for k, v in rates.items() if not k.startswith("ex01_vectors."))

    problems = {r.id: "\n".join(lines) for r, lines in report.problem_rows(results)}
    assert set(problems) == {"alice", "carol", "dave", ODD_ID}  # bob handed in every file
    assert "not a readable zip archive" in problems["carol"]
    assert "SyntaxError" in problems["dave"]
    assert "not in the submission: ex02_projections" in problems["alice"]

    monkeypatch.setattr(report, "TOP_FAILURES", 10_000)
    ranked, skipped = report.common_mistakes(results)
    counts = [len(m.ids) for m in ranked]
    assert counts == sorted(counts, reverse=True)
    top = {m.message: (len(m.ids), m.ids) for m in ranked}
    # An unwritten exercise's stub is no "common failure": it is counted apart, as one line.
    assert not any("NotImplementedError" in m for m in top)
    stubbed = [(r.id, t) for r in results for t in r.graded_tests() if report.is_stub_failure(t)]
    assert {i for i, _ in stubbed} == {"bob", ODD_ID}
    # the stub's own message; a hidden test shows none (it could quote hidden inputs)
    assert all("not implemented yet" in t.message if t.visibility == "public"
               else "message hidden" in t.message for _, t in stubbed)
    n_ex01_stub = sum(i == ODD_ID for i, _ in stubbed)
    assert 0 < n_ex01_stub <= n_ex01
    assert report.not_written(results) == (len(stubbed), 2)
    assert skipped > 0  # carol's, dave's and the missing topics' failures are not "common"
    assert not any("could not be imported" in m or "not found" in m for m in top)

    page = (out / "report.html").read_text("utf-8")
    for anchor in ('id="summary"', 'id="histogram"', 'id="pass-rates"', 'id="failures"',
                   'id="problems"', 'id="grades"'):
        assert anchor in page, anchor
    assert "not a readable zip archive" in page and "1/5" in page
    # carol's upload is not a zip: one reason, not one per topic
    assert problems["carol"].count("\n") == 0 and page.count("not a readable zip archive") == 1
    assert "NotImplementedError" in page and "12.00" in page
    assert (f'<p id="not-written">Not written yet: {len(stubbed)} test(s) in 2 submission(s)'
            in page)


def test_report_is_deterministic_and_built_from_the_results_files(graded, tmp_path):
    cls, out = graded
    first = (out / "report.html").read_bytes()
    # Rebuilt from the files alone: the same bytes, whatever the execution times were.
    copy = tmp_path / "copy"
    shutil.copytree(out / "results", copy / "results")
    for p in (copy / "results").glob("*.json"):
        doc = json.loads(p.read_text("utf-8"))
        doc["execution_time"] = 1234.5
        p.write_text(json.dumps(doc), "utf-8")
    assert report.write_report(copy, report.load_results(copy)).read_bytes() == first
    assert report.write_report(copy, report.load_results(copy)).read_bytes() == first
    # A resumed batch (nothing regraded) writes it again, identical.
    (out / "report.html").unlink()
    before = _version(out)
    proc = course("grade", "--class", str(cls), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    if _version(out) == before:  # (the grader did not change meanwhile: nothing was regraded)
        assert "not regraded" in proc.stdout
    assert (out / "report.html").read_bytes() == first
    assert not list(out.glob(".report.html.*"))  # no temp file left behind


def test_report_reads_the_structure_never_the_prose(graded, tmp_path):
    """Gradescope's prose fields (``output``, each test's ``output``) can say anything: the
    page is built from ``extra_data``'s structure alone, so it does not change by a byte."""
    _, out = graded
    first = (out / "report.html").read_bytes()
    copy = tmp_path / "copy"
    shutil.copytree(out / "results", copy / "results")
    for p in (copy / "results").glob("*.json"):
        doc = json.loads(p.read_text("utf-8"))
        doc["output"] = "ex02_projections: ex02_projections.py not found in the submission"
        for t in doc["tests"]:
            t["output"], t["name"] = "Hint: forged\nLesson: forged", "ex07_matrix_properties.x: y"
        p.write_text(json.dumps(doc), "utf-8")
    assert report.write_report(copy, report.load_results(copy)).read_bytes() == first


def test_each_test_says_what_kind_of_failure_it_had(graded):
    _, out = graded
    kinds = {}
    for p in (out / "results").glob("*.json"):
        extra = json.loads(p.read_text("utf-8"))["extra_data"]
        per_topic = {t["topic"]: t["kind"] for t in extra["tests"] if t["kind"] != "skipped"}
        kinds[p.stem] = (per_topic, extra["topic_kinds"])
    ex01 = "ex01_vectors"
    tests, topics = kinds["alice"]
    assert tests[ex01] == "passed" and tests["ex02_projections"] == "missing"
    assert topics == {m: "missing" for m in tests if m != ex01}
    assert set(kinds["carol"][0].values()) == {"not_graded"}  # not a zip: nothing to grade
    assert kinds["dave"][0][ex01] == "import_error" and kinds["dave"][1][ex01] == "import_error"
    assert set(kinds["bob"][0].values()) == {"failed"} and kinds["bob"][1] == {}  # the stubs


def test_report_of_a_subset_and_of_nothing(graded, tmp_path):
    _, out = graded
    one = report.render(report.load_results(out, ["alice"]))
    assert "alice" in one and "carol" not in one
    empty = tmp_path / "empty"
    (empty / "results").mkdir(parents=True)
    page = report.write_report(empty, report.load_results(empty)).read_text("utf-8")
    assert "No failed tests." in page and 'id="histogram"' in page


# ---------------------------------------------------------------- in a real browser

@pytest.fixture(scope="module")
def chromium() -> Path:
    script = ROOT / "scripts" / "install_chromium.sh"
    if not CHROMIUM.exists() and script.exists():
        subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=900,
                       check=False)
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing and scripts/install_chromium.sh could not install "
                    "it (needs root and apt-get)")
    return CHROMIUM


@pytest.fixture(scope="module")
def served(graded):
    _, out = graded

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/report.html"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.browser
def test_report_renders_offline_in_chromium(chromium, served):
    sync_api = pytest.importorskip("playwright.sync_api")
    external, problems = [], []

    def route(r, request):
        local = urlsplit(request.url).hostname in LOCAL_HOSTS
        if request.url.startswith(("data:", "blob:")) or local:
            r.continue_()
        else:
            external.append(request.url)
            r.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.route("**/*", route)
            page = context.new_page()
            page.on("console", lambda m: m.type == "error" and problems.append(m.text))
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("response",
                    lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
            page.goto(served, wait_until="load")
            images = page.evaluate("""() => [...document.images].map(i =>
                ({id: i.id, ok: i.complete && i.naturalWidth > 0, w: i.naturalWidth}))""")
            tables = page.evaluate("""() => Object.fromEntries(
                ['summary', 'failures', 'problems', 'grades'].map(id =>
                  [id, ((document.getElementById(id) || {}).rows || []).length]))""")
            # pass rates: a <details> per topic, one per exercise inside, the tests folded
            folds = page.evaluate("""() => ({
                topics: document.querySelectorAll('#pass-rates > details.topic').length,
                exercises: document.querySelectorAll('#pass-rates details.exercise').length,
                rows: document.querySelectorAll('#pass-rates tbody tr').length,
                open: document.querySelectorAll('#pass-rates details[open]').length,
                shown: [...document.querySelectorAll('#pass-rates tbody tr')]
                    .filter(r => r.checkVisibility()).length})""")
            page.click("#pass-rates > details.topic > summary")
            page.click("#pass-rates details.exercise > summary")
            opened = page.evaluate("""() => [...document.querySelectorAll('#pass-rates tbody tr')]
                .filter(r => r.checkVisibility()).length""")
            texts = page.evaluate("""() => Object.fromEntries(['failures', 'not-written'].map(
                id => [id, (document.getElementById(id) || {}).textContent || '']))""")
            title = page.title()
        finally:
            browser.close()
    assert external == [], f"the report tried to reach: {external}"
    assert problems == [], problems
    assert {i["id"] for i in images} == {"histogram", "topic-means"}
    assert all(i["ok"] for i in images), images
    assert folds["topics"] == 8 and folds["exercises"] > 8, folds
    assert folds["rows"] > len(runner.collect("ex01_vectors")), folds
    assert folds["open"] == 0 and folds["shown"] == 0, folds  # folded until opened
    ex01 = catalogue.get_topic("ex01_vectors").exercises[0].name
    assert opened == sum(s.exercise == ex01 for s in runner.collect("ex01_vectors"))
    assert tables["grades"] == 6 and tables["problems"] == 5  # header + rows
    assert tables["summary"] >= 5
    # This class's failures are stubs (one "not written yet" line) or topics that did not run
    # (listed per submission): the commonest-failures table says there is nothing else.
    assert "Not written yet" in texts["not-written"], texts
    assert tables["failures"] == 0 and "No other failed tests" in texts["failures"], texts
    assert "Grading report" in title


# ---------------------------------------------------------------- what the page summarises

def _spec(exercise: str, n: int, visibility: str = "public") -> runner.TestSpec:
    return runner.TestSpec(name=f"ex01_vectors.{exercise}: case {n}", topic="ex01_vectors",
                           exercise=exercise, description=f"case {n}", visibility=visibility,
                           points=0.5, advisory=False, gpu=False, fn=lambda *a: None)


def _class() -> list[model.Result]:
    """Three submissions with the same mistake in dot (case 1 fails, and the two cases after
    it with it), one with dot right and one_hot wrong, one that could not be read."""
    out = []
    for sid in ("a", "b", "c"):
        res = [runner.TestResult(_spec("dot", 1), False, f"dot of [1, 2]: got 3 ({sid})"),
               runner.TestResult(_spec("dot", 2), False, "dot of [0, 1]: got 2"),
               runner.TestResult(_spec("dot", 3, "hidden"), False, "hidden rule not met"),
               runner.TestResult(_spec("one_hot", 1), True)]
        out.append(model.Result.of(sid, "0", [loop.record(r) for r in res]))
    res = [runner.TestResult(_spec("dot", n), True) for n in (1, 2)] + [
        runner.TestResult(_spec("one_hot", 1), False, "one_hot: wrong <b>width</b>")]
    out.append(model.Result.of("d", "0", [loop.record(r) for r in res]))
    note = "nothing could be graded: not a zip"
    out.append(model.Result.of(
        "e", "0", [loop.record(runner.TestResult(_spec("dot", 1), False, note,
                                                 not_run="not_graded"))],
        error="not a zip", topic_notes={m: note for m in catalogue.topic_modules()},
        topic_kinds={m: "not_graded" for m in catalogue.topic_modules()}))
    return out


def test_failures_are_grouped_by_exercise_and_first_failing_test_with_dependents_folded():
    mistakes, not_run = report.common_mistakes(_class())
    assert [(m.where, m.first, m.ids, m.folded) for m in mistakes] == [
        ("ex01_vectors.dot", "ex01_vectors.dot: case 1", ["a", "b", "c"], 6),
        ("ex01_vectors.one_hot", "ex01_vectors.one_hot: case 1", ["d"], 0)]
    assert mistakes[0].dependents == ["ex01_vectors.dot: case 2", "ex01_vectors.dot: case 3"]
    assert not_run == 1  # e's test: its submission is listed with its reason instead
    page = report.render(_class())
    rows = page.split('<table id="failures">')[1].split("</table>")[0].count("<tr>")
    assert rows == 1 + 2  # header + one row per mistake, not one per failed test
    assert "6 dependent failures" in page
    assert "one_hot: wrong &lt;b&gt;width&lt;/b&gt;" in page and "<b>width" not in page


def test_pass_rates_per_topic_and_exercise_fold_their_tests():
    tree = report.rate_tree(_class())
    (topic,) = tree
    assert (topic["module"], topic["passed"], topic["graded"]) == ("ex01_vectors", 5, 16)
    order = [e.name for e in catalogue.get_topic("ex01_vectors").exercises]
    assert sorted(((e["name"], e["passed"], e["graded"], len(e["tests"]))
                   for e in topic["exercises"]), key=lambda e: order.index(e[0])) == \
        [(e["name"], e["passed"], e["graded"], len(e["tests"])) for e in topic["exercises"]]
    assert {e["name"]: (e["passed"], e["graded"], len(e["tests"]))
            for e in topic["exercises"]} == {"dot": (2, 12, 3), "one_hot": (3, 4, 1)}
    page = report.render(_class())
    assert page.count('<details class="topic">') == 1
    assert page.count('<details class="exercise">') == 2


def test_an_errored_submission_has_one_reason():
    rows = dict((r.id, lines) for r, lines in report.problem_rows(_class()))
    assert rows == {"e": ["nothing could be graded: not a zip"]}


def test_a_results_file_that_does_not_read_back_fails_course_report_naming_it(graded, tmp_path):
    """It used to drop out of grades.csv and the report silently."""
    _, out = graded
    copy = tmp_path / "copy"
    shutil.copytree(out / "results", copy / "results")
    (copy / "results" / "bob.json").write_text('{"score": 1}', "utf-8")
    proc = course("report", str(copy))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bob.json" in proc.stderr and "no 'extra_data'" in proc.stderr
    assert not (copy / "grades.csv").exists() and not (copy / "report.html").exists()
    (copy / "results" / "bob.json").unlink()
    proc = course("report", str(copy))
    assert proc.returncode == 0, proc.stderr
    assert (copy / "grades.csv").read_text("utf-8").count("\n") == 1 + 4
