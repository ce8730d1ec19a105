"""The built site in a real browser, with the network cut off.

Debian's chromium (installed by ``scripts/install_chromium.sh`` when missing and running as root)
is driven by Playwright. The site is served from 127.0.0.1 by a thread of this process; every
request for another host is aborted and reported. On each page: the maths is typeset (no raw
TeX left), every image loads, and the console stays free of errors. Every lesson is
screenshotted whole (into ``$DOCS_SCREENSHOTS`` when set, for a person to look at; a temporary
folder otherwise), and each lesson's "Check yourself" answers start folded. In the same visit
each page's layout is checked (:mod:`tests.docs.layout_checks`) at 1280 px, then with the
window narrowed to a phone's 390 px (one tour of the site in one browser, not one per width).
Searching for "softmax" must find the softmax lesson.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import LOCAL_HOSTS
from .layout_checks import DESKTOP, PHONE, layout_faults

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Watch:
    """Blocks and records off-machine requests; records console errors and failed loads."""

    def __init__(self, context) -> None:
        self.external: list[str] = []
        self.problems: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route, request):
        host = urlsplit(request.url).hostname
        if request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            self.external.append(request.url)
            route.abort()

    def attach(self, page, where: str) -> None:
        page.on(
            "console",
            lambda m: m.type == "error" and self.problems.append(f"{where}: console: {m.text}"),
        )
        page.on("pageerror", lambda e: self.problems.append(f"{where}: page error: {e}"))
        page.on(
            "response",
            lambda r: r.status >= 400 and self.problems.append(f"{where}: {r.status} {r.url}"),
        )
        page.on(
            "requestfailed",
            lambda r: (
                urlsplit(r.url).hostname in LOCAL_HOSTS
                and self.problems.append(f"{where}: failed {r.url}")
            ),
        )


PAGE_CHECK = """() => {
  const main = document.querySelector('.md-content') || document.body;
  const maths = [...main.querySelectorAll('.arithmatex')];
  const untypeset = maths.filter(el => !el.querySelector('mjx-container')).map(el => el.textContent.slice(0, 60));
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code, mjx-container, script').forEach(el => el.remove());
  const text = clone.textContent;
  const raw = ['$$', '\\\\(', '\\\\[', '\\\\frac', '\\\\begin{'].filter(s => text.includes(s));
  const images = [...document.images].map(img => ({src: img.getAttribute('src'),
      ok: img.complete && img.naturalWidth > 0}));
  return {maths: maths.length, untypeset, raw, images};
}"""


def site_pages(site: Path) -> list[str]:
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    return ["" if p == "." else p + "/" for p in pages]


def screenshot_dir(tmp_path_factory) -> Path:
    chosen = os.environ.get("DOCS_SCREENSHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    return tmp_path_factory.mktemp("screenshots")


# Display maths and the code a lesson shows (not the folded stubs of its exercise box) must
# fit the text column: a sideways scroll hides the end of an equation or a comment.
OVERFLOWING = """() => [...document.querySelectorAll(
    '.md-content div.arithmatex, .md-content pre > code')]
  .filter(el => !el.closest('details') && el.scrollWidth > el.clientWidth + 2)
  .map(el => el.textContent.trim().slice(0, 60))"""

FOLDED = """() => {
  const boxes = [...document.querySelectorAll('.md-content details.question')];
  return {count: boxes.length, open: boxes.filter(d => d.open).length};
}"""



def open_typeset(context, watch: Watch, server: str, path: str):
    """A new page of ``context`` at ``server + path``, watched for requests that leave the
    machine and console errors, once MathJax has typeset it and every image has loaded."""
    page = context.new_page()
    watch.attach(page, path or "/")
    page.goto(server + path, wait_until="load")
    page.wait_for_function(
        "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000
    )
    page.evaluate("() => MathJax.startup.promise")
    page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=20_000)
    return page


#: Resolves once the browser has laid out and painted twice: after the window is resized,
#: the page's own resize handlers (mkdocs-material's) have run before anything is measured.
SETTLED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


@pytest.fixture(scope="module")
def site_tour(built_site, server, browser, tmp_path_factory) -> dict:
    """Every page opened once at the desktop width (1280 px), then narrowed to a phone's
    (390 px): what each test below reads.

    For each page, its rendering check (``PAGE_CHECK``), for a lesson its screenshot's size,
    overflowing code or maths and folded questions, and its layout faults
    (:mod:`tests.docs.layout_checks`) at each width; for the site, the requests that left the
    machine and the console's errors. CSS follows the window's width (media queries) and
    MathJax's CHTML output does not depend on it, so a page narrowed after loading is laid out
    as one loaded narrow; a second tour at 390 px cost a second browser and every page's
    load and typesetting again.
    """
    shots = screenshot_dir(tmp_path_factory)
    context = browser.new_context(viewport={"width": DESKTOP, "height": 900})
    watch = Watch(context)
    pages = {}
    for path in site_pages(built_site):
        page = open_typeset(context, watch, server, path)
        seen = {"check": page.evaluate(PAGE_CHECK), "layout": layout_faults(page, DESKTOP)}
        if path.startswith("lessons/"):
            shot = shots / (path.strip("/").replace("/", "-") + ".png")
            page.screenshot(path=str(shot), full_page=True)
            seen.update(shot=shot, shot_bytes=shot.stat().st_size,
                        wide=page.evaluate(OVERFLOWING), folded=page.evaluate(FOLDED))
        page.set_viewport_size({"width": PHONE, "height": 900})
        page.evaluate(SETTLED)
        seen["phone"] = layout_faults(page, PHONE)
        pages[path] = seen
        page.close()
    context.close()
    return {"pages": pages, "external": watch.external, "problems": watch.problems}


def test_every_page_renders_offline(site_tour):
    pages = site_tour["pages"]
    assert len(pages) >= 18, sorted(pages)
    failures, typeset = [], 0
    for path, seen in pages.items():
        result = seen["check"]
        typeset += result["maths"]
        if result["untypeset"]:
            failures.append(f"{path}: maths not typeset: {result['untypeset'][:3]}")
        if result["raw"]:
            failures.append(f"{path}: raw TeX left in the text: {result['raw']}")
        broken = [i["src"] for i in result["images"] if not i["ok"]]
        if broken:
            failures.append(f"{path}: images that did not load: {broken}")
        if path.startswith("lessons/") and not any(
            "generated/figures/" in (i["src"] or "") for i in result["images"]
        ):
            failures.append(f"{path}: no figure")
        if path.startswith("lessons/"):
            if seen["shot_bytes"] < 50_000:  # a blank or unstyled page compresses to little
                failures.append(f"{path}: screenshot {seen['shot']} is nearly empty")
            if seen["wide"]:
                failures.append(f"{path}: wider than the column: {seen['wide'][:3]}")
            folded = seen["folded"]
            if not 4 <= folded["count"] <= 6 or folded["open"]:
                failures.append(f"{path}: check-yourself questions {folded} (want 4-6, folded)")
    assert typeset > 300, f"only {typeset} maths elements typeset on the whole site"
    assert not site_tour["external"], (
        f"requests to other hosts were attempted: {site_tour['external'][:10]}")
    assert not failures, "\n".join(failures)
    assert not site_tour["problems"], "\n".join(site_tour["problems"][:20])


def test_every_page_fits_a_desktop(site_tour):
    faults = [f"{path or '/'}: {f}" for path, seen in site_tour["pages"].items()
              for f in seen["layout"]]
    assert not faults, f"{len(faults)} layout faults at {DESKTOP} px:\n" + "\n".join(faults)


def test_every_page_fits_a_phone(site_tour):
    faults = [f"{path or '/'}: {f}" for path, seen in site_tour["pages"].items()
              for f in seen["phone"]]
    assert not faults, f"{len(faults)} layout faults at {PHONE} px:\n" + "\n".join(faults)


SEARCH_READY = """() => {
  const meta = document.querySelector('.md-search-result__meta');
  return meta !== null && !/Initializing/i.test(meta.textContent);
}"""


def test_search_finds_the_softmax_lesson(built_site, server, browser):
    context = browser.new_context()
    watch = Watch(context)
    page = context.new_page()
    watch.attach(page, "search")
    page.goto(server, wait_until="load")
    page.click("label.md-search__icon, .md-search__input")
    # mkdocs-material reads the query on the worker's "ready" message, on focus and on keyup,
    # never on "input": a query set with fill() while the index was still being built went
    # unseen on a loaded CI machine. Wait for the index, then type real keys.
    page.wait_for_function(SEARCH_READY, timeout=120_000)
    page.locator("input.md-search__input").press_sequentially("softmax")
    page.wait_for_selector(".md-search-result__item a", state="attached", timeout=60_000)
    links = page.eval_on_selector_all(".md-search-result__item a", "els => els.map(a => a.href)")
    context.close()
    assert any("lessons/03-softmax/" in href for href in links), (links, watch.problems)
    assert not watch.external, watch.external
    assert not watch.problems, "\n".join(watch.problems)
