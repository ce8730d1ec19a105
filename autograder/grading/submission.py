"""Finding and reading submissions (docs/design/interface.md, submissions).

A submission is a folder or a ``.zip``; its id is the folder name or the zip's stem. Inside it,
each topic's file (``ex01_vectors.py`` … or the same stem with ``.ipynb``) is looked for at any
depth: the shallowest wins, ``.py`` beats ``.ipynb`` in the same folder, and two candidates at the
same depth fail that topic with a message naming both. Nothing in a submission is executed here.

An upload may be anything, so reading one never raises: whatever goes wrong becomes that
submission's ``error`` (nothing gradable) or one topic's problem, and the batch goes on.

- Folders are walked iteratively, breadth first (so the shallowest files are seen first), at most
  ``MAX_DEPTH`` folders deep and ``MAX_ENTRIES`` entries in all; what lies beyond is not looked at
  and the "not found" messages say so.
- Only regular files are read. Symlinks are never followed (neither to files nor into folders);
  fifos, sockets and devices are never opened (opening a fifo would block the grader).
- A file is read once, through one descriptor, at most ``MAX_SOURCE_BYTES``; a folder's hash is
  computed from what was read, so a file that changes meanwhile cannot be graded as one thing and
  hashed as another.
- A ``.zip`` is read once into memory (at most ``MAX_ARCHIVE_BYTES``) and hashed; members are read
  from that copy with a size cap and never extracted. Encrypted, corrupt and truncated members
  fail their topic; absolute and ``..`` member paths are ignored; an archive inside the
  submission is not opened (the messages say so).
"""

from __future__ import annotations

import collections
import hashlib
import os
import stat
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from autograder import catalogue
from autograder.grading import ids, magics
from autograder.results.text import printable

#: The largest topic file we read (a bigger one fails that topic: no zip bomb gets further).
MAX_SOURCE_BYTES = 2 * 2**20
#: At most this many entries (files, folders, anything) are looked at in one submission.
MAX_ENTRIES = 10_000
#: How many same-depth candidates a "which one?" message names before "and N more".
QUOTED_CANDIDATES = 3
#: Folders deeper than this below the submission are not looked into.
MAX_DEPTH = 32
#: At most this many names are listed from one folder (each folder's names are sorted, so the
#: entries examined do not depend on the order the file system lists them in).
MAX_LISTED = 100_000
#: The largest .zip read (it is read into memory once, then hashed and opened from there).
MAX_ARCHIVE_BYTES = 256 * 2**20
#: The largest zip table of contents parsed: ``zipfile`` builds an object per entry before we
#: can count them (a 25 MiB directory of empty entries took 3 s and 330 MiB here).
MAX_ZIP_DIRECTORY_BYTES = 8 * 2**20
#: Longest id (UTF-8 bytes): see :mod:`autograder.grading.ids`.
MAX_ID_BYTES = ids.MAX_ID_BYTES
#: Member names no file system could hold (PATH_MAX, NAME_MAX) are ignored, as in a folder.
MAX_PATH_BYTES, MAX_NAME_BYTES = 4096, 255
#: Archives inside a submission are not opened (names ending so get a note).
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".rar")


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


@dataclass
class Loaded:
    """A submission read into memory: per topic, Python source or why there is none."""

    id: str
    path: Path
    sha256: str
    sources: dict[str, bytes] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # topic -> why it cannot run
    error: str | None = None  # nothing gradable at all
    #: What was not looked at or not read (depth cap, symlinks, an inner archive …), sorted;
    #: quoted by the "not found" messages, where it may be the reason.
    notes: list[str] = field(default_factory=list)
    missing: set[str] = field(default_factory=set)  # topics with no file at all
    #: Per topic whose chosen file is a notebook that was read, the SHA-256 of its JSON: a
    #: folder's digest counts the notebook by it, converted or not.
    notebook_digests: dict[str, str] = field(default_factory=dict)
    #: Topics whose ``sources`` entry is still a notebook's JSON (``load(..., notebooks=False)``):
    #: such a Loaded serves bookkeeping (id, digest, topics handed in), never a worker.
    unconverted: set[str] = field(default_factory=set)

    @property
    def found_any(self) -> bool:
        """Whether any topic had a file (read or not)."""
        return bool(self.sources) or any(t not in self.missing for t in self.problems)


#: A submission's id: a .zip file's stem, else the folder's name (:mod:`autograder.grading.ids`).
submission_id = ids.submission_id


