"""What a submission chose (its id, its messages) cannot become a formula or markup in outputs.

Red team: an id ``=HYPERLINK("http:evil","x")`` landed in grades.csv as a formula a spreadsheet
evaluates; ``raise ImportError('<script>…</script>\\n<b>reason: forged</b>')`` put raw HTML and
a line of its own into feedback.md.
"""

from __future__ import annotations

import csv
import io

import pytest

from autograder import templating
from autograder.results import report
from autograder.results import text as outputs
from autograder.results.model import Result


@pytest.mark.parametrize("sid", ['=HYPERLINK("http:evil","x")', "+1", "-2", "@SUM(A1)",
                                 "\tx", "\rx"])
def test_an_id_that_reads_as_a_formula_is_written_as_text(sid):
    cell = outputs.csv_cell(sid)
    assert cell.startswith("'") and cell[1:] == sid


@pytest.mark.parametrize("sid", ["alice", "bob_2", "x=y"])
def test_other_ids_are_written_as_they_are(sid):
    assert outputs.csv_cell(sid) == sid


def test_a_message_cannot_bring_markup_or_lines_of_its_own():
    text = outputs.md_text("<script>alert(1)</script>\n## reason: forged\n- **fake test**")
    assert "<script>" not in text and "&lt;script&gt;" in text
    lines = text.split("\n")
    assert all(line.startswith("  > ") for line in lines[1:])


def test_the_csv_round_trips_with_the_apostrophe():
    buf = io.StringIO()
    csv.writer(buf).writerow([outputs.csv_cell("=1+1"), "2.00"])
    assert next(csv.reader(io.StringIO(buf.getvalue())))[0] == "'=1+1"


def test_a_placeholder_in_student_text_is_not_filled_in():
    """The report's page is a template filled once: an id spelling a placeholder
    (``@{grades}``, shown in the problems table before the grades table is filled in) reaches
    the page as text, and does not pull a section in again."""
    sid = "@{grades}"
    r = Result(id=sid, sha256="0", status="partial", tests=[], topics={}, score=0.0,
               max_score=0.0, topic_notes={"ex01_vectors": "<i>x</i>"})
    page = report.render([r])
    assert page.count('<table id="grades">') == 1
    assert f"<tr><td>{sid}</td>" in page and "<i>" not in page
    assert page.count(templating.text("autograder.results", "report.css")) == 1


def test_a_template_names_what_is_missing_or_malformed():
    with pytest.raises(KeyError, match="run_autograder: no value for @{call}"):
        templating.fill("autograder.exports", "gradescope/run_autograder", venv="/v",
                        visibility="hidden", submission="1")
    with pytest.raises(FileNotFoundError, match="no template templates/nope"):
        templating.text("autograder.exports", "nope")
    with pytest.raises(ValueError, match="line 1"):
        templating.FileTemplate("@{9}").substitute({})
