"""The built lesson site: strict build, anchors the grader links to, exercise boxes, figures,
the API reference, and no external host and no solution code anywhere in it."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder import catalogue

from .conftest import LESSONS, ROOT

pytestmark = pytest.mark.slow

TOPICS = list(catalogue.topics())


def page(site: Path, md_path: str) -> str:
    """The built HTML of a docs-relative markdown path (``lessons/01-vectors.md``)."""
    return (site / Path(md_path).with_suffix("") / "index.html").read_text(encoding="utf-8")


class Refs(HTMLParser):
    """Collects the URLs an HTML page loads (scripts, styles, fonts, images) and its ids."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag in ("script", "img", "source", "iframe", "embed", "audio", "video") and a.get("src"):
            self.loads.append((tag, a["src"]))
        if tag == "link" and a.get("href") and a.get("rel", "") not in ("canonical", "alternate"):
            self.loads.append((tag, a["href"]))
        if tag == "object" and a.get("data"):
            self.loads.append((tag, a["data"]))


def refs(html: str) -> Refs:
    r = Refs()
    r.feed(html)
    return r


def test_strict_build_has_no_warnings(built_site):
    if os.environ.get("DOCS_SITE"):
        pytest.skip("DOCS_SITE: a site built elsewhere, with no build log here")
    log = (built_site.parent / "docs-build.log").read_text()
    assert "WARNING" not in log, log


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.module)
def test_catalogue_lesson_anchors_exist(built_site, topic):
    """Every exercise's `lesson = "#anchor"` is a heading id in its lesson's built page."""
    ids = refs(page(built_site, topic.lesson_page)).ids
    for ex in topic.exercises:
        anchor = ex.anchor.lstrip("#")
        assert anchor in ids, f"{topic.lesson_page} has no heading with id {anchor!r} ({ex.name})"


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.module)
def test_lesson_ends_with_exercise_box(built_site, topic):
    html = page(built_site, topic.lesson_page)
    box = html[html.rindex('id="exercise"') :]
    assert f"exercises/{topic.module}.py" in box
    text = re.sub(r"<[^>]+>", "", box)
    assert re.search(rf"course check {topic.number}\b", text), "no `course check N`"
    for ex in topic.exercises:
        # the build hook marks a short name in code as one token (class="token")
        assert re.search(rf"<code[^>]*>{ex.name}</code>", box), f"{ex.name} missing from the box"
        # its stub, included from exercises/ by snippet section
        assert f"ex{topic.number:02d}" in box and "NotImplementedError" in box
    notebook = re.search(r'href="([^"]+\.ipynb)"', box)
    assert notebook, "no link to the companion notebook"
    target = (built_site / Path(topic.lesson_page).with_suffix("") / notebook.group(1)).resolve()
    assert target.is_file(), f"companion notebook link is broken: {notebook.group(1)}"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_figures_exist(built_site, lesson):
    """Each lesson shows at least one figure generated at build time, and every image loads."""
    html = page(built_site, f"lessons/{lesson.name}")
    images = [src for tag, src in refs(html).loads if tag == "img"]
    assert any("generated/figures/" in src for src in images), "no generated figure"
    for src in images:
        target = (built_site / "lessons" / lesson.stem / src).resolve()
        assert target.is_file() and target.stat().st_size > 1000, f"missing figure {src}"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_figure_text_is_readable(built_site, lesson):
    """No figure is shown smaller than it was drawn: matplotlib's 10 pt labels (9 pt at the
    smallest, for annotations) then appear at 9 px or more, never as fine print."""
    html = page(built_site, f"lessons/{lesson.name}")
    for src, shown in re.findall(r'<img[^>]*src="([^"]+\.svg)"[^>]*width="(\d+)"', html):
        svg = (built_site / "lessons" / lesson.stem / src).resolve().read_text(encoding="utf-8")
        drawn = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg).group(1))
        assert int(shown) / drawn >= 1.0, f"{src} drawn {drawn:.0f} pt wide, shown at {shown} px"


