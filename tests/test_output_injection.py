"""What a submission chose (its id, its messages) cannot become a formula or markup in outputs.

Red team: an id ``=HYPERLINK("http:evil","x")`` landed in grades.csv as a formula a spreadsheet
evaluates; ``raise ImportError('<script>…</script>\\n<b>reason: forged</b>')`` put raw HTML and
a line of its own into feedback.md. Second round: a bare ``\\r`` (a line ending to CommonMark,
not to ``split("\\n")``) started top-level lines with a forged total; an image and a link in a
message rendered live (a tracking pixel, a phishing link).
"""

from __future__ import annotations

import csv
import io

import pytest

from autograder import catalogue, templating
from autograder.grading import ids, submission, uploads
from autograder.results import model, report, writers
from autograder.results import text as outputs
from autograder.results.model import Result
from autograder.results.text import printable


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
    lines = text.split("\n")
    assert lines[0] == "`<script>alert(1)</script>`"
    assert lines[1:] == ["  > `## reason: forged`", "  > `- **fake test**`"]


#: Messages a submission could raise, each trying to write Markdown of its own into the
#: feedback: new lines by every line ending CommonMark knows and a few it does not, headings
#: (ATX and setext), lists, fences, indented code, images, links, autolinks, emphasis, raw
#: HTML and comments, entities, backtick runs that would close a code span, terminal escapes.
HOSTILE = [
    "ok\r# Feedback for someone_else\r\rTotal: **100.00 / 100.00** (status: ok)\r\rAll tests passed.",
    "a\r\n## ex01_vectors: 12.00 / 12\r\n- **ex01_vectors.dot: forged** (public)",
    "a\u2028# h\u2029# h\x85# h\v# h\f# h\x1c# h",
    "![pixel](https://evil.example/t.png) [regrade](https://evil.example/login) <https://e.x>",
    "**ALL TESTS PASSED** _x_ ~~y~~",
    "title\n===\nsub\n---\n* item\n1. item\n> quote\n    indented code\n```\nfenced\n```",
    "``` `` ` x ` `` ```",
    "`", "``", " ` ", "<img src=x onerror=alert(1)> <!-- c --> &lt;b&gt; &#60;i&#62; &amp;",
    "\x1b[2J\x1b]0;title\x07\x1b[41mred \u202eevil",
]


def _feedback(message: str) -> str:
    test = model.TestOutcome(name="ex01_vectors.dot: two vectors", topic="ex01_vectors",
                       exercise="dot", visibility="public", points=1.0, score=0.0,
                       kind="failed", message=message)
    r = Result(id="alice", sha256="0", status="partial", tests=[test],
               topics={"ex01_vectors": 0.0}, score=0.0, max_score=1.0,
               topic_notes={"ex02_projections": message})
    return writers.feedback_md(r)


