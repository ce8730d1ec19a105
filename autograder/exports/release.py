"""`course release OUT`: the student-facing repository, built and proved free of answers.

What a release holds: the stubs (``exercises/``, plus pristine copies in ``autograder/pristine/``
for `course reset`), the `course` tooling (the ``autograder`` package **without**
``suites/hidden/``), the public suites, the lesson site's sources (``docs/``, ``mkdocs.yml``,
``scripts/setup_docs.sh``), and a student README, Makefile and pyproject. What it never holds:
``solutions/``, the hidden suites, the repository's tests and the example class, nor the
maintainers' pages that describe what the hidden tests probe (``MAINTAINER_DOCS``).

The stubs are generated afresh from ``solutions/`` (:func:`autograder.authoring.stubs.generate_all`), never
copied from the working tree's ``exercises/``, which an instructor may have filled in while
trying the exercises. The lesson site's figures and GPT-2 table are drawn from the solutions, so
the release ships them ready-made in ``docs/generated/`` (made by the site's build hook, run here
with the solutions), and its ``mkdocs.yml`` watches no ``solutions/``: the hook of a repository
without ``solutions/`` uses the shipped files instead of drawing them.

The public tests compare with ``ref``, the reference solution, which a release cannot ship. So
the build runs every public test against the solutions once, recording each reference value it
uses (:mod:`autograder.grading.recorded`), replays them to prove that the solutions pass with the
recordings alone, writes them into the release, and finally scans every file of the release
(zip members and notebook cells included) for each solution body and each hidden suite's code:
one hit and nothing is written to ``OUT``.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from autograder import catalogue, paths, templating
from autograder.grading import recorded
from autograder.grading import runner
from autograder.authoring import stubs

ROOT = paths.ROOT
#: Left out of every copied tree (build outputs and caches, as .gitignore lists them).
SKIP_PARTS = {"__pycache__", ".hypothesis", ".ruff_cache", "node_modules", ".pytest_cache"}
SKIP_DOCS = ("docs/generated", "docs/assets/vendor")
#: The maintainers' pages: they name what the hidden tests probe (the mutation reviews, the
#: degenerate and trivial cases, the red teams' attacks and the channels still open), so neither
#: the release nor the lesson site carries them (mkdocs.yml's ``exclude_docs`` lists the same
#: ``docs/`` pages). Readers of the repository find them in ``docs/design/``.
MAINTAINER_DOCS = (
    "docs/design/README.md", "docs/design/grading-contract.md",
    "docs/design/measured-facts.md", "docs/design/points.md", "docs/design/suite-strength.md",
    "docs/design/threat-model.md", "docs/design/wire-format.md",
    # How hidden tests are written and which inputs they need: for suite authors only.
    "autograder/suites/README.md",
)
#: Where the recordings go in the release (where autograder.grading.recorded looks for them).
RECORDINGS = "autograder/suites/public/recorded_reference.zip"
#: Needles shorter than this (after whitespace is collapsed) are too common to mean a leak.
MIN_NEEDLE = 40


class ReleaseError(RuntimeError):
    """The release cannot be built, or would leak (nothing is written then)."""


# ------------------------------------------------------------------ what is copied

def _files(root: Path) -> list[tuple[str, Path]]:
    """(path in the release, source file) of everything copied as is (not the stubs, which
    are generated, nor ``mkdocs.yml``, ``.gitignore`` and ``docs/generated/``, which are
    written for the release)."""
    out: list[tuple[str, Path]] = []

    def tree(rel: str, keep) -> None:
        base = root / rel
        if not base.is_dir():
            return
        for p in sorted(base.rglob("*")):
            r = p.relative_to(root).as_posix()
            if not p.is_file() or p.is_symlink() or SKIP_PARTS & set(p.parts):
                continue
            if keep(r):
                out.append((r, p))

    tree("autograder", lambda r: not r.startswith("autograder/suites/hidden")
         and not r.startswith("autograder/pristine") and r not in MAINTAINER_DOCS
         and (r.endswith((".py", ".toml", ".md")) or "/templates/" in r))
    tree("docs", lambda r: not r.startswith(SKIP_DOCS) and r not in MAINTAINER_DOCS)
    for name in ("scripts/setup_docs.sh",):
        if (root / name).is_file():
            out.append((name, root / name))
    return out


#: The release's own README.md and Makefile: templates/release/ (:mod:`autograder.templating`).
TEMPLATES = "autograder.exports"


def student_file(name: str) -> str:
    """The text of the release's generated file ``name`` (``README.md`` or ``Makefile``).

    Raises:
        FileNotFoundError: there is no such template.
    """
    return templating.text(TEMPLATES, f"release/{name}")


def student_pyproject(text: str) -> str:
    """The repository's pyproject with the recordings declared as package data."""
    new, n = re.subn(r'(?m)^autograder = \[(.*?)\][ \t]*$',
                     lambda m: f'autograder = [{m.group(1)}, "suites/public/*.zip"]', text)
    if n != 1:
        raise ReleaseError("pyproject.toml: no `autograder = [...]` package-data line to extend")
    return new


