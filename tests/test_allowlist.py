"""As root, with bubblewrap, a worker sees an allow-list of the host and nothing else.

Red team: a submission walked the disk for any ``ex03_softmax.py`` under a path containing
"solution", "reference" or "source", found a copy outside the repository (a deny-list hides the
repository's own solutions only) and scored with it. Here decoy copies of the solutions sit in
several host places, world-readable; no worker can open, list or stat any of them, and a walk of
the worker's whole file system finds no file outside the allow-list
(:mod:`autograder.driver.allowlist`). The last tests show the same decoys ARE found without bubblewrap
(the deny-list fallback): the protection, not the decoys' placing, is what the first ones test.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.driver import allowlist
from autograder.paths import PACKAGE_DIR
from autograder.limits import Limits
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.helpers import ROOT, solution_source

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not allowlist.usable(),
    reason="needs root and a working bubblewrap (scripts/install_sandbox.sh installs it)")]

PROBE = r'''
import os, sys

def reach(path):
    """What of ``path`` a process here can get at: each of open, stat, list its folder."""
    out = {}
    for name, act in (("open", lambda: open(path, "rb").read(1)),
                      ("stat", lambda: os.stat(path)),
                      ("list", lambda: os.listdir(os.path.dirname(path)))):
        try:
            act()
            out[name] = "ok"
        except OSError as exc:
            out[name] = type(exc).__name__
    return out

def visible_files(allowed, limit=200):
    """Files (and links, sockets...) found walking / that lie outside every allowed root."""
    allowed = [a.rstrip("/") for a in allowed]
    def inside(p):
        return any(p == a or p.startswith(a + "/") for a in allowed)
    found, stack = [], ["/"]
    while stack and len(found) < limit:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            p = e.path
            if inside(p):
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(p)
            else:
                found.append(p)
    return found

def hunt():
    """The red team's search: any ex03_softmax.py below a 'solution'/'source' path."""
    hits, stack = [], ["/"]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if d.startswith(("/proc", "/sys", "/dev")):
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif e.name == "ex03_softmax.py" and any(
                    w in e.path for w in ("solution", "source", "reference")):
                hits.append(e.path)
    return sorted(hits)
'''


@pytest.fixture(scope="module")
def decoys():
    """World-readable copies of the solutions in the places a host keeps old copies."""
    tag = f"course-decoy-{secrets.token_hex(4)}"
    roots = [Path("/tmp") / tag, Path("/srv") / tag, Path("/root") / tag,
             Path("/home") / tag, ROOT.parent / tag]
    # Red team: inside folders the view binds: the venv (pip keeps `-e git+` clones in its
    # src/), the base interpreter's bin/ and its own site-packages (a `pip install .` there).
    import sysconfig

    base = Path(sys.base_prefix)
    had_src = (Path(sys.prefix) / "src").exists()
    roots += [Path(sys.prefix) / "src" / tag, Path(sys.prefix) / tag, base / "bin" / tag,
              Path(sysconfig.get_paths()["stdlib"]) / "site-packages" / tag]
    files = []
    roots = list(dict.fromkeys(roots))  # a checkout in /tmp itself: ROOT.parent is /tmp
    for r in roots:
        folder = r / "source" / "solutions"
        folder.mkdir(parents=True)
        target = folder / "ex03_softmax.py"
        target.write_text(solution_source("ex03_softmax"))
        for p in (r, r / "source", folder):
            os.chmod(p, 0o755)
        os.chmod(target, 0o644)
        files.append(str(target))
    yield files
    for r in roots:
        shutil.rmtree(r, ignore_errors=True)
    if not had_src:  # the venv's src/ was made for its decoy
        shutil.rmtree(Path(sys.prefix) / "src", ignore_errors=True)


def _session() -> tuple[Slot, Session]:
    slot = Slot(0, Limits(call_seconds=60))
    session = Session(slot, {"ex01_vectors": PROBE.encode()})
    session.load("ex01_vectors")
    return slot, session


@pytest.fixture(scope="module")
def worker():
    slot, session = _session()
    yield session
    session.close()
    slot.close()


def call(session: Session, name: str, *args):
    return session.call("ex01_vectors", name, args, timeout=60)


def test_no_decoy_can_be_opened_stat_or_listed(worker, decoys):
    for path in decoys:
        assert os.stat(path).st_mode & 0o004, "the decoy is world-readable on the host"
        got = call(worker, "reach", path)
        assert "ok" not in got.values(), (path, got)


def test_the_hunt_finds_nothing(worker, decoys):
    assert call(worker, "hunt") == []


def _allowed(session: Session) -> list[str]:
    """The allow-list: what autograder.driver.allowlist binds, and the view's own fresh folders."""
    bound = allowlist.python_paths()
    roots = [*allowlist.SYSTEM_DIRS, *allowlist.LOADER_FILES, *bound,
             *(link for link, _ in allowlist.python_links(bound)),
             str(PACKAGE_DIR), session.slot.tmp_root, "/dev", "/proc", "/tmp",
             "/var/tmp", "/sys"]
    roots += ["/" + n for n in allowlist.TOP_LINKS]  # links into /usr
    return roots


def test_nothing_of_the_host_outside_the_allow_list_is_visible(worker):
    assert call(worker, "visible_files", _allowed(worker)) == []


def test_the_suites_folder_is_empty_in_the_view(worker):
    hidden = PACKAGE_DIR / "suites" / "hidden" / "ex03_softmax.py"
    assert hidden.exists()
    assert "ok" not in call(worker, "reach", str(hidden)).values()


def test_without_bubblewrap_the_decoys_are_found(decoys, monkeypatch):
    """The protection removed (the deny-list fallback): the same probe finds the decoys that
    no permission hides. Without this, the tests above could pass for another reason."""
    monkeypatch.setattr(allowlist, "usable", lambda: False)
    slot, session = _session()
    try:
        found = call(session, "hunt")
        assert str(Path(decoys[1])) in found  # /srv
        assert call(session, "visible_files", _allowed(session))
    finally:
        session.close()
        slot.close()


CHEAT = r'''
import importlib.util, os