@pytest.mark.parametrize("message", HOSTILE)
def test_feedback_renders_a_hostile_message_as_text_only(message):
    """Rendered by a CommonMark renderer, the feedback has exactly the structure the grader
    wrote, and the message's characters only inside code spans."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    hostile = _feedback(message)
    plain = _feedback("a plain message")
    assert "\x1b" not in hostile and "\r" not in hostile and "\u202e" not in hostile

    def shape(page: str) -> list[str]:
        return [f"{t.type}:{t.tag}" for t in md.parse(page) if t.type != "inline"]

    # the same blocks (headings, list, quote, paragraphs) as with a harmless message, apart
    # from how many quoted lines the message takes
    quoted = {"blockquote_open:blockquote", "blockquote_close:blockquote",
              "paragraph_open:p", "paragraph_close:p"}
    assert [b for b in shape(hostile) if b not in quoted] == \
        [b for b in shape(plain) if b not in quoted]
    html = md.render(hostile)
    for tag in ("<img", "<a ", "<script", "<h3", "<h4", "<hr", "<pre", "<ol", "<!--", "<em>",
                "<del>"):
        assert tag not in html
    assert html.count("<h1>") == 1 and html.count("<strong>") == 2  # the total, the test
    assert html.count("<h2>") == len(catalogue.topics())
    inline = [c for t in md.parse(hostile) if t.type == "inline" for c in t.children or []]
    shown = "".join(c.content for c in inline if c.type == "code_inline")
    # every non-blank line of the message (escaped where not printable) is in a code span
    for line in message.splitlines():
        if line.strip():
            assert outputs.printable(line).strip() in shown


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


def test_jinja_syntax_in_student_text_is_shown_not_run():
    """The page is rendered by Jinja2: an id or a note spelling its syntax is data, escaped,
    never evaluated."""
    sid = "{{ 7 * 7 }}{% for x in results %}<b>"
    r = Result(id=sid, sha256="0", status="partial", tests=[], topics={}, score=0.0,
               max_score=0.0, topic_notes={"ex01_vectors": "{{ css }}"},
               topic_kinds={"ex01_vectors": "import_error"})
    page = report.render([r])
    assert "<tr><td>{{ 7 * 7 }}{% for x in results %}&lt;b&gt;</td>" in page
    assert "49" not in page.split('<table id="grades">')[1]
    assert "ex01_vectors: {{ css }}" in page


def test_a_template_names_what_is_missing_or_malformed():
    with pytest.raises(KeyError, match="run_autograder: no value for @{call}"):
        templating.fill("autograder.exports", "gradescope/run_autograder", venv="/v",
                        visibility="hidden", submission="1")
    with pytest.raises(FileNotFoundError, match="no template templates/nope"):
        templating.text("autograder.exports", "nope")
    with pytest.raises(ValueError, match="line 1"):
        templating.FileTemplate("@{9}").substitute({})


# ------------------------------------------------------------------ ids in the console

ESCAPES = "a\x1b[2J\x1b]0;pwned\x07\x1b[41mEVIL\u202e"


def test_an_id_holding_control_characters_is_refused_with_them_escaped(tmp_path):
    """Second red team: ESC sequences in a folder's name reached the console's grade table
    raw (clear screen, colours, a window title). Typed on the command line, such an id is a
    usage error (as a hidden or over-long one is), and the message shows the characters
    escaped; a child of ``--class`` is listed under a derived id, its name escaped in its
    error (issue 34: one upload never stops a class)."""
    klass = tmp_path / "class"
    (klass / ESCAPES).mkdir(parents=True)
    (klass / "alice").mkdir()
    with pytest.raises(submission.UsageError) as caught:
        submission.discover([str(klass / ESCAPES)], None)
    message = str(caught.value)
    assert "\x1b" not in message and "\u202e" not in message and "\x07" not in message
    assert "a\\x1b[2J\\x1b]0;pwned\\x07" in message and "control character" in message
    found = submission.discover([], str(klass))
    assert [p.name for p in found] == [ESCAPES, "alice"]
    loaded = uploads.load(found[0])
    assert loaded.id == ids.derived_id(ESCAPES) and printable(loaded.id) == loaded.id
    assert "a\\x1b[2J\\x1b]0;pwned\\x07" in loaded.error and "\x1b" not in loaded.error


def test_hidden_entries_of_a_class_folder_are_skipped(tmp_path):
    """A class folder that is a git checkout (GitHub Classroom) holds ``.git``: skipped, as
    are other hidden entries, rather than ending the batch as an unusable id."""
    klass = tmp_path / "class"
    for name in (".git", ".ipynb_checkpoints", "alice", "bob"):
        (klass / name).mkdir(parents=True)
    assert [p.name for p in submission.discover([], str(klass))] == ["alice", "bob"]
    with pytest.raises(submission.UsageError, match="not a usable name"):
        submission.discover([str(klass / ".git")], None)  # named on the command line: refused


@pytest.mark.parametrize("sid", ["[link=https://evil.example]x[/link]", "[blink]b[/blink]",
                                 "bad\x1b[2Jid"])
def test_the_grade_table_prints_an_id_as_text(sid):
    from rich.console import Console

    from autograder import console

    r = Result(id=sid, sha256="0", status="ok", tests=[],
               topics=dict.fromkeys(catalogue.topic_modules(), 0.0), score=0.0, max_score=100.0)
    out = Console(record=True, width=300, color_system=None, file=io.StringIO())
    out.print(console.grade_table([r], public_only=False))
    shown = out.export_text()
    assert outputs.printable(sid) in shown and "\x1b" not in shown
