"""Reading one upload into memory: a folder walked breadth first, or a .zip read once.

The rules these readers follow (caps, no symlinks, no special files, one descriptor per file)
are :mod:`autograder.grading.submission`'s; this module only walks and reads. :func:`load` is
the one entry point: it never raises for anything inside a submission.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile
from collections import deque
from pathlib import Path, PurePosixPath

from autograder import catalogue
from autograder.grading import ids
from autograder.grading.submission import (
    ARCHIVE_SUFFIXES, MAX_ARCHIVE_BYTES, MAX_DEPTH, MAX_ENTRIES, MAX_LISTED, MAX_SOURCE_BYTES,
    MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_ZIP_DIRECTORY_BYTES, Loaded, choose, describe, read_regular,
    shown, topic_file_names)


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
            first = shown(min(names), 80)
            out.append(f"{what}: {first}" + (f" and {len(names) - 1} more" if len(names) > 1
                                              else ""))
        return out


def _read_folder(path: Path, loaded: Loaded, notebooks: bool) -> None:
    wanted = topic_file_names()
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
                    skipped.setdefault(topic, []).append(f"{shown(rel)} is {kind}, not read")
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

    choose(candidates, loaded, read, skipped, notebooks)


def _read_zip(path: Path, loaded: Loaded, notebooks: bool) -> None:
    try:
        data = read_regular(path, MAX_ARCHIVE_BYTES, follow=True)
    except ValueError as exc:
        loaded.error = f"{shown(path.name)}: {exc}"
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
        loaded.error = f"not a readable zip archive ({describe(exc)})"
        return
    wanted = topic_file_names()
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
                    skipped.setdefault(topic, []).append(f"{shown(name)} is {kind}, not read")
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
                raise ValueError(f"could not be read from the zip: {describe(exc)}") from None
            if len(raw) > MAX_SOURCE_BYTES:
                raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB uncompressed")
            return raw

        choose(candidates, loaded, read, skipped, notebooks)


def _content_digest(loaded: Loaded) -> str:
    """A folder's hash: of what was read and decided (sources, problems), nothing re-read.

    A notebook counts by its JSON's hash, so the digest is the same whether or not it was
    converted (the Python made of it, or why none could be, follows from those bytes).
    """
    h = hashlib.sha256(b"folder-v2\0")
    for topic in sorted({*loaded.sources, *loaded.problems}):
        if topic in loaded.notebook_digests:
            h.update(b"N" + topic.encode() + b"\0" + loaded.notebook_digests[topic].encode())
        elif topic in loaded.sources:
            h.update(b"S" + topic.encode() + b"\0" + str(len(loaded.sources[topic])).encode()
                     + b"\0" + loaded.sources[topic])
        else:
            h.update(b"P" + topic.encode() + b"\0"
                     + loaded.problems[topic].encode("utf-8", "surrogateescape") + b"\0")
    if not loaded.notebook_digests:
        # With a notebook read, ``error`` follows from what is hashed above ("no exercise file
        # could be read" quotes the problems), and unconverted it would read None.
        h.update(b"E" + (loaded.error or "").encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def load(path: Path, *, notebooks: bool = True, named: bool = True) -> Loaded:
    """Read a submission's topic files into memory (never running them). Never raises for
    anything in the submission: that becomes ``error`` or one topic's ``problems`` entry.

    ``notebooks=False`` skips turning notebooks into Python (up to a second for a 2 MiB
    notebook): the id and ``sha256`` are the same, but the sources of the topics in
    ``unconverted`` are JSON (a notebook that would not convert counts as handed in, and
    ``error`` does not say that none converted). The batch's own process reads submissions
    that way to decide what to grade; the slot that grades one reads it in full.

    An upload whose name cannot be an id, or whose id another upload of its folder shares,
    is not read: its id is the derived one and ``error`` says why (:func:`ids.identify`).
    ``named=False`` skips those rules (the id is the plain name): for a folder whose id names
    no output, a student's own ``exercises/`` in `course check`, say, beside which an
    ``exercises.zip`` is no rival upload.
    """
    sid, unusable_name = ids.identify(path) if named else (ids.submission_id(path), None)
    loaded = Loaded(id=sid, path=path, sha256="")
    folder = path.is_dir()
    try:
        if unusable_name is not None:
            # Nothing of it is read: under a derived id, it is only listed, as an error.
            loaded.error = unusable_name
        elif folder:
            _read_folder(path, loaded, notebooks)
        else:
            _read_zip(path, loaded, notebooks)
    except Exception as exc:  # noqa: BLE001 - unforeseen: this submission's, not the batch's
        loaded.sources.clear()
        loaded.problems.clear()
        loaded.missing.clear()
        loaded.notebook_digests.clear()
        loaded.unconverted.clear()
        loaded.error = f"the submission could not be read ({type(exc).__name__}: {str(exc)[:200]})"
    if loaded.error is None:
        loaded.error = _nothing_read(loaded)
    if folder or not loaded.sha256:
        loaded.sha256 = _content_digest(loaded)
    return loaded
