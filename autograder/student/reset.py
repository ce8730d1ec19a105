"""`course reset`: the pristine stub of an exercise, and putting one function (or a whole
topic's file) back to it, the previous file backed up first.

The file reset is the one the grader reads (:func:`target_file`): ``exNN_topic.py``, or, when
the folder has only the notebook ``exNN_topic.ipynb`` (`course notebook`), the notebook, which
:mod:`autograder.student.notebook` resets. A ``.py`` is never created beside a notebook: it would
win over it, and the student's work in the notebook would no longer be graded.

The pristine stub of a topic (for `reset`, and to skip checking a file nobody has touched yet)
comes from, in order: ``solutions/`` through the stub generator (the instructors' repository);
``autograder/pristine/<topic>.py`` (a copy a student release may ship); the version of
``exercises/<topic>.py`` that the course repository's git history added first (a student's
clone of the release).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from autograder import catalogue, paths
from autograder.authoring import stubs


ROOT = paths.ROOT
PRISTINE_DIR = ROOT / "autograder" / "pristine"
BACKUP_DIR = stubs.BACKUP_DIR


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
    stub_raise = re.compile(rf"NotImplementedError\(\s*[\"']{ex.stub_message_start}")
    return "todo" if stub_raise.search(seg) else "written"


# ---------------------------------------------------------------- reset

def write_keeping_mode(path: Path, data: bytes) -> None:
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


def _pristine_or_fail(topic: catalogue.Topic) -> str:
    """The generated stub of ``topic`` (:func:`pristine_stub`).

    Raises:
        ResetError: none is available here.
    """
    stub = pristine_stub(topic.module)
    if stub is None:
        raise ResetError(f"no original stub of {topic.filename} is available here "
                         f"(looked in solutions/, {PRISTINE_DIR} and the git history)")
    return stub


def _created(path: Path, stub: str) -> bool:
    """Write ``stub`` to ``path`` if it is missing (nothing to back up); whether it was."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_keeping_mode(path, stub.encode("utf-8"))
    return True


def target_file(folder: Path, topic: catalogue.Topic) -> Path:
    """The file of ``topic`` in ``folder`` that a reset changes: the ``.py``, unless only the
    notebook is there (then the notebook, which is what the grader reads)."""
    py, nb = folder / topic.filename, folder / f"{topic.module}.ipynb"
    return nb if not py.exists() and nb.is_file() else py


def replace_definition(text: str, name: str, stub: str) -> str | None:
    """``text`` (``\\n`` line ends) with its top-level ``def``/``class`` ``name`` replaced by
    the stub's, the rest unchanged; None when ``text`` does not define ``name``."""
    span, stub_span = _span(text, name), _span(stub, name)
    if span is None or stub_span is None:
        return None
    fresh = [line + "\n" for line in _lines(stub)[stub_span[0]: stub_span[1] + 1]]
    lines = _lines(text, keepends=True)
    new = "".join(lines[: span[0]] + fresh + lines[span[1] + 1:])
    return new if text.endswith("\n") else new.removesuffix("\n")


def _not_beside_a_notebook(folder: Path, topic: catalogue.Topic) -> None:
    """Raises ResetError when ``topic`` lives in a notebook in ``folder``: a ``.py`` written
    beside it would win over it (:mod:`autograder.student.notebook` resets notebooks)."""
    path = target_file(folder, topic)
    if path.suffix == ".ipynb":
        raise ResetError(f"{topic.module} is worked on in {path}: reset it there "
                         "(autograder.student.notebook), never with a .py beside it")


