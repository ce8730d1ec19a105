"""What instructors hand out: lesson links that work where the feedback is read (issue 15,
item 7), the demo's legend (item 9) and a release's `course grade` labelled as no grade (item 10).
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from autograder import catalogue
from autograder import console as cli_console
from autograder.cli import demo
from autograder.exports import gradescope
from autograder.exports.nbgrader import export as nbgrader_export
from autograder.grading import runner
from autograder.results.version import grader_version
from tests.helpers import ROOT, course, stub_source

SITE = "https://example.org/la4t"
SOFTMAX = catalogue.get_exercise("ex03_softmax.softmax")

# Grades a small class twice: one xdist worker runs this module (make test: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("instructor-links")


# ---------------------------------------------------------------- the one link builder

def test_a_lesson_link_names_the_site_given_or_only_the_repository_file():
    path = f"docs/{SOFTMAX.lesson_page}{SOFTMAX.anchor}"
    assert catalogue.lesson_link(SOFTMAX, None) == path
    assert catalogue.lesson_link(SOFTMAX, SITE + "/") == (
        f"{path} ({SITE}/lessons/03-softmax/{SOFTMAX.anchor})")
    # A student's own machine (check, watch, hint) keeps the `make serve` address.
    assert SOFTMAX.lesson_link == catalogue.lesson_link(SOFTMAX, catalogue.SITE_URL)
    assert "(with `make serve` running: http://127.0.0.1:8000/lessons/03-softmax/" in \
        SOFTMAX.lesson_link


@pytest.mark.parametrize("text, expected", [
    ("site_url: https://a.example/course  # published here\n", "https://a.example/course/"),
    ("site_url: 'https://a.example/'\n", "https://a.example/"),
    ("# site_url: https://a.example/\n", None),
    ("site_url:\n", None),
    ("site_name: x\n", None),
])
def test_site_url_is_read_from_mkdocs_yml(tmp_path, text, expected):
    yml = tmp_path / "mkdocs.yml"
    yml.write_text("site_name: Course\n" + text + "docs_dir: docs\n", "utf-8")
    assert catalogue.configured_site_url(yml) == expected
    assert catalogue.configured_site_url(tmp_path / "absent.yml") is None


def test_a_site_url_that_is_no_web_address_is_refused(tmp_path):
    for bad in ("example.org/course", "ftp://example.org/", "https://", "http://a b/"):
        with pytest.raises(ValueError, match="not an http"):
            catalogue.check_site_url(bad)
    yml = tmp_path / "mkdocs.yml"
    yml.write_text("site_url: www.example.org\n", "utf-8")
    with pytest.raises(ValueError, match="mkdocs.yml"):
        catalogue.configured_site_url(yml)
    proc = course("grade", str(tmp_path), "--out", str(tmp_path / "out"),
                  "--site-url", "example.org")
    assert proc.returncode == 2 and "not an http" in proc.stderr, proc.stderr


# ---------------------------------------------------------------- course grade

def _lesson_lines(out: Path) -> list[str]:
    text = (out / "feedback" / "alice.md").read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip().startswith("Lesson:")]


def test_graded_feedback_links_the_site_given_and_never_127_0_0_1(tmp_path):
    cls = tmp_path / "class"
    (cls / "alice").mkdir(parents=True)
    # a stub with dot written wrongly: its failures are listed with their lesson links (an
    # exercise not written yet is one line, without a link)
    wrong = stub_source("ex01_vectors") + "\n\ndef dot(u, v):\n    return 0.0\n"
    (cls / "alice" / "ex01_vectors.py").write_text(wrong, "utf-8")
    out = tmp_path / "out"
    configured = catalogue.configured_site_url()  # none in this repository's mkdocs.yml

    proc = course("grade", "--class", str(cls), "--out", str(out), "--no-plan")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lesson_lines(out)
    assert lines and all(x.startswith("Lesson: docs/lessons/01-") for x in lines)
    results = (out / "results" / "alice.json").read_text("utf-8")
    if configured is None:
        assert all(re.fullmatch(r"Lesson: docs/lessons/[\w-]+\.md#[\w-]+", x) for x in lines)
        assert "127.0.0.1" not in results + "".join(lines)

    # Graded again with a site: the unchanged submission is not resumed with dead links.
    proc = course("grade", "--class", str(cls), "--out", str(out), "--no-plan",
                  "--site-url", SITE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lesson_lines(out)
    assert lines and all(f"({SITE}/lessons/01-" in x for x in lines), lines
    results = (out / "results" / "alice.json").read_text("utf-8")
    assert "Lesson: docs/lessons/01-" in results and f"{SITE}/lessons/01-" in results
    assert "127.0.0.1" not in results

    # Unchanged again: now resumed, nothing regraded (unless the grader itself changed).
    before = json.loads(results)["extra_data"]["grader_version"]
    proc = course("grade", "--class", str(cls), "--out", str(out), "--no-plan",
                  "--site-url", SITE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if before == grader_version():
        assert "not regraded" in proc.stdout, proc.stdout[-2000:]


# ---------------------------------------------------------------- gradescope, nbgrader

def test_the_gradescope_zip_bakes_the_site_into_run_autograder(tmp_path):
    def run_line(site: str | None) -> str:
        files = {name: text for name, text, _ in gradescope.generated_files(
            "after_published", 10, 120, site)}
        return files["run_autograder"]

    assert "--site-url https://example.org/la4t/\n" in run_line(SITE + "/")
    assert "--site-url ''\n" in run_line(None)  # '' = no site: links name the lesson files
    zip_path = tmp_path / "autograder.zip"
    proc = course("gradescope", "--out", str(zip_path), "--site-url", SITE)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with zipfile.ZipFile(zip_path) as zf:
        script = zf.read("run_autograder").decode()
    assert f"--site-url {SITE}/" in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_gradescope_run_takes_the_baked_site_url(monkeypatch):
    seen = {}
    monkeypatch.setattr(gradescope, "run", lambda root, **kw: seen.update(kw) or 0)
    assert gradescope.main(["run", "--root", "/nowhere", "--site-url", SITE]) == 0
    assert seen["site_url"] == SITE + "/"
    assert gradescope.main(["run", "--root", "/nowhere", "--site-url", ""]) == 0
    assert seen["site_url"] is None


def test_nbgrader_notebooks_link_the_site_given_or_the_lesson_file(tmp_path):
    nbgrader_export.build(tmp_path / "site", topics=["ex03_softmax"], site_url=SITE + "/")
    nbgrader_export.build(tmp_path / "none", topics=["ex03_softmax"], site_url=None)
    nb = "source/ex03_softmax/ex03_softmax.ipynb"
    with_site = (tmp_path / "site" / nb).read_text("utf-8")
    without = (tmp_path / "none" / nb).read_text("utf-8")
    assert f"({SITE}/lessons/03-softmax/{SOFTMAX.anchor})" in with_site
    # without a site, the lesson file bundled beside the notebook: a link Jupyter resolves
    # (docs/lessons/… named a file the assignment folder does not hold)
    assert f"(03-softmax.md{SOFTMAX.anchor})" in without and "(docs/lessons/" not in without
    assert ((tmp_path / "none" / "source/ex03_softmax/03-softmax.md").read_bytes()
            == (ROOT / "docs/lessons/03-softmax.md").read_bytes())
    assert not (tmp_path / "site" / "source/ex03_softmax/03-softmax.md").exists()
    assert "127.0.0.1" not in with_site + without and SITE not in without


def test_the_nbgrader_readme_explains_checksum_warnings(tmp_path):
    nbgrader_export.build(tmp_path, topics=["ex01_vectors"])
    readme = (tmp_path / "README.md").read_text("utf-8")
    assert "checksum has changed" in readme and "1961" in readme


def test_the_nbgrader_config_swaps_only_autogrades_overwritecells(tmp_path):
    """The exported config's autograde steps are nbgrader's defaults but for the one that
    warned for every released test cell (tests/test_nbgrader.py runs it end to end): a new
    nbgrader that changes its default list fails here, not silently in a course."""
    pytest.importorskip("nbgrader")
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import OverwriteCells
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.exports.nbgrader.feedback import OverwriteReleasedCells

    nbgrader_export.build(tmp_path, topics=["ex01_vectors"])
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    default = Autograde.class_traits()["sanitize_preprocessors"].default()
    assert OverwriteCells in default
    assert cfg.Autograde.sanitize_preprocessors == [
        OverwriteReleasedCells if p is OverwriteCells else p for p in default]


# ---------------------------------------------------------------- demo legend, release label

def test_the_demo_legend_says_what_every_example_submission_shows():
    shown = {p.name for p in (ROOT / "examples" / "submissions").iterdir() if p.is_dir()}
    assert set(demo.LEGEND) == shown | {"complete", "stubs"}
    lines = demo.legend_lines()
    for name in demo.LEGEND:
        assert sum(line.startswith(f"{name}: ") for line in lines) == 1, name
    assert "partial = some topic missing, did not import or timed out" in lines[-2]
    # the table's column heads, spelled out (a new user met ex01 … ex08 without names)
    assert lines[-1] == ("topics: ex01 = vectors, ex02 = projections, ex03 = softmax, "
                         "ex04 = svd lora, ex05 = attention, ex06 = rotation norm, "
                         "ex07 = matrix properties, ex08 = flash attention")
    printed = Console(record=True, width=200)
    demo.print_legend(printed)
    text = printed.export_text()
    assert "exit_on_import" in text and "partial = some topic missing" in text
    assert "ex08 = flash attention" in text


def _title(public_only: bool | None) -> str:
    printed = Console(record=True, width=200)
    printed.print(cli_console.grade_table([], public_only=public_only))
    return printed.export_text().splitlines()[0].strip()


def test_a_release_labels_its_scores_as_public_tests_only(monkeypatch):
    assert not cli_console.public_tests_only()  # this repository has hidden suites
    assert _title(None) == "Grades"
    real = runner._suite_module
    # A release: autograder/suites/hidden/ is not shipped, so no hidden suite imports.
    monkeypatch.setattr(runner, "_suite_module",
                        lambda kind, topic: None if kind == "hidden" else real(kind, topic))
    assert cli_console.public_tests_only()
    assert _title(None) == "Scores: public tests only — not your grade"
    assert _title(False) == "Grades"