def student_mkdocs(text: str) -> str:
    """The repository's mkdocs.yml without ``solutions`` under ``watch:`` (a release has no
    ``solutions/``, and mkdocs refuses to watch a missing path)."""
    return re.sub(r"(?m)^[ \t]+-[ \t]+['\"]?solutions/?['\"]?[ \t]*(#.*)?\n", "", text)


def student_gitignore(text: str) -> str:
    """The repository's .gitignore, minus ``docs/generated/``: a release ships those files (they
    cannot be remade without the solutions), so a git repository of the release must keep them."""
    return re.sub(r"(?m)^/?docs/generated/?[ \t]*\n", "", text)


def release_stubs(root: Path = ROOT) -> tuple[dict[str, str], list[str]]:
    """(file name -> stub text generated from ``solutions/``, the names whose ``exercises/``
    file is missing or differs from that text).

    Raises:
        ReleaseError: a topic has no solution file, or its markers cannot make a stub.
    """
    missing = [t.filename for t in catalogue.topics() if not stubs.solution_path(t, root).is_file()]
    if missing:
        raise ReleaseError(f"solutions/ lacks {', '.join(missing)}: a release is built from the "
                           "instructor's repository")
    try:
        made = {path.name: text for path, text in stubs.generate_all(root).items()}
    except stubs.StubError as exc:
        raise ReleaseError(f"cannot generate the stubs: {exc}") from None
    differ = [name for name, text in made.items()
              if not (root / "exercises" / name).is_file()
              or (root / "exercises" / name).read_text("utf-8") != text]
    return made, differ


