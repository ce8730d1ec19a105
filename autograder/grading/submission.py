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

import hashlib
import io
import os
import re
import stat
import zipfile
import zlib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder import catalogue

#: The largest topic file we read (a bigger one fails that topic: no zip bomb gets further).
MAX_SOURCE_BYTES = 2 * 2**20
#: At most this many entries (files, folders, anything) are looked at in one submission.
MAX_ENTRIES = 10_000
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
#: Longest id (UTF-8 bytes): results/<id>.json's temp file adds 19 bytes, and names stop at 255.
MAX_ID_BYTES = 200
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

    @property
    def found_any(self) -> bool:
        """Whether any topic had a file (read or not)."""
        return bool(self.sources) or any(t not in self.missing for t in self.problems)


def _nothing_read(loaded: Loaded) -> str | None:
    """Why nothing is gradable, when no topic's source could be read (else None)."""
    if loaded.sources:
        return None
    if not loaded.found_any:
        names = catalogue.topic_modules()
        return (f"no exercise file found (expected {names[0]}.py … {names[-1]}.py)"
                + (f" ({'; '.join(loaded.notes)})" if loaded.notes else ""))
    unread = [p for t, p in loaded.problems.items() if t not in loaded.missing]
    return "no exercise file could be read: " + "; ".join(unread)


def submission_id(path: Path) -> str:
    """A submission's id: a .zip file's stem, else the folder's name (not checked here)."""
    return path.stem if path.suffix.lower() == ".zip" and path.is_file() else path.name


def discover(subs: list[str], class_dir: str | None) -> list[Path]:
    """The submissions named on the command line, plus each direct child of ``class_dir``.

    Children of ``class_dir`` that are symlinks, or neither a folder nor a regular ``.zip``
    file (a fifo, a socket), are skipped; nothing is opened here.

    Raises:
        UsageError: a path that is not a folder or .zip, two submissions with one id, or an id
            that cannot name the output files (hidden, not UTF-8, over ``MAX_ID_BYTES``).
    """
    paths: list[Path] = []
    for s in subs:
        p = Path(s)
        if not (p.is_dir() or (p.is_file() and p.suffix.lower() == ".zip")):
            raise UsageError(f"submission {s!r} is neither a folder nor a .zip file")
        paths.append(p)
    if class_dir is not None:
        c = Path(class_dir)
        if not c.is_dir():
            raise UsageError(f"--class {class_dir!r} is not a folder")
        for child in sorted(c.iterdir()):
            if child.is_symlink():
                continue
            if child.is_dir() or (child.is_file() and child.suffix.lower() == ".zip"):
                paths.append(child)
    seen: dict[str, Path] = {}
    for p in paths:
        sid = submission_id(p)
        if sid in seen:
            raise UsageError(f"two submissions have the id {sid!r}: {seen[sid]} and {p}")
        if not sid or sid.startswith(".") or "/" in sid or "\\" in sid:
            raise UsageError(f"submission id {sid!r} (from {p}) is not a usable name")
        try:
            size = len(sid.encode("utf-8"))
        except UnicodeEncodeError:
            # A name that is not UTF-8 cannot go into grades.csv or a results file as itself.
            raise UsageError(f"submission id {sid!r} (from {p!r}) is not valid UTF-8; "
                             "rename it") from None
        if size > MAX_ID_BYTES:
            # results/<id>.json (and its temp file) could not be created: the batch would stop.
            raise UsageError(f"submission id {_shown(sid, 60)!r} is {size} bytes long; at most "
                             f"{MAX_ID_BYTES} can name its results file: rename it")
        seen[sid] = p
    return paths


def _wanted() -> dict[str, str]:
    """file name -> topic module for every accepted name."""
    names = {}
    for m in catalogue.topic_modules():
        names[f"{m}.py"] = m
        names[f"{m}.ipynb"] = m
    return names