def _stolen():
    stack = ["/"]
    while stack:
        d = stack.pop()
        if d.startswith(("/proc", "/sys", "/dev")):
            continue
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif e.name == "ex03_softmax.py" and "solution" in e.path:
                spec = importlib.util.spec_from_file_location("stolen", e.path)
                mod = importlib.util.module_from_spec(spec)
                try:
                    spec.loader.exec_module(mod)
                    return mod
                except Exception:
                    continue
    return None

_mod = _stolen()

def softmax(z, axis=-1, temperature=1.0):
    if _mod is None:
        raise NotImplementedError("nothing found")
    return _mod.softmax(z, axis=axis, temperature=temperature)
'''


def test_course_grade_gives_a_disk_hunter_nothing(decoys, tmp_path):
    """The real ``course grade``, as root: the hunter's softmax finds no copy to use."""
    sub = tmp_path / "class" / "hunter"
    sub.mkdir(parents=True)
    (sub / "ex03_softmax.py").write_text(CHEAT)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--class",
                           str(tmp_path / "class"), "--out", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((out / "results" / "hunter.json").read_text())
    softmax = [t for t in result["tests"] if t["name"].startswith("ex03_softmax.softmax:")]
    assert softmax and all(t["score"] == 0 for t in softmax)


def test_a_venv_reached_through_a_symlinked_folder_grades(tmp_path, request):
    """A venv whose folder is a link (``.venv -> /elsewhere/venv``, as in a git worktree or a
    home folder on another disk): the view binds the venv's real parts, and the interpreter,
    started as ``.venv/bin/python``, finds its ``pyvenv.cfg`` and packages only if the link
    itself is made in the view too. Without it every worker failed to start (no numpy)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a venv")
    # Not under /tmp: a worker gets a private /tmp, so a link there is gone once it starts (a
    # venv linked from /tmp stays unsupported); and a folder the slot uid may pass through.
    try:
        outside = Path(tempfile.mkdtemp(prefix="course-venv-link-", dir="/run"))
    except OSError as exc:
        pytest.skip(f"cannot make a folder under /run: {exc}")
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    outside.chmod(0o755)
    link = outside / "linked-venv"
    link.symlink_to(os.path.realpath(sys.prefix), target_is_directory=True)
    sub = tmp_path / "class" / "alice"
    sub.mkdir(parents=True)
    (sub / "ex01_vectors.py").write_text(solution_source("ex01_vectors"))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([str(link / "bin" / "python"), "-m", "autograder.cli", "grade",
                           "--class", str(tmp_path / "class"), "--out", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((out / "results" / "alice.json").read_text())
    ex01 = [t for t in result["tests"] if t["name"].startswith("ex01_vectors.")]
    assert ex01 and all(t["score"] == t["max_score"] for t in ex01), \
        [t["output"][:200] for t in ex01 if t["score"] != t["max_score"]][:3]