def reset(folder: Path, key: str) -> tuple[catalogue.Exercise, Path | None]:
    """Put exercise ``key``'s ``def``/``class`` back to its generated stub; nothing else in
    the file changes. Returns the exercise and the backup of the previous file (None when the
    file was missing or already held the stub).

    Raises:
        KeyError: unknown exercise (usage).
        ResetError: no pristine stub available, the file cannot be read, or the topic lives
            in a notebook there (:func:`target_file`).
    """
    ex = catalogue.get_exercise(key)
    topic = catalogue.get_topic(ex.topic)
    stub = _pristine_or_fail(topic)
    stub_span = _span(stub, ex.name)
    if stub_span is None:
        raise ResetError(f"the stub of {topic.filename} does not define {ex.name}")
    _not_beside_a_notebook(folder, topic)
    path = folder / topic.filename
    if _created(path, stub):
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
    backup = stubs.backup_copy(path)
    write_keeping_mode(path, new.encode("utf-8"))
    return ex, backup


class Declined(Exception):
    """The student did not confirm a whole-topic reset: nothing changed."""


def reset_topic(folder: Path, key: str,
                confirm: Callable[[catalogue.Topic, Path], bool] = lambda topic, path: True,
                ) -> tuple[catalogue.Topic, Path | None]:
    """Put topic ``key``'s whole file back to its generated stub, the previous file backed up
    first (as :func:`reset` does). ``confirm(topic, path)`` is asked only when an existing
    file would change. Returns the topic and the backup (None when the file was missing or
    already the stub).

    Raises:
        KeyError: unknown topic (usage).
        ResetError: no pristine stub available, the file cannot be read, or the topic lives
            in a notebook there (:func:`target_file`).
        Declined: ``confirm`` said no.
    """
    topic = catalogue.get_topic(key)
    stub = _pristine_or_fail(topic)
    _not_beside_a_notebook(folder, topic)
    path = folder / topic.filename
    if _created(path, stub):
        return topic, None
    try:
        if path.read_bytes() == stub.encode("utf-8"):
            return topic, None
    except OSError as exc:
        raise ResetError(f"cannot read {path}: {exc}") from None
    if not confirm(topic, path):
        raise Declined(f"{path} left as it was")
    backup = stubs.backup_copy(path)
    write_keeping_mode(path, stub.encode("utf-8"))
    return topic, backup



# ---------------------------------------------------------------- undo

#: A backup's name (:func:`autograder.authoring.stubs.backup_copy`): the file's name, the time
#: it was made, and a counter for two in one second.
_BACKUP_NAME = re.compile(r"(?P<file>.+)\.(?P<stamp>\d{8}-\d{6})(?:-(?P<n>\d+))?")


def last_backup(folder: Path, topic: catalogue.Topic | None = None) -> Path | None:
    """The newest backup in ``folder/.backup/`` (of ``topic``'s ``.py`` or notebook only, when
    given), by the time in its name (a copy keeps its source's mtime, so that is no guide);
    None when there is none."""
    names = {f"{topic.module}.py", f"{topic.module}.ipynb"} if topic is not None else None
    found = []
    for p in (folder / BACKUP_DIR).glob("*"):
        m = _BACKUP_NAME.fullmatch(p.name)
        if m and p.is_file() and (names is None or m.group("file") in names):
            found.append((m.group("stamp"), int(m.group("n") or 0), p))
    return max(found)[2] if found else None


def undo(folder: Path, key: str | None = None) -> tuple[Path, Path, Path | None]:
    """`course reset --undo [TOPIC]`: put the newest backup (:func:`last_backup`) back where
    it came from. The file it replaces is backed up first, so an undo is undone the same way.

    Returns:
        (the file restored, the backup it came from, the backup of the file replaced or None
        when there was none).

    Raises:
        KeyError: ``key`` names no topic (usage).
        ResetError: no backup to restore.
    """
    topic = catalogue.get_topic(key) if key else None
    backup = last_backup(folder, topic)
    if backup is None:
        raise ResetError(f"no backup to restore in {folder / BACKUP_DIR}"
                         + (f" for {topic.module}" if topic else ""))
    path = folder / _BACKUP_NAME.fullmatch(backup.name).group("file")
    replaced = stubs.backup_copy(path) if path.exists() else None
    write_keeping_mode(path, backup.read_bytes())
    return path, backup, replaced