def _shown(name: str, limit: int = 120) -> str:
    """``name`` fit for a message: undecodable bytes as U+FFFD, at most ``limit`` characters."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if len(text) <= limit:
        return text
    head = limit // 3  # the end holds the file's own name: keep more of it
    return text[:head] + "…" + text[len(text) - (limit - head - 1):]


def _describe(exc: BaseException) -> str:
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


def _not_found(topic: str, skipped: dict[str, list[str]], notes: list[str]) -> str:
    why = f"{topic}.py not found in the submission"
    extra = skipped.get(topic, []) + notes
    return why + (f" ({'; '.join(extra)})" if extra else "")


def _choose(candidates: dict[str, list[tuple[int, str, str, str]]],
            loaded: Loaded, read: callable, skipped: dict[str, list[str]] | None = None) -> None:
    """Apply the shallowest-wins / .py-beats-.ipynb / same-depth-conflict rules.

    ``skipped``: per topic, files of its names that were not candidates (a symlink …), which
    its "not found" message quotes.
    """
    for topic in catalogue.topic_modules():
        cands = candidates.get(topic, [])
        if not cands:
            loaded.problems[topic] = _not_found(topic, skipped or {}, loaded.notes)
            loaded.missing.add(topic)
            continue
        depth = min(c[0] for c in cands)
        top = [c for c in cands if c[0] == depth]
        twice = sorted({c[3] for c in top if [d[3] for d in top].count(c[3]) > 1})
        if twice:
            # A zip may hold one name twice; which copy is "the" file would be a guess.
            loaded.problems[topic] = f"{topic}: the archive holds {_shown(twice[0])} twice"
            continue
        folders = {c[1] for c in top}
        if len(folders) > 1:
            both = " and ".join(sorted(_shown(c[3]) for c in top))
            loaded.problems[topic] = f"{topic}: two candidate files at the same depth: {both}"
            continue
        pick = min(top, key=lambda c: c[2] != ".py")
        try:
            raw = read(pick[3])
        except ValueError as exc:
            loaded.problems[topic] = f"{_shown(pick[3])}: {exc}"
            continue
        if pick[2] == ".ipynb":
            try:
                raw = notebook_to_source(raw)
            except ValueError as exc:
                loaded.problems[topic] = f"{_shown(pick[3])}: {exc}"
                continue
        loaded.sources[topic] = raw


def notebook_to_source(raw: bytes) -> bytes:
    """The code cells of a notebook as one Python file; IPython magics become comments.

    Raises:
        ValueError: not a readable notebook.
    """
    import nbformat

    try:
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
        lines = []
        for line in str(cell.get("source", "")).splitlines():
            stripped = line.lstrip()
            lines.append(f"# (magic) {line}" if stripped.startswith(("%", "!")) else line)
        parts.append("\n".join(lines))
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


def _kind(entry: os.DirEntry) -> str:
    """What a listed entry is, from the listing where possible; never follows a symlink."""
    if entry.is_symlink():
        return "a symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    mode = entry.stat(follow_symlinks=False).st_mode
    return ("a fifo" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device file" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file")


class _Tally:
    """What a walk left out, as sorted, deterministic notes (counts, and a first example)."""

    def __init__(self) -> None:
        self.items: dict[str, list[str]] = {}

    def add(self, what: str, name: str) -> None:
        self.items.setdefault(what, []).append(name)

    def notes(self) -> list[str]:
        out = []
        for what, names in sorted(self.items.items()):
            first = _shown(min(names), 80)
            out.append(f"{what}: {first}" + (f" and {len(names) - 1} more" if len(names) > 1
                                              else ""))
        return out


def _read_folder(path: Path, loaded: Loaded) -> None:
    wanted = _wanted()
    candidates: dict[str, list] = {}
    skipped: dict[str, list[str]] = {}
    tally = _Tally()
    examined = 0
    full_stop = False
    # Breadth first, no recursion: the depth cap bounds the queue's paths, not a call stack.
    queue: deque[tuple[str, int]] = deque([("", 0)])
    while queue and not full_stop:
        rel_dir, depth = queue.popleft()
        try:
            with os.scandir(os.path.join(path, rel_dir)) as it:
                entries = []
                for entry in it:
                    if len(entries) == MAX_LISTED:
                        tally.add(f"a folder with over {MAX_LISTED:,} entries was listed in part",
                                  rel_dir or ".")
                        break
                    entries.append(entry)
        except OSError as exc:  # ENAMETOOLONG, EACCES, a folder removed meanwhile …
            tally.add(f"a folder could not be read ({exc.strerror or exc})", rel_dir or ".")
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if examined >= MAX_ENTRIES:
                tally.add(f"only the first {MAX_ENTRIES:,} entries were examined", entry.name
                          if not rel_dir else f"{rel_dir}/{entry.name}")
                full_stop = True
                break
            examined += 1
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                kind = _kind(entry)
            except OSError as exc:
                tally.add(f"could not be examined ({exc.strerror or exc})", rel)
                continue
            if kind == "dir":
                if depth + 1 > MAX_DEPTH:
                    tally.add(f"folders over {MAX_DEPTH} levels deep were not examined", rel)
                else:
                    queue.append((rel, depth + 1))
                continue
            topic = wanted.get(entry.name)
            if kind != "file":
                # Never followed, never opened (a fifo's open would block the grader forever).
                if topic:
                    skipped.setdefault(topic, []).append(f"{_shown(rel)} is {kind}, not read")
                else:
                    tally.add("symlinks, fifos, sockets and devices are not read", rel)
                continue
            if topic:
                candidates.setdefault(topic, []).append(
                    (depth, rel_dir, os.path.splitext(entry.name)[1], rel))
            elif entry.name.lower().endswith(ARCHIVE_SUFFIXES):
                tally.add("archives inside a submission are not opened: put the files "
                          "themselves in it", rel)
    loaded.notes = tally.notes()

    def read(rel: str) -> bytes:
        return read_regular(os.path.join(path, rel), MAX_SOURCE_BYTES)

    _choose(candidates, loaded, read, skipped)


def _read_zip(path: Path, loaded: Loaded) -> None:
    try:
        data = read_regular(path, MAX_ARCHIVE_BYTES, follow=True)
    except ValueError as exc:
        loaded.error = f"{_shown(path.name)}: {exc}"
        return
    # What is graded is this copy: hashing it, not the file, keeps the two the same.
    loaded.sha256 = hashlib.sha256(data).hexdigest()
    fp = io.BytesIO(data)
    try:
        # The table of contents' size, before zipfile makes an object of every entry in it.
        # (_EndRecData is private but has been zipfile's own since Python 2; if it goes, the
        # archive cap above still bounds the work.)
        end = zipfile._EndRecData(fp)
        size_cd = end[zipfile._ECD_SIZE] if end else 0
    except Exception:  # noqa: BLE001 - zipfile itself will say below what is wrong with it
        size_cd = 0
    if size_cd > MAX_ZIP_DIRECTORY_BYTES:
        loaded.error = (f"the archive's table of contents is {size_cd >> 20} MiB (at most "
                        f"{MAX_ZIP_DIRECTORY_BYTES >> 20} MiB is read): zip only your exercise "
                        "files")
        return
    try:
        zf = zipfile.ZipFile(fp)
    except Exception as exc:  # noqa: BLE001 - failing to parse a student's bytes is theirs
        loaded.error = f"not a readable zip archive ({_describe(exc)})"
        return
    wanted = _wanted()
    tally = _Tally()
    skipped: dict[str, list[str]] = {}
    with zf:
        candidates: dict[str, list] = {}
        by_name = {}
        infos = []
        for info in zf.infolist():
            name = info.filename.replace("\\", "/")
            infos.append((name.count("/") - name.endswith("/"), name, info))
        infos.sort(key=lambda t: t[:2])  # shallowest first: the cap keeps the rule's winners
        if len(infos) > MAX_ENTRIES:
            tally.add(f"only the first {MAX_ENTRIES:,} entries were examined",
                      infos[MAX_ENTRIES][1])
        for _, name, info in infos[:MAX_ENTRIES]:
            pure = PurePosixPath(name)
            if (name.startswith("/") or re.match(r"[A-Za-z]:", name)
                    or ".." in pure.parts):
                tally.add("members with an absolute or '..' path were ignored", name)
                continue  # path traversal is ignored, never extracted
            if info.is_dir():
                continue
            encoded = name.encode("utf-8", "surrogateescape")
            if (len(encoded) > MAX_PATH_BYTES
                    or any(len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES
                           for p in pure.parts)):
                tally.add("members whose names are too long for a file system were ignored",
                          name)
                continue
            if len(pure.parts) - 1 > MAX_DEPTH:
                tally.add(f"members over {MAX_DEPTH} folders deep were not examined", name)
                continue
            topic = wanted.get(pure.name)
            mode = (info.external_attr >> 16) & 0o170000
            if mode not in (0, stat.S_IFREG):  # a symlink or device entry: never "followed"
                kind = "a symlink" if mode == stat.S_IFLNK else "not a regular file"
                if topic:
                    skipped.setdefault(topic, []).append(f"{_shown(name)} is {kind}, not read")
                else:
                    tally.add("symlink and device entries are not read", name)
                continue
            if topic:
                parent = pure.parent.as_posix()
                depth = 0 if parent == "." else len(pure.parent.parts)
                candidates.setdefault(topic, []).append((depth, parent, pure.suffix, name))
                by_name[name] = info
            elif pure.name.lower().endswith(ARCHIVE_SUFFIXES):
                tally.add("archives inside a submission are not opened: put the files "
                          "themselves in it", name)
        loaded.notes = tally.notes()

        def read(name: str) -> bytes:
            info = by_name[name]
            if info.flag_bits & 0x1:
                raise ValueError("is encrypted (password-protected): zip it again without a "
                                 "password")
            if info.file_size > MAX_SOURCE_BYTES:
                raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB uncompressed")
            try:
                with zf.open(info) as f:
                    # Bounded whatever the header declares (a zip bomb stops here); the CRC is
                    # checked once the member's end is reached, which a file under the cap does.
                    raw = f.read(MAX_SOURCE_BYTES + 1)
            except Exception as exc:  # noqa: BLE001 - corrupt data: zlib, EOF, CRC, method …
                raise ValueError(f"could not be read from the zip: {_describe(exc)}") from None
            if len(raw) > MAX_SOURCE_BYTES:
                raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB uncompressed")
            return raw

        _choose(candidates, loaded, read, skipped)


def _content_digest(loaded: Loaded) -> str:
    """A folder's hash: of what was read and decided (sources, problems), nothing re-read."""
    h = hashlib.sha256(b"folder-v2\0")
    for topic in sorted({*loaded.sources, *loaded.problems}):
        if topic in loaded.sources:
            h.update(b"S" + topic.encode() + b"\0" + str(len(loaded.sources[topic])).encode()
                     + b"\0" + loaded.sources[topic])
        else:
            h.update(b"P" + topic.encode() + b"\0"
                     + loaded.problems[topic].encode("utf-8", "surrogateescape") + b"\0")
    h.update(b"E" + (loaded.error or "").encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def load(path: Path) -> Loaded:
    """Read a submission's topic files into memory (never running them). Never raises for
    anything in the submission: that becomes ``error`` or one topic's ``problems`` entry."""
    loaded = Loaded(id=submission_id(path), path=path, sha256="")
    folder = path.is_dir()
    try:
        if folder:
            _read_folder(path, loaded)
        else:
            _read_zip(path, loaded)
    except Exception as exc:  # noqa: BLE001 - unforeseen: this submission's, not the batch's
        loaded.sources.clear()
        loaded.problems.clear()
        loaded.missing.clear()
        loaded.error = f"the submission could not be read ({type(exc).__name__}: {str(exc)[:200]})"
    if loaded.error is None:
        loaded.error = _nothing_read(loaded)
    if folder or not loaded.sha256:
        loaded.sha256 = _content_digest(loaded)
    return loaded
