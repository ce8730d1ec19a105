"""Fixtures for the lesson site's tests: one strict build of the site, shared by every test.

The build goes to a temporary folder (never ``site/`` in the repository). Under pytest-xdist
the workers share one build: the first to arrive builds while holding a file lock, the others
wait for it and reuse the result.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LESSONS = sorted((DOCS / "lessons").glob("*.md"))


def mkdocs_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NO_MKDOCS_2_WARNING"] = "1"  # mkdocs-material's banner, not a warning of ours
    env.pop("COURSE_FIGURES", None)
    return env


def build_site(dest: Path) -> subprocess.CompletedProcess:
    """``scripts/setup_docs.sh`` then ``mkdocs build --strict`` into ``dest``."""
    subprocess.run(["bash", str(ROOT / "scripts" / "setup_docs.sh")], check=True, cwd=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest)],
        cwd=ROOT,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site built with ``--strict``; fails (with mkdocs's output) if the build does.

    ``DOCS_SITE=path`` uses a site already built there instead (a build kept from before a
    change, or one made by another generator), for the tests that only read the site.
    """
    if os.environ.get("DOCS_SITE"):
        site = Path(os.environ["DOCS_SITE"])
        assert (site / "index.html").is_file(), f"DOCS_SITE={site} holds no built site"
        return site
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # common to every worker of this run
    site = shared / "docs-site"
    log = shared / "docs-build.log"
    with open(shared / "docs-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (site / "index.html").exists() and not log.exists():
            t0 = time.monotonic()
            proc = build_site(site)
            status = "ok" if proc.returncode == 0 else f"failed ({proc.returncode})"
            log.write_text(
                f"{status} in {time.monotonic() - t0:.1f} s\n{proc.stdout}\n{proc.stderr}"
            )
    text = log.read_text()
    assert text.startswith("ok"), f"mkdocs build --strict failed:\n{text[-6000:]}"
    return site


# ----------------------------------------------------------------------------- the browser
# For tests/docs/test_browser.py.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        proc = subprocess.run(
            ["bash", str(ROOT / "scripts" / "install_chromium.sh")],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if proc.returncode == 3:
            pytest.skip(f"chromium cannot be had here: {proc.stderr.strip()}")
        assert proc.returncode == 0, f"installing chromium failed:\n{proc.stdout}\n{proc.stderr}"
    return CHROMIUM


@pytest.fixture(scope="module")
def server(built_site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(built_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(chromium):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        yield b
        b.close()
