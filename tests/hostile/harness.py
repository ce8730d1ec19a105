"""Running `course grade` on a hostile class and watching what it leaves behind."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from autograder import catalogue

from tests.helpers import course, course_env, finish, spawn  # noqa: F401 - the one CLI helper

ROOT = Path(__file__).resolve().parents[2]
#: Repository folders that are not the grader's business (other tools write there).
SNAPSHOT_SKIP = {".venv", "venv", "build", "__pycache__", ".git", ".hypothesis", ".ruff_cache",
                 ".pytest_cache", "node_modules", "site", ".mypy_cache"}


def copy_solutions(dest: Path, topics: list[str] | None = None) -> Path:
    dest.mkdir(parents=True)
    for t in catalogue.topics():
        if topics is None or t.module in topics:
            src = ROOT / "solutions" / t.filename
            if src.exists():
                shutil.copy2(src, dest / t.filename)
    return dest


# ------------------------------------------------------------------ what changed on disk


def snapshot(root: Path, skip: set[str] = frozenset()) -> dict[str, tuple[int, int, int]]:
    """relative path -> (mtime_ns, size, owner uid) of everything under ``root``."""
    out: dict[str, tuple[int, int, int]] = {}
    if not root.exists():
        return out
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in [*dirs, *files]:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            rel = os.path.relpath(p, root)
            # A directory's mtime moves when anything inside changes; its entries speak for it.
            mtime = 0 if os.path.isdir(p) and not os.path.islink(p) else st.st_mtime_ns
            out[rel] = (mtime, st.st_size if mtime else 0, st.st_uid)
    return out


def changed(before: dict, after: dict) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


# ------------------------------------------------------------------ processes


def processes_with(text: str) -> list[int]:
    """Pids whose command line contains ``text``."""
    found = []
    needle = text.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ a network victim


class Listener:
    """TCP and UDP on one loopback port plus an abstract unix socket; records every contact."""

    def __init__(self, abstract: str) -> None:
        self.hits: list[str] = []
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.udp.bind(("127.0.0.1", self.port))
        except OSError:
            self.udp.bind(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + abstract)
        self.unix.listen(8)
        self._stop = False
        self._threads = [threading.Thread(target=self._accept, args=(s, n), daemon=True)
                         for s, n in ((self.tcp, "tcp"), (self.unix, "unix"))]
        self._threads.append(threading.Thread(target=self._datagram, daemon=True))
        for t in self._threads:
            t.start()

    def _accept(self, sock: socket.socket, name: str) -> None:
        sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            self.hits.append(name)
            conn.close()

    def _datagram(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop:
            try:
                self.udp.recv(64)
            except (TimeoutError, OSError):
                continue
            self.hits.append("udp")

    def close(self) -> None:
        self._stop = True
        for t in self._threads:
            t.join(2)
        for s in (self.tcp, self.udp, self.unix):
            s.close()


# ------------------------------------------------------------------ once per test run


def shared_dir(tmp_path_factory, name: str) -> Path:
    """A folder shared by every pytest-xdist worker of this run (or private without xdist)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        d = tmp_path_factory.getbasetemp().parent / f"{name}-{run}"
        d.mkdir(exist_ok=True)
        return d
    return tmp_path_factory.mktemp(name)


def graded_once(tmp_path_factory, name: str, make: Callable[[Path], dict]) -> Path:
    """The ``out`` folder of a class graded once per test run by ``make`` (see :func:`once`),
    which returns ``course grade``'s ``rc`` and ``stderr``; a non-zero rc fails the test."""
    import pytest

    base = shared_dir(tmp_path_factory, name)
    info = once(base, make)
    if info["rc"] != 0:
        pytest.fail(f"course grade failed (rc {info['rc']}):\n{info['stderr']}")
    return base / "out"


def once(folder: Path, make: Callable[[Path], dict]) -> dict:
    """Run ``make(folder)`` once per folder across processes; everyone gets its JSON result."""
    done = folder / "done.json"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            t0 = time.monotonic()
            info = make(folder)
            info["seconds"] = round(time.monotonic() - t0, 1)
            done.write_text(json.dumps(info))
        return json.loads(done.read_text())


# ------------------------------------------------------------------ reading results


def results(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_bytes().decode("utf-8"))
            for p in sorted((out / "results").glob("*.json"))}


def by_exercise(doc: dict) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for t in doc["tests"]:
        groups.setdefault(t["name"].split(": ", 1)[0], []).append(t)
    return groups


def comparable(doc: dict) -> dict:
    """A results document without what may differ between runs (docs/design/interface.md:
    execution_time)."""
    doc = dict(doc)
    doc.pop("execution_time", None)
    return doc
