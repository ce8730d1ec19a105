"""Submission ids: the name an upload is graded under (docs/design/interface.md, submissions).

An upload's id is its folder's name or its zip's stem. Upload names come from students (an
LMS export keeps them), so an id may be unusable (a control character, not UTF-8, hidden, too
long for a file name) or shared by two uploads of one folder (``dup.zip`` beside ``dup.ZIP``,
or beside a folder ``dup``). Such an upload gets a **derived id** instead: its whole name made
safe, then ``-`` and eight hex digits of the SHA-256 of the name's bytes. The hash keeps two
derived ids apart even where the safe forms are equal, and it depends on the name alone, so
every process that looks at the upload (the batch's, each slot's) and every re-run of the
batch derives the same id. What :func:`identify` says is wrong with the name becomes the
upload's ``error`` result in a ``--class`` batch; for a path typed on the command line it is a
usage error (:func:`autograder.grading.submission.discover`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from autograder.results.text import printable

#: Longest id (UTF-8 bytes): results/<id>.json's temp file adds 19 bytes, and names stop at 255.
MAX_ID_BYTES = 200
#: The longest safe form of a name kept in a derived id (the hash and ``-`` add 9 bytes).
_DERIVED_NAME_BYTES = 120
#: How many uploads sharing an id a message names.
_QUOTED = 3


def submission_id(path: Path) -> str:
    """A submission's id: a .zip file's stem, else the folder's name (not checked here)."""
    return path.stem if path.suffix.lower() == ".zip" and path.is_file() else path.name


def _shown(name: str, limit: int = 200) -> str:
    """``name`` for a message: undecodable bytes as U+FFFD, control characters escaped, at
    most ``limit`` characters."""
    text = printable(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unusable(sid: str) -> str | None:
    """Why ``sid`` cannot name a submission's output files, or None when it can.

    An id must be UTF-8, not empty, not start with a dot (a hidden file), hold no slash,
    backslash or control character (Unicode category C: a terminal printing the grade table
    would obey it, red team 2), and be at most ``MAX_ID_BYTES`` bytes long.
    """
    try:
        size = len(sid.encode("utf-8"))
    except UnicodeEncodeError:  # a surrogate-escaped byte: the name is not UTF-8
        return "is not valid UTF-8"
    if not sid or sid.startswith(".") or "/" in sid or "\\" in sid or printable(sid) != sid:
        return ("is not a usable name (no leading dot, slash, backslash or control "
                "character)")
    if size > MAX_ID_BYTES:
        return f"is {size} bytes long; at most {MAX_ID_BYTES} can name its results file"
    return None


def derived_id(name: str) -> str:
    """The safe, deterministic id of an upload named ``name`` (its whole file name).

    Each character that :func:`unusable` refuses becomes ``_``, leading dots are dropped, the
    result is cut to ``_DERIVED_NAME_BYTES`` bytes, and ``-`` plus the first eight hex digits
    of the SHA-256 of the name's bytes (``os.fsencode``) follow. The result always passes
    :func:`unusable`.
    """
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    safe = "".join("_" if c in "/\\" or printable(c) != c else c for c in text).lstrip(".")
    safe = safe.encode("utf-8")[:_DERIVED_NAME_BYTES].decode("utf-8", "ignore") or "upload"
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:8]
    return f"{safe}-{digest}"


def is_listed_upload(entry: os.DirEntry) -> bool:
    """Whether a folder's entry is graded as an upload by ``--class``: not hidden, not a
    symlink, and a folder or a regular ``.zip`` file (never follows a link, never opens)."""
    try:
        if entry.name.startswith(".") or entry.is_symlink():
            return False
        if entry.is_dir(follow_symlinks=False):
            return True
        return entry.name.lower().endswith(".zip") and stat.S_ISREG(
            entry.stat(follow_symlinks=False).st_mode)
    except OSError:  # removed since it was listed: not an upload
        return False


def _base_id(name: str, folder: bool) -> str:
    return name if folder or not name.lower().endswith(".zip") else name[:-4]


_listings: dict[tuple[str, int, int], dict[str, list[str]]] = {}


def _ids_of_folder(parent: Path) -> dict[str, list[str]]:
    """Base id -> the names of the uploads in ``parent`` that have it (sorted).

    Cached per folder and its modification time: a batch asks once per upload, in each of its
    processes, and a class of thousands would otherwise be listed thousands of times.
    """
    try:
        st = os.stat(parent)
    except OSError:
        return {}
    key = (os.fspath(parent), st.st_ino, st.st_mtime_ns)
    if key not in _listings:
        ids: dict[str, list[str]] = {}
        try:
            with os.scandir(parent) as it:
                for entry in it:
                    if is_listed_upload(entry):
                        ids.setdefault(_base_id(entry.name, entry.is_dir(
                            follow_symlinks=False)), []).append(entry.name)
        except OSError:
            pass
        _listings.clear()  # one folder at a time: a batch reads one class
        _listings[key] = {k: sorted(v) for k, v in ids.items()}
    return _listings[key]


def identify(path: Path) -> tuple[str, str | None]:
    """``(id, problem)`` of the upload at ``path``: its id, and None; or, where its name is
    unusable (:func:`unusable`) or another upload of its folder has the same id, its
    :func:`derived_id` and a one-line account of why, fit for the student's feedback (it names
    this upload only, never another student's).

    Never raises (a folder that cannot be listed has no duplicates to find).
    """
    sid = submission_id(path)
    why = unusable(sid)
    if why is not None:
        return derived_id(path.name), (f"the upload's name '{_shown(path.name)}' {why}: it is "
                                       "listed under a derived id; rename it and grade it again")
    if path.is_symlink():  # typed on the command line: a link is not one of its folder's uploads
        return sid, None
    same = [n for n in _ids_of_folder(path.parent).get(sid, []) if n != path.name]
    if not same:
        return sid, None
    return derived_id(path.name), (
        f"{len(same) + 1} uploads map to the id '{sid}' (this one is '{_shown(path.name)}'): "
        "none of them is graded under it; rename them apart and grade them again")


def duplicates(path: Path) -> list[str]:
    """The names of the other uploads in ``path``'s folder with ``path``'s id, sorted (for a
    usage error's message, which the instructor alone reads)."""
    sid = submission_id(path)
    names = [n for n in _ids_of_folder(path.parent).get(sid, []) if n != path.name]
    shown = [_shown(n) for n in names[:_QUOTED]]
    return shown + ([f"{len(names) - _QUOTED} more"] if len(names) > _QUOTED else [])
