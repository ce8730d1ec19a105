"""`course nbgrader` end to end, with the real nbgrader.

The exported course goes through `nbgrader generate_assignment` (the release must hold no
solution and no hidden test), a correct and a stub student are filled in from the release,
`nbgrader autograde`, `nbgrader export` and `nbgrader generate_feedback` run, and the collected
notebooks are graded again with `course grade` (the tamper-proof path), which must agree.

Time: nbgrader starts a kernel per notebook and student; by default this exports two topics (a
NumPy one and a torch one with a class). ``COURSE_NBGRADER_TOPICS=all`` (or a comma list) runs
more. The module prints the autograde-vs-`course grade` timing of its class.
"""

from __future__ import annotations

import copy
import csv
import fcntl
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.exports.nbgrader import export as nbgrader_export
from autograder.grading import runner
from autograder.authoring import stubs
from tests.helpers import ROOT, solution_source
from tests.helpers import shared_dir

pytest.importorskip("nbgrader")
# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("nbgrader-course")]

_env_topics = os.environ.get("COURSE_NBGRADER_TOPICS", "ex01_vectors,ex04_svd_lora")
TOPICS = (catalogue.topic_modules() if _env_topics == "all"
          else [catalogue.get_topic(t).module for t in _env_topics.split(",")])
STUDENTS = ("correct", "stub")


def _env() -> dict[str, str]:
    bindir = os.path.dirname(sys.executable)  # nbgrader calls `alembic` from its own venv
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}


def nbgrader(course: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"nbgrader {' '.join(args)}:\n{proc.stdout[-3000:]}\n"
                                  f"{proc.stderr[-5000:]}")
    return proc


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))["cells"]


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _hidden_specs(topic: str) -> list[runner.TestSpec]:
    return [s for s in runner.collect(topic) if s.visibility == "hidden"]


def _graded_points(topic: str) -> int:
    """An exercise earns points in nbgrader only where it has tests (like `course grade`)."""
    tested = {s.exercise for s in runner.collect(topic)}
    return sum(e.points for e in catalogue.get_topic(topic).exercises if e.name in tested)


def _text(html_doc: str) -> str:
    """What a reader of an HTML page sees: tags dropped, entities decoded."""
    visible = re.sub(r"(?is)<(style|script)\b.*?</\1>", "", html_doc)
    return html.unescape(re.sub(r"<[^>]+>", "", visible))


def _hidden_source_lines(topic: str) -> list[str]:
    """Lines of the hidden tests' source as an export writes them, and of the hidden suite."""
    lines = [f"tests.run({s.description!r})" for s in _hidden_specs(topic)]
    suite = (ROOT / "autograder" / "suites" / "hidden" / f"{topic}.py").read_text("utf-8")
    lines += [ln.strip() for ln in suite.splitlines()
              if len(ln.strip()) > 40 and not ln.strip().startswith(("#", '"', "'", "@graded"))]
    return lines


