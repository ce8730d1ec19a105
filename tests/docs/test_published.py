"""What a student can read says nothing about what the hidden tests probe (issue 34, item 4).

The maintainers' design pages (the mutation reviews naming the mistakes hidden tests look for,
the red teams' attacks, the degenerate cases a constant answer passes) stay in the repository,
in ``docs/design/``, and out of the lesson site, its search and the student release. Checked
without building: mkdocs's own file collection with the site's configuration (what the build
publishes and indexes for search), its nav, and the release's list of copied files; the slow
tests then read the built site's search index and the built release.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import get_files

from autograder.exports import release

from .conftest import ROOT

DESIGN = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "design").glob("*.md"))
MAINTAINER = [p for p in release.MAINTAINER_DOCS if p.startswith("docs/")]
#: Words only a page about the hidden suites' strength or the grader's attacks uses (the
#: issue's finding: the site's search for "logsumexp" found the mutation review).
WORDS = r"\bmutants?\b|\bmutation|red team|unkillable"
TELLTALES = re.compile(WORDS + r"|suite-strength|threat-model", re.IGNORECASE)
#: In the search index a repository path (``docs/design/threat-model.md``, in a code span of
#: docs/instructors.md) is allowed: only the words.
INDEX_TELLTALES = re.compile(WORDS, re.IGNORECASE)


@pytest.fixture(scope="module")
def site_files():
    config = load_config(str(ROOT / "mkdocs.yml"))
    return config, get_files(config)


def _published(site_files) -> dict[str, Path]:
    """docs-relative path -> file of every markdown page the site builds and indexes."""
    _, files = site_files
    return {f.src_uri: Path(f.abs_src_path) for f in files.documentation_pages()}


def test_the_suite_strength_review_is_a_maintainers_page():
    """The page the issue found is among the maintainers' pages, and they all exist."""
    assert "docs/design/suite-strength.md" in MAINTAINER
    for rel in release.MAINTAINER_DOCS:
        assert (ROOT / rel).is_file(), rel  # kept in the repository


def test_the_site_publishes_no_maintainers_page(site_files):
    published = _published(site_files)
    for rel in MAINTAINER:
        assert rel.removeprefix("docs/") not in published, rel
    # Every other design page is published (exclude_docs and MAINTAINER_DOCS agree).
    assert sorted(f"docs/{p}" for p in published if p.startswith("design/")) == sorted(
        set(DESIGN) - set(MAINTAINER))


def test_the_nav_names_no_maintainers_page(site_files):
    config, _ = site_files
    text = repr(config["nav"])
    for rel in MAINTAINER:
        assert rel.removeprefix("docs/") not in text, rel


def test_no_published_page_links_to_or_describes_the_hidden_probes(site_files):
    """A published page may name a maintainers' page as a repository path, never link to it
    (the link would be dead on the site), and uses none of the review's words."""
    for uri, path in _published(site_files).items():
        text = path.read_text("utf-8")
        for rel in MAINTAINER:
            assert f"]({Path(rel).name}" not in text and f"]({rel.removeprefix('docs/')}" not in text, (
                uri, rel)
        prose = re.sub(r"`[^`\n]*`", "", text)  # a repository path in a code span is allowed
        assert not TELLTALES.search(prose), (uri, TELLTALES.search(prose).group())


def test_the_release_copies_no_maintainers_page():
    copied = {rel for rel, _ in release._files(ROOT)}
    assert "docs/design/exercise-api.md" in copied and "docs/lessons/03-softmax.md" in copied
    for rel in release.MAINTAINER_DOCS:
        assert rel not in copied, rel


@pytest.mark.slow
def test_the_built_sites_search_finds_no_review(built_site):
    """The issue's own check: the search index (what a search for ``logsumexp`` reads) holds
    no maintainers' page and none of their words; the pages themselves are not built."""
    index = (built_site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "logsumexp" in index  # the lessons are indexed
    assert not INDEX_TELLTALES.search(index), INDEX_TELLTALES.search(index).group()
    for rel in MAINTAINER:
        page = Path(rel.removeprefix("docs/")).with_suffix("")
        page = page.parent if page.name == "README" else page  # a folder's index page
        loc = f'"location":"{page.as_posix()}/'
        assert f'{loc}"' not in index and f"{loc}#" not in index, rel
        assert not (built_site / page / "index.html").exists(), rel
