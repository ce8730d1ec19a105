"""The student loop: `course list`, `course watch`, `course reset` and `course submit`.

Everything here works on one exercises folder (``--dir``, default ``./exercises``) and runs the
public checks exactly as `course check` does: through the sandbox, never in this process.

The pristine stub of a topic (for `reset`, and to skip checking a file nobody has touched yet)
comes from, in order: ``solutions/`` through the stub generator (the instructors' repository);
``autograder/pristine/<topic>.py`` (a copy a student release may ship); the version of
``exercises/<topic>.py`` that the course repository's git history added first (a student's
clone of the release).
"""

from __future__ import annotations

import ast
import datetime as dt
import functools
import getpass
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from autograder import __version__, catalogue, paths
from autograder.grading import run as runner
from autograder.authoring import stubs
from autograder.grading import submission
from autograder.cli.console import console
from autograder.grading.run import TestResult

ROOT = paths.ROOT
PRISTINE_DIR = ROOT / "autograder" / "pristine"
BACKUP_DIR = ".backup"
COURSE_NAME = "Linear Algebra for Transformers"
MANIFEST = "manifest.json"
#: Failures shown after each re-check in `course watch` (all of them: `course check TOPIC`).
WATCH_FAILURES = 5


class ResetError(Exception):
    """`course reset` cannot do its job (exit code 1)."""


# ---------------------------------------------------------------- pristine stubs

@functools.cache
def pristine_stub(module: str) -> str | None:
    """The generated stub of a topic, or None when no source for it is available."""
    topic = catalogue.get_topic(module)
    solution = stubs.solution_path(topic)
    if solution.is_file():
        return stubs.make_stub(solution.read_text("utf-8"), topic)
    shipped = PRISTINE_DIR / topic.filename
    if shipped.is_file():
        return shipped.read_text("utf-8")
    return _first_committed(f"exercises/{topic.filename}")


def _first_committed(rel: str) -> str | None:
    """The text ``rel`` had when the repository's history first added it (read-only git)."""
    if not (ROOT / ".git").exists():
        return None
    try:
        log = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H",
                              "--", rel], capture_output=True, text=True, timeout=20, check=False)
        commits = log.stdout.split()
        if log.returncode or not commits:
            return None
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{commits[-1]}:{rel}"],
                               capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return shown.stdout.decode("utf-8") if shown.returncode == 0 else None


# ---------------------------------------------------------------- where an exercise lives

def _lines(text: str, keepends: bool = False) -> list[str]:
    """Lines as the parser numbers them: split at \\n only (str.splitlines would also split
    at form feeds and U+2028 inside strings, and the numbers would no longer match)."""
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", text)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def _span(text: str, name: str) -> tuple[int, int] | None:
    """(first, last) 0-based line numbers of the top-level ``def``/``class`` ``name``:
    decorators and trailing indented lines (comments after the last statement) included.
    The last definition wins, as in Python. None when the file does not define it."""
    lines = _lines(text)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return _span_by_text(lines, name)
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            found = (start, node.end_lineno - 1)
    if found is None:
        return None
    start, end = found
    j = end + 1
    while j < len(lines) and (not lines[j].strip() or lines[j][:1] in " \t"):
        j += 1
    while j - 1 > end and not lines[j - 1].strip():
        j -= 1
    return start, j - 1


def _span_by_text(lines: list[str], name: str) -> tuple[int, int] | None:
    """The same for a file that does not parse (a syntax error elsewhere must not stop a
    reset): from the ``def``/``class`` line (and its decorators) to the stub's end-of-section
    marker if it follows, else to the last indented line before the next top-level line."""
    head = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b")
    starts = [i for i, line in enumerate(lines) if head.match(line)]
    if not starts:
        return None
    start = starts[-1]
    while start > 0 and lines[start - 1].startswith("@"):
        start -= 1
    marker = f"# --8<-- [end:{name}]"
    j = starts[-1] + 1
    while j < len(lines) and lines[j].strip() != marker and (
            not lines[j].strip() or lines[j][:1] in " \t)]}"):
        j += 1
    while j - 1 > starts[-1] and not lines[j - 1].strip():
        j -= 1
    return start, j - 1


def segment(text: str, name: str) -> str | None:
    """The source of the top-level ``def``/``class`` ``name`` in ``text``, or None."""
    span = _span(text, name)
    if span is None:
        return None
    return "\n".join(_lines(text)[span[0]: span[1] + 1])


