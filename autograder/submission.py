"""Finding and reading submissions (INTERFACE.md, submission rules).

A submission is a folder or a ``.zip``; its id is the folder name or the zip's stem. Inside it,
each topic's file (``ex01_vectors.py`` … or the same stem with ``.ipynb``) is looked for at any
depth: the shallowest wins, ``.py`` beats ``.ipynb`` in the same folder, and two candidates at the
same depth fail that topic with a message naming both. Nothing in a submission is executed here;
symlinks are never followed, zip members are read with a size cap and never extracted.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder import catalogue

#: The largest topic file we read (a bigger one fails that topic: no zip bomb gets further).
MAX_SOURCE_BYTES = 2 * 2**20
#: At most this many entries are looked at in one submission.
MAX_ENTRIES = 10_000


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

    @property
    def found_any(self) -> bool:
        return bool(self.sources) or any("not found" not in p for p in self.problems.values())


def submission_id(path: Path) -> str:
    return path.stem if path.suffix.lower() == ".zip" and path.is_file() else path.name


def discover(subs: list[str], class_dir: str | None) -> list[Path]:
    """The submissions named on the command line, plus each direct child of ``class_dir``.

    Raises:
        UsageError: a path that is not a folder or .zip, or two submissions with one id.
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
            sid.encode("utf-8")
        except UnicodeEncodeError:
            # A name that is not UTF-8 cannot go into grades.csv or a results file as itself.
            raise UsageError(f"submission id {sid!r} (from {p!r}) is not valid UTF-8; "
                             "rename it") from None
        seen[sid] = p
    return paths


def _wanted() -> dict[str, str]:
    """file name -> topic module for every accepted name."""
    names = {}
    for m in catalogue.topic_modules():
        names[f"{m}.py"] = m
        names[f"{m}.ipynb"] = m
    return names


def _choose(candidates: dict[str, list[tuple[int, str, str, str]]],
            loaded: Loaded, read: callable) -> None:
    """Apply the shallowest-wins / .py-beats-.ipynb / same-depth-conflict rules."""
    for topic in catalogue.topic_modules():
        cands = candidates.get(topic, [])
        if not cands:
            loaded.problems[topic] = f"{topic}.py not found in the submission"
            continue
        depth = min(c[0] for c in cands)
        top = [c for c in cands if c[0] == depth]
        twice = sorted({c[3] for c in top if [d[3] for d in top].count(c[3]) > 1})
        if twice:
            # A zip may hold one name twice; which copy is "the" file would be a guess.
            loaded.problems[topic] = f"{topic}: the archive holds {twice[0]} twice"
            continue
        folders = {c[1] for c in top}
        if len(folders) > 1:
            both = " and ".join(sorted(c[3] for c in top))
            loaded.problems[topic] = f"{topic}: two candidate files at the same depth: {both}"
            continue
        pick = sorted(top, key=lambda c: c[2] != ".py")[0]
        try:
            raw = read(pick[3])
        except ValueError as exc:
            loaded.problems[topic] = f"{pick[3]}: {exc}"
            continue
        if pick[2] == ".ipynb":
            try:
                raw = notebook_to_source(raw)
            except ValueError as exc:
                loaded.problems[topic] = f"{pick[3]}: {exc}"
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
    except Exception as exc:  # nbformat raises many kinds for a malformed file
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


def _read_folder(path: Path, loaded: Loaded) -> None:
    wanted = _wanted()
    candidates: dict[str, list] = {}
    digest = hashlib.sha256()
    count = 0
    for root, dirs, files in os.walk(path, followlinks=False):
        dirs.sort()
        rel_root = Path(root).relative_to(path)
        for name in sorted(files):
            count += 1
            if count > MAX_ENTRIES:
                break
            full = Path(root, name)
            st = full.lstat()
            if not stat.S_ISREG(st.st_mode):
                continue  # symlinks and devices are never read
            rel = (rel_root / name).as_posix()
            digest.update(rel.encode() + b"\0" + str(st.st_size).encode() + b"\0")
            if st.st_size <= MAX_SOURCE_BYTES:
                digest.update(full.read_bytes())
            topic = wanted.get(name)
            if topic:
                depth = len(rel_root.parts)
                candidates.setdefault(topic, []).append(
                    (depth, rel_root.as_posix(), Path(name).suffix, rel))
    loaded.sha256 = digest.hexdigest()

    def read(rel: str) -> bytes:
        full = path / rel
        if full.lstat().st_size > MAX_SOURCE_BYTES:
            raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB")
        return full.read_bytes()

    _choose(candidates, loaded, read)


def _read_zip(path: Path, loaded: Loaded) -> None:
    loaded.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    wanted = _wanted()
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        loaded.error = f"not a readable zip archive ({exc})"
        return
    with zf:
        candidates: dict[str, list] = {}
        infos = zf.infolist()[:MAX_ENTRIES]
        by_name = {}
        for info in infos:
            name = info.filename.replace("\\", "/")
            pure = PurePosixPath(name)
            if info.is_dir() or name.startswith("/") or ".." in pure.parts:
                continue  # path traversal is ignored, never extracted
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                continue  # a symlink entry
            topic = wanted.get(pure.name)
            if topic:
                parent = pure.parent.as_posix()
                depth = 0 if parent == "." else len(pure.parent.parts)
                candidates.setdefault(topic, []).append((depth, parent, pure.suffix, name))
                by_name[name] = info

        def read(name: str) -> bytes:
            info = by_name[name]
            if info.file_size > MAX_SOURCE_BYTES:
                raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB uncompressed")
            try:
                with zf.open(info) as f:
                    data = f.read(MAX_SOURCE_BYTES + 1)
            except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
                raise ValueError(f"could not be read from the zip ({exc})") from None
            if len(data) > MAX_SOURCE_BYTES:
                raise ValueError(f"larger than {MAX_SOURCE_BYTES >> 20} MiB uncompressed")
            return data

        _choose(candidates, loaded, read)


def load(path: Path) -> Loaded:
    """Read a submission's topic files into memory (never running them)."""
    loaded = Loaded(id=submission_id(path), path=path, sha256="")
    if path.is_dir():
        _read_folder(path, loaded)
    else:
        _read_zip(path, loaded)
    if loaded.error is None and not loaded.found_any:
        loaded.error = "no exercise file found (expected ex01_vectors.py … ex07_matrix_properties.py)"
    return loaded
