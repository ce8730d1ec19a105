"""Points anyone can audit: the checked-in table of every graded test's points matches the
suites (docs/design/points.md, made by `course points --write`)."""

from __future__ import annotations

import re

from autograder import catalogue
from autograder.grading import points
from autograder.grading import runner
from tests.helpers import course


def test_the_checked_in_table_matches_the_suites():
    assert points.TABLE_PATH.read_text(encoding="utf-8") == points.table(), (
        "docs/design/points.md is out of date: run `course points --write` and commit it")


def test_each_exercise_s_rows_add_up_to_its_points():
    """The table's numbers are the grader's: every exercise's test rows sum to its points."""
    text = points.TABLE_PATH.read_text(encoding="utf-8")
    for topic in catalogue.topics():
        for ex in topic.exercises:
            rows = re.findall(rf"^\| {re.escape(topic.module)}\.{re.escape(ex.name)}: .* \| "
                              r"([\d.]+) \|$", text, flags=re.M)
            assert rows, f"no row for {ex.qualname}"
            assert abs(sum(map(float, rows)) - ex.points) < 1e-3 * len(rows), ex.qualname
    names = {s.name for t in catalogue.topic_modules() for s in runner.collect(t)}
    assert len(re.findall(r"^\| ex\d\d_", text, flags=re.M)) == len(names)


def test_course_points_prints_one_topic_and_refuses_an_unknown_one():
    proc = course("points", "softmax")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## ex03_softmax")
    assert proc.stdout in points.TABLE_PATH.read_text(encoding="utf-8")
    bad = course("points", "99")
    assert bad.returncode == 2 and "unknown topic '99'" in bad.stderr