def _build_class(root: Path) -> dict:
    """Export, release, fill in two students, autograde, export and feed back (timed)."""
    course = root / "course"
    written = nbgrader_export.build(course, topics=TOPICS)
    assert len(written) == len(TOPICS)
    for topic in TOPICS:
        nbgrader(course, "generate_assignment", topic, "--force")
    for topic in TOPICS:
        source = {_meta(c).get("grade_id"): c for c in _cells(
            course / "source" / topic / f"{topic}.ipynb")}
        released = json.loads((course / "release" / topic / f"{topic}.ipynb").read_text("utf-8"))
        correct = copy.deepcopy(released)
        for cell in correct["cells"]:
            if _meta(cell).get("solution"):
                cell["source"] = source[_meta(cell)["grade_id"]]["source"]
        stub = copy.deepcopy(released)
        if topic == TOPICS[0]:  # one test cell a student edited: autograde must still say so
            edited = next(c for c in stub["cells"] if _meta(c).get("grade_id", "").startswith(
                "test-"))
            edited["source"] = _src(edited) + "\n# edited by the student"
        for student, nb in (("correct", correct), ("stub", stub)):
            dest = course / "submitted" / student / topic / f"{topic}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    log = []  # what nbgrader printed (its log goes to stderr)
    t0 = time.monotonic()
    for topic in TOPICS:
        log.append(nbgrader(course, "autograde", topic, "--force").stderr)
    autograde_s = time.monotonic() - t0
    nbgrader(course, "export")
    for topic in TOPICS:
        log.append(nbgrader(course, "generate_feedback", topic, "--force").stderr)
    (root / "nbgrader.log").write_text("\n".join(log), encoding="utf-8")
    # the tamper-proof path on the very same collected notebooks
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--class",
                           str(course / "submitted"), "--out", str(root / "graded")],
                          env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=900)
    grade_s = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"topics": TOPICS, "students": len(STUDENTS),
            "nbgrader_autograde_s_per_submission": round(autograde_s / len(STUDENTS), 2),
            "course_grade_s_per_submission": round(grade_s / len(STUDENTS), 2)}


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """The nbgrader class, built once per session (the first worker builds, others wait)."""
    root = shared_dir(tmp_path_factory, "nbgrader-class")
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / "nbgrader-class.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "timing.json"
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            timing = _build_class(root)
            print(f"\nnbgrader vs course grade: {json.dumps(timing)}")
            done.write_text(json.dumps(timing, indent=2))
    return root / "course", root / "graded", json.loads(done.read_text())


def test_source_notebooks_are_nbgrader_notebooks_with_catalogue_points(tmp_path):
    nbgrader_export.build(tmp_path, topics=TOPICS)
    assert "ClearHiddenTests" in (tmp_path / "nbgrader_config.py").read_text("utf-8")
    for topic in TOPICS:
        path = tmp_path / "source" / topic / f"{topic}.ipynb"
        nb = json.loads(path.read_text("utf-8"))
        assert nb["metadata"]["kernelspec"]["name"] == "python3"
        assert nb["cells"][0]["cell_type"] == "markdown"
        # no site set: the lesson summary links the lesson file bundled beside the notebook
        # (a link Jupyter resolves), never a local address
        lesson = Path(catalogue.get_topic(topic).lesson_page).name
        assert f"]({lesson}#" in _src(nb["cells"][0]) and (path.parent / lesson).is_file()
        assert "127.0.0.1" not in path.read_text("utf-8")
        grades = [c for c in nb["cells"] if _meta(c).get("grade")]
        assert sum(_meta(c)["points"] for c in grades) == _graded_points(topic)
        solutions = [c for c in nb["cells"] if _meta(c).get("solution")]
        assert {_meta(c)["grade_id"] for c in solutions} == {
            e.name for e in catalogue.get_topic(topic).exercises}
        assert all("### BEGIN SOLUTION" in _src(c) for c in solutions)
        # the test cells name the suites' own tests: public ones, then hidden between markers
        text = "\n".join(_src(c) for c in grades)
        for spec in runner.collect(topic):
            line = f"tests.run({spec.description!r})"
            assert line in text, spec.name
            before, _, _after = text.partition(line)
            inside = before.count("### BEGIN HIDDEN TESTS") > before.count("### END HIDDEN TESTS")
            assert inside == (spec.visibility == "hidden"), spec.name


def test_release_holds_no_solution_code_and_no_hidden_test(course):
    course_dir, _, _ = course
    for topic in TOPICS:
        text = "\n".join(_src(c) for c in _cells(
            course_dir / "release" / topic / f"{topic}.ipynb"))
        for body in stubs.solution_bodies(solution_source(topic)):
            assert body.strip() not in text
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
        assert "HIDDEN TESTS" not in text
        for spec in _hidden_specs(topic):
            assert f"tests.run({spec.description!r})" not in text, spec.name
        assert "raise NotImplementedError()" in text  # nbgrader's stub took each body's place
        assert "tests.run(" in text  # the public tests stay


