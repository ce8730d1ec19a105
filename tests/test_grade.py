"""`course grade` and `course check` end to end, as instructors and students run them."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.results.writers import CSV_HEADER
from tests.helpers import course, ROOT

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("example-class")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXPECTED = tomllib.loads((ROOT / "examples" / "expected.toml").read_text("utf-8"))


@pytest.fixture(scope="module")
def graded_class(example_class):
    """(folder holding ``class/`` and ``out/``, out, the run): the run's shared example class."""
    cls, out, proc = example_class
    return cls.parent, out, proc


def _results(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text("utf-8")) for p in (out / "results").glob("*.json")}


def test_grades_csv_has_the_interface_columns_sorted_by_id(graded_class):
    _, out, _ = graded_class
    raw = (out / "grades.csv").read_bytes()
    assert b"\r\n" not in raw
    rows = list(csv.reader(raw.decode("utf-8").splitlines()))
    assert rows[0] == CSV_HEADER
    ids = [r[0] for r in rows[1:]]
    assert ids == sorted(EXPECTED) == sorted(ids)
    for r in rows[1:]:
        assert all(len(x.split(".")[1]) == 2 for x in r[1:-1]), r  # two decimals
        assert r[-1] in ("ok", "partial", "error")
        assert r[-2] == "100.00"


def test_every_example_gets_its_expected_grade(graded_class):
    _, out, _ = graded_class
    results = _results(out)
    for sid, want in EXPECTED.items():
        doc = results[sid]
        assert doc["extra_data"]["status"] == want["status"], sid
        if "total" in want:
            assert doc["score"] == pytest.approx(want["total"]), sid
        by_ex: dict[str, list[dict]] = {}
        for t in doc["tests"]:
            by_ex.setdefault(t["name"].split(": ", 1)[0], []).append(t)
        for ex in want.get("full", []):
            assert all(t["status"] == "passed" for t in by_ex[ex]), (sid, ex)
        for ex in want.get("no_credit", []):
            assert all(t["status"] == "failed" for t in by_ex[ex]), (sid, ex)
        for ex in want.get("loses", []):
            assert any(t["status"] == "failed" for t in by_ex[ex]), (sid, ex)
        for topic in want.get("full_topics", []):
            assert doc["extra_data"]["topics"][topic] == catalogue.get_topic(topic).points


def test_results_follow_gradescope_schema(graded_class):
    _, out, _ = graded_class
    for sid, doc in _results(out).items():
        assert {"score", "max_score", "execution_time", "output", "tests", "extra_data"} <= set(doc)
        assert doc["max_score"] == 100.0
        assert doc["score"] == pytest.approx(round(sum(t["score"] for t in doc["tests"]), 2),
                                             abs=0.011)
        for t in doc["tests"]:
            assert set(t) == {"name", "score", "max_score", "status", "output", "visibility"}
            assert t["status"] in ("passed", "failed")
            assert t["visibility"] in ("visible", "after_published")
            assert 0 <= t["score"] <= t["max_score"]
        for key in ("submission_sha256", "grader_version", "python", "numpy", "torch"):
            assert doc["extra_data"][key]


def test_every_test_appears_for_every_submission(graded_class):
    _, out, _ = graded_class
    names = {sid: [t["name"] for t in doc["tests"]] for sid, doc in _results(out).items()}
    first = next(iter(names.values()))
    assert all(n == first for n in names.values())


def test_feedback_explains_failures_with_hint_and_lesson(graded_class):
    _, out, _ = graded_class
    text = (out / "feedback" / "partly_right_a.md").read_text("utf-8")
    assert "ex03_softmax.softmax" in text and "Hint:" in text and "docs/lessons/" in text


def test_the_table_is_printed(graded_class):
    _, _, proc = graded_class
    assert "complete" in proc.stdout and "100.00" in proc.stdout


def test_rerun_resumes_without_regrading(graded_class, tmp_path):
    """Re-running into a graded output folder regrades nothing that is unchanged. (That a fresh
    run writes the same bytes is test_golden's stored fingerprint, and test_hostile's two runs.)"""
    root, out, _ = graded_class
    out2 = tmp_path / "out2"
    shutil.copytree(out, out2)
    stamp = {p: p.stat().st_mtime_ns for p in (out2 / "results").iterdir()}
    before = {p.name: p.read_bytes() for p in (out2 / "results").iterdir()}
    proc = course("grade", "--class", str(root / "class"), "--out", str(out2), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{len(stamp)} unchanged, not regraded" in proc.stdout
    assert stamp == {p: p.stat().st_mtime_ns for p in (out2 / "results").iterdir()}
    assert before == {p.name: p.read_bytes() for p in (out2 / "results").iterdir()}
    assert (out / "grades.csv").read_bytes() == (out2 / "grades.csv").read_bytes()


def test_usage_errors_exit_2(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "a").mkdir()
    assert course("grade", "--out", str(tmp_path / "o")).returncode == 2
    assert course("grade", str(tmp_path / "nope"), "--out", str(tmp_path / "o")).returncode == 2
    dup = course("grade", str(tmp_path / "a"), str(tmp_path / "b" / "a"), "--out",
                 str(tmp_path / "o"))
    assert dup.returncode == 2 and "two submissions" in dup.stderr
    assert not (tmp_path / "o" / "grades.csv").exists()  # nothing graded


def test_check_exit_codes():
    assert course("check", "1").returncode == 1  # the stubs fail
    ok = course("check", "vectors", "--dir", str(ROOT / "solutions"))
    assert ok.returncode == 0, ok.stdout[-2000:]
    assert "ex01_vectors" in ok.stdout
    assert course("check", "eigen").returncode == 2


def test_check_shows_what_failed_with_hint_and_lesson(tmp_path):
    (tmp_path / "ex01_vectors.py").write_text(
        "import numpy as np\n"
        "def one_hot(ids, vocab_size):\n    return np.eye(vocab_size)[np.asarray(ids)]\n")
    proc = course("check", "ex01", "--dir", str(tmp_path))
    assert proc.returncode == 1
    assert "one_hot" in proc.stdout and "Hint:" in proc.stdout and "Lesson:" in proc.stdout
