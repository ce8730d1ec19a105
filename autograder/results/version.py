"""The grader version every result carries: the package version plus a digest of every file
that takes part in grading and of the libraries that make or judge the inputs. A re-run
resumes only results made under the same version (autograder.grading.batch), so no grade made
under an old rule survives a change of the rule (tests/test_grader_version.py)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import platform
from pathlib import Path

from autograder import __version__, paths

#: Suffixes of the package's files that take part in grading (code, catalogue, data).
GRADING_SUFFIXES = (".py", ".toml", ".json", ".txt", ".md", ".html", ".j2", ".sh")
#: Folders whose every file counts, whatever its suffix: the templates outputs are filled from.
TEMPLATE_DIR = "templates"


def grading_files(package: Path, solutions: Path) -> list[tuple[str, Path]]:
    """Every file whose change could change a grade or an output, by its name relative to the
    checkout: all of the package (the code that judges — checks, runner, sandbox, codec — as
    well as the suites, the catalogue and the templates) and the reference solutions. Caches
    and hidden files are left out."""
    files: list[tuple[str, Path]] = []
    for base, label in ((package, package.name), (solutions, solutions.name)):
        for f in sorted(base.rglob("*")):
            rel = f.relative_to(base)
            if (f.is_file() and (f.suffix in GRADING_SUFFIXES or TEMPLATE_DIR in rel.parts[:-1])
                    and "__pycache__" not in f.parts and not f.name.startswith(".")):
                files.append((f"{label}/{rel.as_posix()}", f))
    return files


def compute_grader_version(package: Path, solutions: Path) -> str:
    """The package version plus a digest of every grading file (:func:`grading_files`) and of
    the libraries that make or judge the inputs (a new Hypothesis draws other examples)."""
    h = hashlib.sha256()
    for name, f in grading_files(package, solutions):
        data = f.read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode() + data)
    for lib, version in sorted(_library_versions().items()):
        h.update(f"{lib}={version}\0".encode())
    return f"{__version__}+{h.hexdigest()[:12]}"


@functools.lru_cache(maxsize=1)
def grader_version() -> str:
    """This checkout's grader version, computed once per process (results carry it; a re-run
    resumes only results made under the same one: autograder.grading.batch)."""
    return compute_grader_version(paths.PACKAGE_DIR, paths.SOLUTIONS)


def _library_versions() -> dict[str, str]:
    return {**versions(), "hypothesis": _installed("hypothesis")}


def versions() -> dict[str, str]:
    """The Python, NumPy and PyTorch versions results record (``"absent"`` without torch)."""
    # From the installed distributions' metadata, the same strings as ``__version__``, without
    # importing them: torch takes ~2 s to import, and a grader that judges no tensor needs it not.
    return {"python": platform.python_version(), "numpy": _installed("numpy"),
            "torch": _installed("torch")}


@functools.cache
def _installed(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"