def discover(subs: list[str], class_dir: str | None) -> list[Path]:
    """The submissions named on the command line, plus each direct child of ``class_dir``.

    Children of ``class_dir`` that are symlinks, hidden (a leading dot: ``.git``,
    ``.ipynb_checkpoints``), or neither a folder nor a regular ``.zip`` file (a fifo, a socket)
    are skipped; nothing is opened here. A child whose name cannot be an id, or whose id
    another child shares (``dup.zip`` beside ``dup.ZIP``), is returned all the same: it is
    graded as an ``error`` result under its derived id (:func:`ids.identify`, read again by
    :func:`autograder.grading.uploads.load`), and the rest of the class is graded.

    Raises:
        UsageError: a path typed on the command line that does not exist, is not a folder or
            .zip, has an id that cannot name the output files (hidden, not UTF-8, over
            ``MAX_ID_BYTES``, or holding a control character, which a terminal printing the
            grade table would obey) or shares its id with another upload of its folder; or two
            submissions that end up with one id (the same path typed twice, or typed and in
            ``--class``). Each message shows the names with their control characters escaped.
    """
    paths: list[Path] = []
    for s in subs:
        p = Path(s)
        if not p.exists() and not p.is_symlink():  # a typo: say that, not "not a .zip"
            raise UsageError(f"submission '{printable(shown(s, 200))}' does not exist")
        if not (p.is_dir() or (p.is_file() and p.suffix.lower() == ".zip")):
            raise UsageError(f"submission '{printable(shown(s, 200))}' is neither a folder nor a .zip file")
        # Typed by the instructor, who can rename it now: a usage error, not a result.
        where = printable(shown(s, 200))
        sid = submission_id(p)
        why = ids.unusable(sid)
        if why is not None:
            raise UsageError(f"submission id '{printable(shown(sid, 200))}' (from {where}) "
                             f"{why}: rename it")
        if ids.identify(p)[1] is not None:
            raise UsageError(f"submission id '{printable(sid)}' (from {where}) is also the id "
                             f"of {', '.join(ids.duplicates(p))} in the same folder: rename "
                             "one of them")
        paths.append(p)
    if class_dir is not None:
        c = Path(class_dir)
        if not c.is_dir():
            raise UsageError(f"--class '{printable(shown(class_dir, 200))}' is not a folder")
        with os.scandir(c) as it:
            children = sorted((e for e in it if ids.is_listed_upload(e)), key=lambda e: e.name)
        paths.extend(c / e.name for e in children)
    seen: dict[str, Path] = {}
    for p in paths:
        sid = ids.identify(p)[0]
        if sid in seen:
            # The same upload twice, or a name equal to another upload's derived id.
            raise UsageError(f"two submissions have the id '{printable(sid)}': "
                             f"{printable(shown(str(seen[sid]), 200))} and "
                             f"{printable(shown(str(p), 200))}")
        seen[sid] = p
    return paths


def topic_file_names() -> dict[str, str]:
    """file name -> topic module for every accepted name."""
    names = {}
    for m in catalogue.topic_modules():
        names[f"{m}.py"] = m
        names[f"{m}.ipynb"] = m
    return names