def test_correct_student_gets_the_maximum_and_the_stub_zero(course):
    course_dir, _, _ = course
    with open(course_dir / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by = {(r["student_id"], r["assignment"]): r for r in rows}
    for topic in TOPICS:
        top = _graded_points(topic)
        assert float(by["correct", topic]["max_score"]) == top
        assert float(by["correct", topic]["score"]) == top, by["correct", topic]
        assert float(by["stub", topic]["score"]) == 0.0, by["stub", topic]


def test_feedback_shows_no_hidden_test_source_or_input(course):
    course_dir, _, _ = course
    for topic in TOPICS:
        # what students see anyway (a docstring example the hidden suite reuses) is no leak
        given = "\n".join([*(_src(c) for c in _cells(
            course_dir / "release" / topic / f"{topic}.ipynb")),
            (ROOT / "autograder" / "suites" / "public" / f"{topic}.py").read_text("utf-8")])
        needles = [n for n in _hidden_source_lines(topic) if n not in given]
        # the detector works: the autograded notebook (what nbgrader would render by default)
        # holds the hidden tests' source
        autograded = "\n".join(_src(c) for c in _cells(
            course_dir / "autograded" / "stub" / topic / f"{topic}.ipynb"))
        assert "### BEGIN HIDDEN TESTS" in autograded
        assert any(n in autograded for n in needles)
        for student in STUDENTS:
            page = (course_dir / "feedback" / student / topic / f"{topic}.html").read_text("utf-8")
            text = _text(page)
            assert "HIDDEN TESTS" not in text
            leaked = [n for n in needles if n in text]
            assert not leaked, f"{student}/{topic}: {leaked[:3]}"
            assert "suites/hidden" not in text and "Traceback (most recent" not in text
            # no remote script (MathJax from a CDN) in the feedback
            assert not re.search(r"<script[^>]+src=[\"']https?:", page)
            assert "cdnjs" not in page and "mathjax/2.7" not in page.lower()
        # nothing but the page and the lesson released with the notebook (nbgrader copies an
        # assignment's other files along): no hypothesis cache (it holds the hidden suites'
        # constants)
        files = {p.name for p in (course_dir / "feedback" / "stub" / topic).rglob("*")}
        lesson = Path(catalogue.get_topic(topic).lesson_page).name
        assert files == {f"{topic}.html", lesson}, files
    stub_text = _text((course_dir / "feedback" / "stub" / TOPICS[0] /
                       f"{TOPICS[0]}.html").read_text("utf-8"))
    assert "FAIL hidden test" in stub_text  # verdicts are shown, sources are not
    assert "not implemented yet" in stub_text or "NotImplementedError" in stub_text


def test_only_a_test_cell_a_student_edited_has_a_changed_checksum(course):
    """nbgrader stores test cells' checksums before removing their hidden tests, so it warned
    "checksum has changed" for every test cell of every student (issue 38, item 9); the
    exported config keeps that warning for cells that differ from the release only."""
    log = (course[0].parent / "nbgrader.log").read_text("utf-8")
    changed = re.findall(r"Attribute 'checksum' for cell (\S+) has changed", log)
    edited = next(_meta(c)["grade_id"] for c in _cells(
        course[0] / "submitted" / "stub" / TOPICS[0] / f"{TOPICS[0]}.ipynb")
        if _src(c).endswith("# edited by the student"))
    assert changed == [edited], changed


def test_course_grade_on_the_collected_notebooks_agrees(course):
    _course_dir, graded, timing = course
    with open(graded / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(STUDENTS)
    for topic in TOPICS:
        assert float(rows["correct"][topic]) == _graded_points(topic)
        assert float(rows["stub"][topic]) == 0.0
    assert timing["nbgrader_autograde_s_per_submission"] > 0
    assert timing["course_grade_s_per_submission"] > 0
