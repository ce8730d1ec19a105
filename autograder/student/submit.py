"""`course submit`: zip an exercises folder with a manifest, ready to hand in."""

from __future__ import annotations

import datetime as dt
import getpass
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

from rich.markup import escape

from autograder import __version__, catalogue
from autograder.console import console
from autograder.grading.runner import TestResult
from autograder.student.progress import (progress, progress_table, run_public, summary_line,
                                         warn_shadowed)
from autograder.student.reset import write_keeping_mode


COURSE_NAME = "Linear Algebra for Transformers"
MANIFEST = "manifest.json"


# ---------------------------------------------------------------- submit

def student_id(given: str | None) -> str:
    if given and given.strip():
        return given.strip()
    for var in ("USER", "LOGNAME", "USERNAME"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def submission_files(folder: Path) -> list[Path]:
    """``folder/*.py``, plus each topic's notebook (``exNN_topic.ipynb``) that has no ``.py``
    beside it: what the grader reads of the folder (a ``.py`` wins over its notebook).
    Regular files only (no symlinks), sorted by name."""
    names = {p.name for p in folder.glob("*.py")}
    notebooks = [folder / f"{t.module}.ipynb" for t in catalogue.topics()
                 if t.filename not in names]
    return sorted((p for p in [*folder.glob("*.py"), *notebooks]
                   if p.is_file() and not p.is_symlink()), key=lambda p: p.name)


def _nothing_to_hand_in(folder: Path) -> str:
    return (f"no .py files and no exercise notebooks (such as ex01_vectors.ipynb) in {folder}: "
            "nothing to hand in")


def make_zip(folder: Path, out: Path, sid: str,
             checks: dict[str, list[TestResult]] | None = None) -> dict:
    """Write ``out`` (atomically): :func:`submission_files` plus ``manifest.json``. Returns the
    manifest. The grader reads the zip like any submission; its id is the zip's stem.

    Raises:
        ValueError: no .py file and no exercise notebook in ``folder``.
    """
    files = submission_files(folder)
    if not files:
        raise ValueError(_nothing_to_hand_in(folder))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    entries = []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in files:
            data = p.read_bytes()
            entries.append({"name": p.name, "sha256": hashlib.sha256(data).hexdigest(),
                            "bytes": len(data)})
            info = zipfile.ZipInfo(p.name, date_time=now.timetuple()[:6])
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
        manifest = {
            "course": COURSE_NAME,
            "course_version": __version__,
            "student_id": sid,
            "created": now.isoformat().replace("+00:00", "Z"),
            "files": entries,
            "missing": [t.filename for t in catalogue.topics()
                        if not {t.filename, f"{t.module}.ipynb"} & {p.name for p in files}],
            "public_checks": None if checks is None else {
                m: {"passed": sum(r.passed for r in rs), "total": len(rs)}
                for m, rs in checks.items()},
        }
        info = zipfile.ZipInfo(MANIFEST, date_time=now.timetuple()[:6])
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_keeping_mode(out, buf.getvalue())
    return manifest


def submit(folder: Path, out: Path, sid: str | None, check: bool = True) -> int:
    """`course submit`: optionally run the public checks, then write the zip."""
    if out.is_dir():
        out = out / "submission.zip"
    if out.suffix.lower() != ".zip":
        console.print(f"course submit: --out must name a .zip file, not {out}")
        return 2
    if not submission_files(folder):
        console.print(f"course submit: {escape(_nothing_to_hand_in(folder))}", soft_wrap=True)
        return 2
    checks = None
    topics = list(catalogue.topics())
    warn_shadowed("submit", folder, topics)
    if check:
        from autograder.driver.slot import Slot

        with Slot(0) as slot, console.status("running the public checks one last time …"):
            checks = run_public(slot, folder, topics)
        table = progress(folder, topics, checks)
        console.print(progress_table(table, exercises=False))
        console.print(summary_line(table))
    manifest = make_zip(folder, out, student_id(sid), checks)
    # which folder was zipped: run outside the course, `course submit` finds its exercises/
    # on its own, and the student should see that it is the one they worked in
    console.print(f"Wrote {escape(str(out))} ({len(manifest['files'])} file(s) of "
                  f"{escape(str(folder.resolve()))}, student id "
                  f"{manifest['student_id']!r}); the grader will know it as {out.stem!r}.",
                  soft_wrap=True)
    if manifest["missing"]:
        console.print("[yellow]Not included (no .py or .ipynb file):[/] "
                      + ", ".join(manifest["missing"]))
    return 0