def generate_site_assets(dest: Path, root: Path = ROOT) -> None:
    """Run the lesson site's build hook with the solutions, writing ``docs/generated/``'s files
    (figures, GPT-2 table, exercise boxes, notebooks) into ``dest``.

    A separate interpreter: the hook runs the notebooks (torch, matplotlib, ``os.chdir``), none of
    which belongs in this process, and the repository's own ``docs/generated/`` stays untouched.

    Raises:
        ReleaseError: the hook fails (its output's tail is in the message).
    """
    hook = root / "docs" / "hooks" / "build_assets.py"
    env = {k: v for k, v in os.environ.items() if k != "COURSE_FIGURES"}
    proc = subprocess.run([sys.executable, str(hook), "--out", str(dest)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise ReleaseError("the lesson site's figures and tables cannot be generated "
                           f"({hook.relative_to(root)}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    (dest / ".stamp").unlink(missing_ok=True)  # the instructor's digest; a release never checks it


# ------------------------------------------------------------------ recording

def record_reference(root: Path = ROOT) -> dict[str, dict[str, bytes]]:
    """Run every public test against the solutions, recording each reference value used;
    then replay the recordings and check that the solutions still pass every public test.

    Raises:
        ReleaseError: a solution fails a public test, or a reference value cannot be recorded
            or replayed (the message names the tests).
    """
    from autograder.grading import loop
    from autograder.driver.slot import Slot

    sources = {}
    for t in catalogue.topics():
        path = stubs.solution_path(t, root)
        if not path.is_file():
            raise ReleaseError(f"solutions/{t.filename} is missing: a release is built from the "
                               "instructor's repository")
        sources[t.module] = path.read_bytes()
    specs = {t.module: runner.collect(t.module, hidden=False) for t in catalogue.topics()}
    specs = {topic: s for topic, s in specs.items() if s}
    stores: dict[str, dict[str, bytes]] = {topic: {} for topic in specs}
    recorders = {topic: recorded.Recorder(runner.reference(topic), topic, stores[topic])
                 for topic in specs}
    replays = {topic: recorded.Replay(topic, stores[topic]) for topic in specs}
    problems: list[str] = []
    with Slot(0) as slot:
        # Recorded first, then replayed from the recordings alone: what a release's `ref` is.
        for label, refs in (("recording", recorders), ("replaying", replays)):
            outcome = loop.grade(slot, sources, specs, references=refs)
            problems += [f"{label} {r.spec.name}: {r.message}" for r in outcome.flat()
                         if not r.passed and not r.skipped]
    if problems:
        raise ReleaseError("the solutions do not pass every public test with recorded reference "
                           "values:\n  " + "\n  ".join(problems))
    return stores


# ------------------------------------------------------------------ leak scan

def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=4)
def secret_needles(root: Path = ROOT) -> dict[str, str]:
    """label -> whitespace-collapsed text that must appear nowhere in a release: every solution
    body and every function, class and test of the hidden suites (except what the stubs and the
    public suites hold too, such as a helper both suites share)."""
    needles: dict[str, str] = {}
    for t in catalogue.topics():
        path = stubs.solution_path(t, root)
        if path.is_file():
            for i, body in enumerate(stubs.solution_bodies(path.read_text("utf-8"))):
                needles[f"solutions/{t.filename}: solution body {i + 1}"] = _squash(body)
    hidden = root / "autograder" / "suites" / "hidden"
    for path in sorted(hidden.glob("*.py")) if hidden.is_dir() else []:
        source = path.read_text("utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                seg = ast.get_source_segment(source, node)
                if seg:
                    needles[f"{path.relative_to(root)}: {node.name}"] = _squash(seg)
    # What students get anyway (a helper both suites share, a stub's signature) is no secret.
    # The stubs as generated, not exercises/: a filled-in exercises/ would hide every body.
    given = " ".join([_squash(text) for text in stubs.generate_all(root).values()]
                     + [_squash(f.read_text("utf-8")) for f in
                        sorted((root / "autograder" / "suites" / "public").glob("*.py"))])
    return {k: v for k, v in needles.items() if len(v) >= MIN_NEEDLE and v not in given}


def _texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) readable in a file: itself, each zip member, each notebook cell joined."""
    data = path.read_bytes()
    out = [(str(path), data.decode("utf-8", "replace"))]
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                out.append((f"{path}!{info.filename}",
                            zf.read(info).decode("utf-8", "replace")))
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(data)
            cells = ["".join(c.get("source", "")) if isinstance(c.get("source"), list)
                     else str(c.get("source", "")) for c in nb.get("cells", [])]
            out.append((f"{path} (cells)", "\n".join(cells)))
        except (ValueError, AttributeError):
            pass
    return out


def scan(release: Path, root: Path = ROOT) -> list[str]:
    """Every leak in ``release``: 'file: what' for each secret found (empty: none)."""
    needles = secret_needles(root.resolve())
    found = []
    for path in sorted(release.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        for where, text in _texts(path):
            flat = _squash(text)
            found += [f"{where}: {label}" for label, needle in needles.items() if needle in flat]
    leaked_files = [p for p in release.rglob("*")
                    if p.relative_to(release).as_posix().startswith(
                        ("solutions", "autograder/suites/hidden"))]
    found += [f"{p}: must not be in a release" for p in leaked_files]
    return found


# ------------------------------------------------------------------ build

def build(out: Path, *, root: Path = ROOT, force: bool = False, warn=None,
          progress: Callable[[str], None] | None = None) -> Path:
    """Write the student release into ``out`` (see the module doc).

    ``warn(message)`` is called (default: printed to stderr) when the working tree's
    ``exercises/`` differs from the stubs generated from ``solutions/`` (the release uses the
    generated ones). ``progress(message)`` is told as each step starts (about 80 s in all,
    most of it recording the reference and drawing the lesson figures).

    Raises:
        ReleaseError: ``out`` is not empty (without ``force``), a stub cannot be generated, the
            solutions fail their public tests, a value cannot be recorded, the site's figures
            cannot be drawn, or the scan finds a leak.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise ReleaseError(f"{out} exists and is not empty (use --force to replace it)")
    say = progress or (lambda message: None)
    say("generating the stubs from solutions/ …")
    made, differ = release_stubs(root)
    if differ:
        message = (f"course release: exercises/ differs from the stubs generated from solutions/ "
                   f"({', '.join(differ)}); the release holds freshly generated stubs. If that is "
                   "work of yours, nothing was changed; `course stubs` makes exercises/ match "
                   "and keeps a copy of each file it replaces in exercises/.backup/)")
        (warn or (lambda m: print(m, file=sys.stderr)))(message)
    say("recording the reference values the public tests compare with (the solutions run "
        "every public test in the sandbox, then again from the recording) …")
    stores = record_reference(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        say("copying the lessons, public suites and tooling …")
        for rel, src in _files(root):
            dest = stage / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
        # The stubs, and their pristine copies for `course reset`: generated, never copied.
        for folder in ("exercises", "autograder/pristine"):
            (stage / folder).mkdir(parents=True, exist_ok=True)
            for name, text in made.items():
                (stage / folder / name).write_text(text, encoding="utf-8")
        (stage / "mkdocs.yml").write_text(
            student_mkdocs((root / "mkdocs.yml").read_text("utf-8")), encoding="utf-8")
        if (root / ".gitignore").is_file():
            (stage / ".gitignore").write_text(
                student_gitignore((root / ".gitignore").read_text("utf-8")), encoding="utf-8")
        say("drawing the lesson site's figures and tables from the solutions (a separate "
            "Python) …")
        generate_site_assets(stage / "docs" / "generated", root)
        recorded.write(stage / RECORDINGS, stores)
        for name in ("README.md", "Makefile"):
            (stage / name).write_text(student_file(name), encoding="utf-8")
        (stage / "pyproject.toml").write_text(
            student_pyproject((root / "pyproject.toml").read_text("utf-8")), encoding="utf-8")
        say("scanning the release for solution code and hidden tests …")
        leaks = scan(stage, root)
        if leaks:
            raise ReleaseError("the release would leak:\n  " + "\n  ".join(leaks[:50]))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(stage, 0o777 & ~umask)  # mkdtemp made it 0700: a release is an ordinary folder
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return out
