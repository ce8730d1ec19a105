"""`course export-grades` (issue 38, item 8): a graded batch's grades in Canvas's and Moodle's
import formats, ids mapped through a roster, missing ids refused by name, roster users with no
submission listed and left empty."""

from __future__ import annotations

import csv
import io

import pytest

from autograder import catalogue
from autograder.cli.app import main
from autograder.results import model, writers

#: id -> score per topic (the batch a roster is matched against); "=eve" is escaped in grades.csv
SCORES = {"alice": [12, 12, 6, 13, 13, 12, 12, 14], "bob": [6, 0, 0, 0, 0, 0, 0, 0],
          "=eve": [1, 0, 0, 0, 0, 0, 0, 0]}


@pytest.fixture
def batch(tmp_path):
    out = tmp_path / "graded"
    for sid, per_topic in SCORES.items():
        tests = [model.TestOutcome(f"{t.module}.{t.exercises[0].name}: y", t.module,
                                   t.exercises[0].name, "public", t.points, s,
                                   "passed" if s == t.points else "failed")
                 for t, s in zip(catalogue.topics(), per_topic)]
        writers.write_submission(out, model.Result(
            sid, "0" * 64, "ok", tests, {t.module: float(s) for t, s in
                                         zip(catalogue.topics(), per_topic)},
            float(sum(per_topic)), 100.0))
    writers.write_grades_csv(out, model.load_all(out, list(SCORES)))
    # a stale result of a submission no longer in the batch: not exported
    writers.write_submission(out, model.Result("old", "0" * 64, "ok", [], {}, 50.0, 100.0))
    return out


def _roster(path, header, rows):
    with path.open("w", newline="", encoding="utf-8-sig") as f:  # as a spreadsheet saves it
        csv.writer(f).writerows([header, *rows])
    return path


CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz 1 (123)"]


def test_canvas_total_in_roster_order_with_empty_cells_for_no_submission(batch, tmp_path,
                                                                         capsys):
    roster = _roster(tmp_path / "canvas.csv", CANVAS_HEAD, [
        ["    Points Possible", "", "", "", "", "10"],
        ["Carol, C", "3", "s3", "carol", "A", "9"], ["Bob, B", "2", "s2", "bob", "A", "7"],
        ["Alice, A", "1", "s1", "alice", "B", "8"], ["Eve, E", "5", "s5", "=eve", "B", "1"]])
    assert main(["export-grades", str(batch), "--format", "canvas", "--roster", str(roster)]) == 0
    rows = list(csv.reader(io.StringIO((batch / "grades-canvas.csv").read_text("utf-8"))))
    assert rows == [
        CANVAS_HEAD[:5] + ["Linear Algebra for Transformers"],
        ["Points Possible", "", "", "", "", "100.00"],
        ["Carol, C", "3", "s3", "carol", "A", ""],
        ["Bob, B", "2", "s2", "bob", "A", "6.00"],
        ["Alice, A", "1", "s1", "alice", "B", "94.00"],
        ["Eve, E", "5", "s5", "=eve", "B", "1.00"]]
    out = capsys.readouterr().out
    assert "1 roster user(s) with no graded submission, given an empty cell" in out
    assert out.rstrip().endswith(": carol")


def test_moodle_per_topic_with_zero_for_no_submission(batch, tmp_path):
    roster = _roster(tmp_path / "moodle.csv", ["First name", "Email address", "ID number"], [
        ["Alice", "a@x", "alice"], ["Bob", "b@x", "bob"], ["Eve", "e@x", "=eve"],
        ["Dan", "d@x", "dan"]])
    target = tmp_path / "moodle-import.csv"
    assert main(["export-grades", str(batch), "--format", "moodle", "--roster", str(roster),
                 "--columns", "topics", "--name", "LA", "--missing-zero",
                 "--out", str(target)]) == 0
    rows = list(csv.reader(io.StringIO(target.read_text("utf-8"))))
    assert rows[0] == ["ID number"] + [f"LA: {m}" for m in catalogue.topic_modules()]
    assert rows[1] == ["alice"] + [f"{s:.2f}" for s in SCORES["alice"]]
    assert rows[4] == ["dan"] + ["0.00"] * 8
    assert len(rows) == 5


def test_ids_missing_from_the_roster_are_refused_by_name(batch, tmp_path, capsys):
    roster = _roster(tmp_path / "r.csv", ["Username"], [["alice"]])
    assert main(["export-grades", str(batch), "--format", "moodle", "--roster", str(roster)]) == 2
    err = capsys.readouterr().err
    assert "2 graded submission id(s) not in the roster's 'Username' column: =eve, bob" in err
    assert "nothing written" in err and "old" not in err.split(":")[2]
    assert not (batch / "grades-moodle.csv").exists()


@pytest.mark.parametrize("header, rows, args, says", [
    (["Name", "login"], [["A", "alice"]], ["--format", "canvas"],
     "Canvas finds users by its ID, SIS User ID or SIS Login ID column"),
    (["Name", "login"], [["A", "alice"]], ["--format", "moodle"],
     "say which roster column holds the submission ids (--match COLUMN)"),
    (["Username"], [["alice"]], ["--format", "moodle", "--match", "email"],
     "the roster has no column 'email'; its columns: Username"),
    (["Username"], [["alice"], ["bob"], ["alice"], ["=eve"]], ["--format", "moodle"],
     "the roster's 'Username' column names these more than once: alice"),
])
def test_a_roster_that_does_not_fit_is_a_usage_error(batch, tmp_path, capsys, header, rows,
                                                     args, says):
    roster = _roster(tmp_path / "r.csv", header, rows)
    assert main(["export-grades", str(batch), "--roster", str(roster), *args]) == 2
    assert says in capsys.readouterr().err


def test_a_folder_with_no_results_is_a_usage_error(tmp_path, capsys):
    roster = _roster(tmp_path / "r.csv", ["Username"], [["alice"]])
    assert main(["export-grades", str(tmp_path / "nothing"), "--format", "moodle",
                 "--roster", str(roster)]) == 2
    assert "holds no graded results" in capsys.readouterr().err