def exercise_state(text: str | None, ex: catalogue.Exercise) -> str:
    """``no file``, ``missing`` (not defined), ``todo`` (still raises the stub's
    NotImplementedError) or ``written``."""
    if text is None:
        return "no file"
    seg = segment(text, ex.name)
    if seg is None:
        return "missing"
    stub_raise = re.compile(rf"NotImplementedError\(\s*[\"']{re.escape(ex.qualname)}[.:]")
    return "todo" if stub_raise.search(seg) else "written"


# ---------------------------------------------------------------- reset

def _backup(path: Path) -> Path:
    folder = path.parent / BACKUP_DIR
    folder.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    dest = folder / f"{path.name}.{stamp}"
    n = 1
    while dest.exists():
        dest = folder / f"{path.name}.{stamp}-{n}"
        n += 1
    shutil.copy2(path, dest)
    return dest


def _write_keeping_mode(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically (an editor or `course watch` never sees half a file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if path.exists():
            shutil.copymode(path, tmp)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def reset(folder: Path, key: str) -> tuple[catalogue.Exercise, Path | None]:
    """Put exercise ``key``'s ``def``/``class`` back to its generated stub; nothing else in
    the file changes. Returns the exercise and the backup of the previous file (None when the
    file was missing or already held the stub).

    Raises:
        KeyError: unknown exercise (usage).
        ResetError: no pristine stub available, or the file cannot be read.
    """
    ex = catalogue.get_exercise(key)
    topic = catalogue.get_topic(ex.topic)
    stub = pristine_stub(topic.module)
    if stub is None:
        raise ResetError(f"no original stub of {topic.filename} is available here "
                         f"(looked in solutions/, {PRISTINE_DIR} and the git history)")
    stub_span = _span(stub, ex.name)
    if stub_span is None:
        raise ResetError(f"the stub of {topic.filename} does not define {ex.name}")
    path = folder / topic.filename
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _write_keeping_mode(path, stub.encode("utf-8"))
        return ex, None
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResetError(f"cannot read {path}: {exc}") from None
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = _lines(text, keepends=True)
    fresh = [line + eol for line in _lines(stub)[stub_span[0]: stub_span[1] + 1]]
    span = _span(text, ex.name)
    if span is None:  # the student deleted it: append the stub's section at the end
        tail = "" if not lines or lines[-1].endswith(("\n", "\r")) else eol
        new = text + tail + eol + eol + f"# --8<-- [start:{ex.name}]{eol}" + "".join(fresh) \
            + f"# --8<-- [end:{ex.name}]{eol}"
    else:
        new = "".join(lines[: span[0]] + fresh + lines[span[1] + 1:])
    if new == text:
        return ex, None
    backup = _backup(path)
    _write_keeping_mode(path, new.encode("utf-8"))
    return ex, backup


# ---------------------------------------------------------------- running the public checks

def run_public(slot, folder: Path, topics: list[catalogue.Topic],
               skip_untouched: bool = True) -> dict[str, list[TestResult]]:
    """Public test results per topic for the files in ``folder`` (sandboxed, like
    `course check`). A file still byte-identical to its generated stub is not run: every stub
    fails every test (a repository test enforces it), so the answer is known."""
    from autograder.sandbox.session import Session

    loaded = submission.load(folder)
    results: dict[str, list[TestResult]] = {}
    todo = []
    for top in topics:
        specs = runner.collect(top.module, hidden=False)
        stub = pristine_stub(top.module) if skip_untouched else None
        if stub is not None and loaded.sources.get(top.module) == stub.encode("utf-8"):
            results[top.module] = [TestResult(s, False, "not started: still the generated stub")
                                   for s in specs]
        else:
            todo.append((top, specs))
    if not todo:
        return results
    session = Session(slot, loaded.sources) if loaded.sources else None
    try:
        for top, specs in todo:
            rs, _ = runner.run_topic(session, top.module, specs, loaded.problems.get(top.module))
            results[top.module] = rs
    finally:
        if session is not None:
            session.close()
    return results


@dataclass
class Row:
    """One exercise's progress."""

    exercise: catalogue.Exercise
    state: str
    passed: int | None  # None: not checked
    total: int


def progress(folder: Path, topics: list[catalogue.Topic],
             results: dict[str, list[TestResult]]) -> dict[str, list[Row]]:
    """Per topic, per exercise: its state in the file and its public tests passed/total."""
    table: dict[str, list[Row]] = {}
    for top in topics:
        path = folder / top.filename
        try:
            text = path.read_text("utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            text = None
        rs = results.get(top.module)
        specs = [r.spec for r in rs] if rs is not None else runner.collect(top.module,
                                                                           hidden=False)
        rows = []
        for ex in top.exercises:
            total = sum(1 for s in specs if s.exercise == ex.name)
            passed = None if rs is None else sum(r.passed for r in rs
                                                 if r.spec.exercise == ex.name)
            rows.append(Row(ex, exercise_state(text, ex), passed, total))
        table[top.module] = rows
    return table


def _mark(passed: int | None, total: int) -> str:
    if passed is None or total == 0:
        return "[dim]–[/]"
    return "[green]✓[/]" if passed == total else "[red]✗[/]"


def progress_table(table: dict[str, list[Row]], title: str = "Progress (public tests)",
                   exercises: bool | set[str] = True) -> Table:
    """One row per topic, and one per exercise of the topics ``exercises`` names (all: True)."""
    t = Table(title=title)
    t.add_column("topic / exercise")
    t.add_column("points", justify="right")
    t.add_column("code")
    t.add_column("public tests", justify="right")
    t.add_column("")
    state_style = {"written": "green", "todo": "yellow", "missing": "red", "no file": "red"}
    for module, rows in table.items():
        checked = all(r.passed is not None for r in rows)
        passed = sum(r.passed or 0 for r in rows)
        total = sum(r.total for r in rows)
        t.add_row(f"[bold]{module}[/]", str(sum(r.exercise.points for r in rows)), "",
                  f"[bold]{passed}/{total}[/]" if checked else f"?/{total}",
                  _mark(passed if checked else None, total))
        for r in rows if exercises is True or (exercises and module in exercises) else []:
            t.add_row(f"  {r.exercise.name}", str(r.exercise.points),
                      f"[{state_style[r.state]}]{r.state}[/]",
                      f"?/{r.total}" if r.passed is None else f"{r.passed}/{r.total}",
                      _mark(r.passed, r.total))
    return t


def summary_line(table: dict[str, list[Row]]) -> str:
    rows = [r for rs in table.values() for r in rs]
    done = [r for r in rows if r.passed is not None and r.total and r.passed == r.total]
    pts = sum(r.exercise.points for r in done)
    return (f"{len(done)} of {len(rows)} exercises pass all their public tests "
            f"({pts} of {sum(r.exercise.points for r in rows)} points' worth); "
            "hidden tests decide the grade.")


def show_list(folder: Path, topics: list[catalogue.Topic], run: bool = True) -> int:
    """`course list`: the progress table (with ``run``, from the public checks)."""
    results: dict[str, list[TestResult]] = {}
    if run:
        from autograder.sandbox.session import Slot

        with Slot(0) as slot, console.status("running the public checks …"):
            results = run_public(slot, folder, topics)
    table = progress(folder, topics, results)
    console.print(progress_table(table, "Progress (public tests)" if run
                                 else "Exercises (run `course list` without --static to check)"))
    if run:
        console.print(summary_line(table))
    return 0


# ---------------------------------------------------------------- watch

def _failures(results: list[TestResult], limit: int = WATCH_FAILURES) -> None:
    failed = [r for r in results if not r.passed]
    for r in failed[:limit]:
        ex = catalogue.get_topic(r.spec.topic).exercise(r.spec.exercise)
        console.print(f"\n[bold red]✗ {r.spec.name}[/]")
        console.print(f"  {r.message}")
        console.print(f"  [cyan]Hint:[/] {ex.hints[0]}  (more: course hint {ex.qualname} "
                      "--level 2)")
        console.print(f"  [cyan]Lesson:[/] {ex.lesson_link}")
    if len(failed) > limit:
        topic = results[0].spec.topic
        console.print(f"\n… and {len(failed) - limit} more: course check {topic}")


def _changed_topics(changes, folder: Path, topics: list[catalogue.Topic]) -> list[catalogue.Topic]:
    names = {Path(p).name for _, p in changes if Path(p).parent == folder}
    return [t for t in topics if t.filename in names or f"{t.module}.ipynb" in names]


def watch(folder: Path, topics: list[catalogue.Topic], once: bool = False) -> int:
    """`course watch`: check once, then re-check each topic whose file is saved, showing the
    progress table and that topic's first failures. Ctrl-C exits 0; with ``once``, exit after
    the first re-check (0 when that topic passes, 1 otherwise)."""
    import watchfiles

    from autograder.sandbox.session import Slot

    folder = folder.resolve()
    wanted = {t.filename for t in topics} | {f"{t.module}.ipynb" for t in topics}

    def only_topics(change, path: str) -> bool:
        return Path(path).name in wanted

    def stop(signum, frame):  # `kill`, a closed terminal: stop as on Ctrl-C, workers reaped
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, stop)
        except ValueError:  # not the main thread: leave signals alone
            pass
    try:
        with Slot(0) as slot:
            console.print(f"Checking {len(topics)} topic(s) in {folder} …")
            results = run_public(slot, folder, topics)
            console.print(progress_table(progress(folder, topics, results),
                                         exercises=len(topics) == 1))
            console.print(f"Watching {folder} for saved changes; Ctrl-C to quit.", soft_wrap=True)
            for changes in watchfiles.watch(folder, watch_filter=only_topics, recursive=False,
                                            raise_interrupt=False):
                changed = _changed_topics(changes, folder, topics)
                if not changed:
                    continue
                if console.is_terminal:
                    console.clear()
                stamp = time.strftime("%H:%M:%S")
                console.print(f"[{stamp}] re-checking {', '.join(t.filename for t in changed)}",
                              highlight=False, markup=False)
                results.update(run_public(slot, folder, changed))
                table = progress(folder, topics, results)
                console.print(progress_table(table, exercises={t.module for t in changed}))
                for top in changed:
                    rs = results[top.module]
                    if rs and all(r.passed for r in rs):
                        console.print(f"[bold green]✓ {top.module}: all {len(rs)} public tests "
                                      "pass.[/]")
                    _failures(rs)
                console.print(summary_line(table))
                if once:
                    ok = all(r.passed for t in changed for r in results[t.module])
                    return 0 if ok else 1
                console.print(f"Watching {folder}; Ctrl-C to quit.", soft_wrap=True)
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print("Stopped watching.")
    return 0


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
    """``folder/*.py``: regular files only (no symlinks), sorted by name."""
    return sorted(p for p in folder.glob("*.py") if p.is_file() and not p.is_symlink())


def make_zip(folder: Path, out: Path, sid: str,
             checks: dict[str, list[TestResult]] | None = None) -> dict:
    """Write ``out`` (atomically): every ``folder/*.py`` plus ``manifest.json``. Returns the
    manifest. The grader reads the zip like any submission; its id is the zip's stem.

    Raises:
        ValueError: no .py file in ``folder``.
    """
    files = submission_files(folder)
    if not files:
        raise ValueError(f"no .py files in {folder}")
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
                        if t.filename not in {p.name for p in files}],
            "public_checks": None if checks is None else {
                m: {"passed": sum(r.passed for r in rs), "total": len(rs)}
                for m, rs in checks.items()},
        }
        info = zipfile.ZipInfo(MANIFEST, date_time=now.timetuple()[:6])
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_keeping_mode(out, buf.getvalue())
    return manifest


def submit(folder: Path, out: Path, sid: str | None, check: bool = True) -> int:
    """`course submit`: optionally run the public checks, then write the zip."""
    if out.is_dir():
        out = out / "submission.zip"
    if out.suffix.lower() != ".zip":
        console.print(f"course submit: --out must name a .zip file, not {out}")
        return 2
    if not submission_files(folder):
        console.print(f"course submit: no .py files in {folder}")
        return 2
    checks = None
    topics = list(catalogue.topics())
    if check:
        from autograder.sandbox.session import Slot

        with Slot(0) as slot, console.status("running the public checks one last time …"):
            checks = run_public(slot, folder, topics)
        table = progress(folder, topics, checks)
        console.print(progress_table(table, exercises=False))
        console.print(summary_line(table))
    manifest = make_zip(folder, out, student_id(sid), checks)
    console.print(f"Wrote {out} ({len(manifest['files'])} file(s), student id "
                  f"{manifest['student_id']!r}); the grader will know it as {out.stem!r}.",
                  soft_wrap=True)
    if manifest["missing"]:
        console.print("[yellow]Not included (no such file):[/] " + ", ".join(manifest["missing"]))
    return 0