def shown(name: str, limit: int = 120) -> str:
    """``name`` fit for a message: undecodable bytes as U+FFFD, at most ``limit`` characters."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if len(text) <= limit:
        return text
    head = limit // 3  # the end holds the file's own name: keep more of it
    return text[:head] + "…" + text[len(text) - (limit - head - 1):]


def describe(exc: BaseException) -> str:
    """A short, plain account of why an archive or member could not be read."""
    if isinstance(exc, zlib.error):
        return "its compressed data is corrupt"
    if isinstance(exc, EOFError):
        return "its data stops short (the archive is truncated)"
    if isinstance(exc, zipfile.BadZipFile) and "CRC" in str(exc):
        return "its checksum (CRC-32) does not match: the file is corrupt"
    if isinstance(exc, zipfile.BadZipFile) and str(exc) == "File is not a zip file":
        return "no zip table of contents at its end: it is truncated, or not a zip"
    if isinstance(exc, UnicodeDecodeError):
        return "a member's name is marked as UTF-8 but is not valid UTF-8"
    if isinstance(exc, NotImplementedError):
        return f"it uses a zip feature this grader cannot read ({exc})"
    text = str(exc)
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def not_found_head(topic: str) -> str:
    """How the message of a topic with no file starts (`course check` words it for a folder)."""
    return f"{topic}.py not found in the submission"


def _not_found(topic: str, skipped: dict[str, list[str]], notes: list[str]) -> str:
    why = not_found_head(topic)
    extra = skipped.get(topic, []) + notes
    return why + (f" ({'; '.join(extra)})" if extra else "")


def choose(candidates: dict[str, list[tuple[int, str, str, str]]],
            loaded: Loaded, read: callable, skipped: dict[str, list[str]] | None = None,
            notebooks: bool = True) -> None:
    """Apply the shallowest-wins / .py-beats-.ipynb / same-depth-conflict rules.

    ``skipped``: per topic, files of its names that were not candidates (a symlink …), which
    its "not found" message quotes. ``notebooks=False`` leaves a chosen notebook's JSON
    unconverted (see :attr:`Loaded.unconverted`).
    """
    for topic in catalogue.topic_modules():
        cands = candidates.get(topic, [])
        if not cands:
            loaded.problems[topic] = _not_found(topic, skipped or {}, loaded.notes)
            loaded.missing.add(topic)
            continue
        depth = min(c[0] for c in cands)
        top = [c for c in cands if c[0] == depth]
        # Counted once each (red team: 10,000 candidates at one depth made a quadratic count
        # cost seconds per load, and a message quoting all of them 11 MB of results).
        counts = collections.Counter(c[3] for c in top)
        twice = sorted(name for name, n in counts.items() if n > 1)
        if twice:
            # A zip may hold one name twice; which copy is "the" file would be a guess.
            loaded.problems[topic] = f"{topic}: the archive holds {shown(twice[0])} twice"
            continue
        folders = {c[1] for c in top}
        if len(folders) > 1:
            names = sorted(shown(c[3]) for c in top)
            both = (" and ".join(names) if len(names) <= QUOTED_CANDIDATES else
                    ", ".join(names[:QUOTED_CANDIDATES])
                    + f" and {len(names) - QUOTED_CANDIDATES:,} more")
            loaded.problems[topic] = (f"{topic}: {len(names):,} candidate files at the same "
                                      f"depth: {both}" if len(names) > 2 else
                                      f"{topic}: two candidate files at the same depth: {both}")
            continue
        pick = min(top, key=lambda c: c[2] != ".py")
        try:
            raw = read(pick[3])
        except ValueError as exc:
            loaded.problems[topic] = f"{shown(pick[3])}: {exc}"
            continue
        if pick[2] == ".ipynb":
            loaded.notebook_digests[topic] = hashlib.sha256(raw).hexdigest()
            if not notebooks:
                loaded.unconverted.add(topic)
            else:
                try:
                    raw = notebook_to_source(raw)
                except ValueError as exc:
                    loaded.problems[topic] = f"{shown(pick[3])}: {exc}"
                    continue
        loaded.sources[topic] = raw


def notebook_to_source(raw: bytes) -> bytes:
    """The code cells of a notebook as one Python file; IPython magics become comments.

    Raises:
        ValueError: not a readable notebook.
    """
    import nbformat

    try:
        with warnings.catch_warnings():
            # nbformat warns once per cell it mends (a missing or repeated id): a notebook of
            # 30,000 such cells printed 60,000 lines on the grader's (or student's) terminal.
            warnings.simplefilter("ignore")
            nb = nbformat.reads(raw.decode("utf-8-sig"), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for a malformed file
        raise ValueError(f"not a readable notebook ({type(exc).__name__})") from None
    parts = []
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            continue  # an nbgrader test cell (`course nbgrader`): the course's tests, not code
        parts.append("\n".join(magics.without_magics(str(cell.get("source", "")).splitlines())))
    return ("\n\n".join(parts) + "\n").encode("utf-8")


def read_regular(path: str | os.PathLike, limit: int, follow: bool = False) -> bytes:
    """Read a regular file once, through one descriptor, at most ``limit`` bytes.

    The file is opened without following a final symlink (unless ``follow``) and without
    blocking (a fifo swapped in since it was listed cannot hang the grader), then checked with
    ``fstat``; it is read to its end, not to the size a stat saw, so a file that grows or
    shrinks meanwhile gives exactly the bytes read, or the size error.

    Raises:
        ValueError: it cannot be opened, is not a regular file, or holds over ``limit`` bytes.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ValueError(f"could not be opened ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file: not read")
        too_big = f"larger than {limit >> 20} MiB" if limit >= 2**20 else f"over {limit} bytes"
        if st.st_size > limit:
            raise ValueError(too_big)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"{too_big} (it grew while being read)")
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"could not be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