def test_no_external_hosts(built_site):
    """No script, style sheet, font or image comes from another host."""
    external = []
    for f in built_site.rglob("*.html"):
        for tag, url in refs(f.read_text(encoding="utf-8")).loads:
            if re.match(r"^(https?:)?//", url):
                external.append(f"{f.relative_to(built_site)}: <{tag}> {url}")
    for f in built_site.rglob("*.css"):
        for url in re.findall(
            r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", f.read_text(errors="ignore")
        ):
            external.append(f"{f.relative_to(built_site)}: url({url})")
        for url in re.findall(
            r"@import\s+(?:url\()?['\"]?((?:https?:)?//[^'\")]+)", f.read_text(errors="ignore")
        ):
            external.append(f"{f.relative_to(built_site)}: @import {url}")
    assert not external, "\n".join(external[:20])
    assert (built_site / "assets" / "vendor" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert any(
        (
            built_site / "assets" / "vendor" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
        ).glob("*.woff")
    )


def test_no_solution_code_on_the_site(built_site):
    solution_lines = set()
    for f in (ROOT / "solutions").glob("ex*.py"):
        body = re.findall(
            r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", f.read_text(), flags=re.DOTALL
        )
        solution_lines |= {
            line.strip() for block in body for line in block.splitlines() if len(line.strip()) > 30
        }
    assert solution_lines, "found no solution bodies to look for"
    for f in built_site.rglob("*"):
        if f.suffix in (".html", ".py", ".ipynb", ".md", ".txt", ".json"):
            text = f.read_text(errors="ignore")
            assert "BEGIN SOLUTION" not in text, f
            leaked = [line for line in solution_lines if line in text]
            assert not leaked, f"{f.relative_to(built_site)} shows solution code: {leaked[:3]}"


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.module)
def test_api_reference_documents_every_exercise(built_site, topic):
    html = page(built_site, f"reference/{topic.module}.md")
    ids = refs(html).ids
    for ex in topic.exercises:
        assert f"{topic.module}.{ex.name}" in ids, f"{ex.name} missing from the API reference"
    assert "Raises" in html and "Returns" in html


def test_lessons_paste_no_code():
    """Code in a lesson is included from a source file, never pasted into the markdown."""
    for lesson in LESSONS:
        blocks = re.findall(
            r"^```(\w*)\n(.*?)^```",
            lesson.read_text(encoding="utf-8"),
            flags=re.MULTILINE | re.DOTALL,
        )
        for lang, body in blocks:
            if lang in ("python", "py"):
                lines = [line for line in body.splitlines() if line.strip()]
                assert all(line.strip().startswith("--8<--") for line in lines), (
                    f"{lesson.name} pastes code; include it with a snippet section instead"
                )


def test_search_index_has_the_lessons(built_site):
    index = (built_site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "softmax" in index.lower()
    for lesson in LESSONS:
        assert f"lessons/{lesson.stem}/" in index


#: Hosts that serve libraries to web pages: the site must load nothing from any of them, even on
#: a path a reader opens later (MathJax's speech maps once speech is turned on in its menu).
CDN_HOSTS = ("cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "ajax.googleapis.com",
             "polyfill.io")


def test_no_file_of_the_site_names_a_cdn(built_site):
    """Every text file the site serves (pages, scripts, styles, vendored MathJax), read for the
    address of a CDN (scripts/setup_docs.sh points MathJax's fallbacks into the site)."""
    found = sorted(f"{p.relative_to(built_site)}: {host}"
                   for p in built_site.rglob("*")
                   if p.is_file() and p.suffix in (".html", ".js", ".css", ".json", ".svg")
                   and not THEME_BUNDLE.fullmatch(p.relative_to(built_site).as_posix())
                   for host in CDN_HOSTS if host in p.read_text("utf-8", errors="replace"))
    assert not found, found
    # The theme's own bundle keeps two fallbacks on unpkg: mermaid, fetched only for a page
    # with a mermaid diagram, and a ResizeObserver polyfill for browsers without one (every
    # browser the site supports has it). No page may have a diagram that would fetch it.
    pages = [p for p in built_site.rglob("*.html") if 'class="mermaid"' in p.read_text("utf-8")]
    assert not pages, pages


#: mkdocs-material's JavaScript bundle (its name carries a content hash).
THEME_BUNDLE = re.compile(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js")
