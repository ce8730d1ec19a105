"""`course release OUT`: the student repository holds no answers, and its own tooling works.

The release is scanned (every file, zip members included) for every solution body and every
hidden test's source. Then it is installed into a fresh venv (``pip install --no-deps -e``; the
venv reaches this interpreter's packages, torch and numpy, through a ``.pth`` line, so nothing is
downloaded, while the release's own ``autograder`` comes first) and `course check` runs there:
1 on the stubs, 0 on a copy of the solutions. The release's stubs are generated from the
solutions whatever the working tree's ``exercises/`` holds, and its lesson site builds without
the solutions, from the figures and tables the release ships.
"""

from __future__ import annotations

import ast
import fcntl
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.exports import release
from autograder.authoring import stubs
from tests.helpers import ROOT, SOLUTIONS, solution_source

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("release")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """`course release`, run once per session (pytest-xdist workers share it; none writes)."""
    base = tmp_path_factory.getbasetemp()
    base = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = base / "student-repo"
    with open(base / "student-repo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "README.md").exists():
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            proc = subprocess.run([sys.executable, "-m", "autograder.cli", "release", str(out),
                                   "--force"], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=900)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
            (base / "student-repo.stderr").write_text(proc.stderr, encoding="utf-8")
    return out


def _contents(folder: Path) -> list[tuple[str, str]]:
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            out.append((str(p), data.decode("utf-8", "replace")))
            if zipfile.is_zipfile(io.BytesIO(data)):
                with zipfile.ZipFile(io.BytesIO(data)) as zf:
                    out += [(f"{p}!{i.filename}", zf.read(i).decode("utf-8", "replace"))
                            for i in zf.infolist()]
    return out


def _hidden_tests() -> dict[str, str]:
    """name -> source of every test function of the hidden suites."""
    found = {}
    for path in sorted((ROOT / "autograder" / "suites" / "hidden").glob("ex*.py")):
        source = path.read_text("utf-8")
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                found[f"{path.stem}.{node.name}"] = ast.get_source_segment(source, node)
    return found


@pytest.mark.slow
def test_the_release_says_each_step_as_it_starts(built):
    """`course release` printed nothing for its 80 s (a rich spinner, which a pipe or a CI log
    does not show): one line per step, with the seconds since it started."""
    err = (built.parent / "student-repo.stderr").read_text("utf-8")
    steps = re.findall(r"^course release: \[ *(\d+\.\d) s\] (\S+)", err, re.MULTILINE)
    assert [word for _, word in steps] == ["generating", "recording", "copying", "drawing",
                                           "scanning"], err
    seconds = [float(t) for t, _ in steps]
    assert seconds == sorted(seconds) and seconds[-1] > 0


@pytest.mark.slow
def test_layout(built):
    for t in catalogue.topics():
        assert (built / "exercises" / t.filename).is_file()
        assert (built / "autograder" / "suites" / "public" / t.filename).is_file()
        assert (built / "autograder" / "pristine" / t.filename).is_file()
    assert (built / "autograder" / "suites" / "public" / "recorded_reference.zip").is_file()
    for lesson in ("docs/lessons", "mkdocs.yml", "README.md", "Makefile", "pyproject.toml"):
        assert (built / lesson).exists(), lesson
    for absent in ("solutions", "autograder/suites/hidden", "tests", "examples",
                   "docs/generated/.stamp", "docs/assets/vendor",
                   # what the hidden tests probe: maintainers' pages (tests/docs/test_published.py)
                   *release.MAINTAINER_DOCS):
        assert not (built / absent).exists(), absent
    assert (built / "docs" / "design" / "exercise-api.md").is_file()
    assert not list(built.rglob("__pycache__"))
    # the site's assets drawn from the solutions are shipped ready-made
    assert (built / "docs" / "generated" / "gpt2-matmuls.md").is_file()
    assert list((built / "docs" / "generated" / "figures").glob("*.svg"))


def _repo_copy(dest: Path) -> Path:
    """The parts of the repository a release is built from, copied (without build outputs)."""
    skip = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis")
    for folder in ("autograder", "solutions", "exercises", "scripts"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=skip)
    shutil.copytree(ROOT / "docs", dest / "docs", ignore=shutil.ignore_patterns(
        "__pycache__", "generated", "vendor"))
    for name in ("mkdocs.yml", "pyproject.toml", ".gitignore"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def test_a_filled_in_exercises_folder_never_reaches_the_release(tmp_path, monkeypatch):
    """The stubs in exercises/ and autograder/pristine/ are generated from the solutions, and a
    warning says so, even when the instructor's exercises/ holds working code."""
    repo = _repo_copy(tmp_path / "repo")
    (repo / "exercises" / "ex03_softmax.py").write_text(solution_source("ex03_softmax"), "utf-8")
    # Not what this test is about, and slow: record nothing, draw no figures.
    monkeypatch.setattr(release, "record_reference", lambda root: {})
    monkeypatch.setattr(release, "generate_site_assets",
                        lambda dest, root: (dest / "figures").mkdir(parents=True))
    warnings: list[str] = []
    out = release.build(tmp_path / "out", root=repo, warn=warnings.append)

    assert len(warnings) == 1 and "ex03_softmax.py" in warnings[0], warnings
    assert "freshly generated stubs" in warnings[0]
    want = {path.name: text for path, text in stubs.generate_all(repo).items()}
    assert len(want) == len(catalogue.topics())
    for folder in ("exercises", "autograder/pristine"):
        got = {p.name: p.read_text("utf-8") for p in (out / folder).glob("*.py")}
        assert got == want, folder
    body = _squash(stubs.solution_bodies(solution_source("ex03_softmax"))[0])
    assert not [p for p in out.rglob("*.py") if body in _squash(p.read_text("utf-8"))]
    # the filled-in exercises/ does not pass the solution bodies off as given to students
    assert any(k.startswith("solutions/ex03_softmax.py") for k in release.secret_needles(repo))
    assert release.scan(out, repo) == []


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A release built quickly: no reference recorded, no figures drawn (what the tests using
    it look at is the release's own `course` command, not its recordings or site)."""
    base = tmp_path_factory.mktemp("small-release")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(release, "record_reference", lambda root: {})
        mp.setattr(release, "generate_site_assets",
                   lambda dest, root: (dest / "figures").mkdir(parents=True))
        return release.build(base / "student-repo", root=ROOT, warn=lambda message: None)


def _release_course(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """The release's own `course ARGS`, run in it (its `autograder` package, not this one)."""
    env = {k: v for k, v in os.environ.items() if k != "COURSE_ROOT"}
    env.update(PYTHONPATH=str(repo), PYTHONDONTWRITEBYTECODE="1")  # the release stays as built
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [["stubs"], ["demo"], ["nbgrader", "nb"],
                                  ["gradescope", "--out", "ag.zip"], ["release", "again"]])
def test_instructor_commands_in_a_release_say_so_and_write_nothing(small, args):
    """In a student release `course demo` crashed (FileNotFoundError), `course nbgrader DIR`
    failed after writing half of DIR, and `course stubs` said "already up to date"."""
    before = _contents(small)
    proc = _release_course(small, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == (f"course {args[0]} is for the instructor's repository: this student "
                           "release has no solutions/\n")
    assert _contents(small) == before  # nothing written (no nb/, ag.zip, again/, build/)


def test_the_release_gitignore_keeps_the_shipped_generated_files():
    text = (ROOT / ".gitignore").read_text("utf-8")
    student = release.student_gitignore(text)
    assert "docs/generated" in text and "docs/generated" not in student
    assert student.count("\n") == text.count("\n") - 1


def test_the_release_mkdocs_yml_watches_no_solutions_folder():
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    student = release.student_mkdocs(text)
    assert re.search(r"(?m)^\s+- solutions\s*$", text)  # else this test checks nothing
    assert not re.search(r"(?m)^\s+- solutions", student)
    assert student.count("\n") == text.count("\n") - 1  # that one line, nothing else


@pytest.mark.slow
def test_no_solution_body_and_no_hidden_test_anywhere(built):
    bodies = [_squash(b) for t in catalogue.topics()
              for b in stubs.solution_bodies(solution_source(t.module))]
    hidden = {k: _squash(v) for k, v in _hidden_tests().items()}
    assert len(bodies) >= 30 and len(hidden) >= 50  # the scan has something to look for
    hits = []
    for where, text in _contents(built):
        flat = _squash(text)
        hits += [f"{where}: a solution body" for b in bodies if len(b) > 20 and b in flat]
        hits += [f"{where}: {name}" for name, src in hidden.items() if src in flat]
    assert not hits, hits[:10]
    assert release.scan(built) == []


@pytest.mark.slow
def test_the_scan_catches_a_planted_leak(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built / "exercises", copy / "exercises")
    body = stubs.solution_bodies(solution_source("ex03_softmax"))[0]
    with open(copy / "exercises" / "ex03_softmax.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef leaked():\n" + body)
    name, src = next(iter(_hidden_tests().items()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("notes.py", src)
    (copy / "notes.zip").write_bytes(buf.getvalue())
    found = release.scan(copy)
    assert any("ex03_softmax.py: solutions/ex03_softmax.py: solution body" in f for f in found)
    assert any("notes.zip!notes.py" in f and name.split(".")[1] in f for f in found), found


@pytest.mark.slow
def test_the_release_builds_its_lesson_site_from_the_shipped_figures(built, tmp_path):
    """`mkdocs build --strict` in the release (no solutions/): the hook uses the shipped
    docs/generated/ (figures, GPT-2 table) and regenerates nothing; without a shipped figure it
    stops with a message naming it, rather than drawing one from the stubs."""
    from tests.docs.conftest import mkdocs_env

    repo = shutil.copytree(built, tmp_path / "student-repo")  # the shared one stays as built
    # MathJax is vendored from npm by scripts/setup_docs.sh: reuse the repository's copy.
    subprocess.run(["bash", str(ROOT / "scripts" / "setup_docs.sh")], check=True, cwd=ROOT)
    shutil.copytree(ROOT / "docs" / "assets" / "vendor", repo / "docs" / "assets" / "vendor")
    shipped = {p.name: p.read_bytes() for p in (repo / "docs" / "generated").rglob("*")
               if p.is_file()}

    def mkdocs(site: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                               str(repo / "mkdocs.yml"), "-d", str(site)], cwd=repo,
                              env=mkdocs_env(), capture_output=True, text=True, timeout=600,
                              check=False)

    proc = mkdocs(tmp_path / "site")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "using the figures and tables shipped" in proc.stderr
    site = tmp_path / "site"
    figures = sorted({m for page in (repo / "docs" / "lessons").glob("*.md") for m in
                      re.findall(r"generated/figures/([\w.-]+\.svg)", page.read_text("utf-8"))})
    assert len(figures) >= 7
    for name in figures:
        assert (site / "generated" / "figures" / name).read_bytes() == shipped[name], name
    # the GPT-2 table, made from solutions.ex02_projections, is on its page
    assert "38,597,376" in (site / "lessons" / "02-projections" / "index.html").read_text("utf-8")
    assert {p.name: p.read_bytes() for p in (repo / "docs" / "generated").rglob("*")
            if p.is_file()} == shipped  # nothing regenerated
    assert release.scan(site) == []

    (repo / "docs" / "generated" / "figures" / figures[0]).unlink()
    broken = mkdocs(tmp_path / "site2")
    assert broken.returncode != 0
    assert figures[0] in broken.stdout + broken.stderr
    assert not (repo / "docs" / "generated" / "figures" / figures[0]).exists()


def _fresh_venv(where: Path) -> Path:
    """A new venv that sees this interpreter's packages after its own (no downloads)."""
    venv.EnvBuilder(with_pip=False).create(where)
    py = where / "bin" / "python"
    site = subprocess.run([str(py), "-c", ("import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])")], capture_output=True, text=True, check=True)
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # A path in a .pth file is appended to sys.path; the .pth files *in* it are not run, so the
    # repository's own editable install of `autograder` stays out.
    Path(site.stdout.strip(), "_test_packages.pth").write_text("\n".join(sorted(paths)) + "\n")
    return py


@pytest.mark.slow
def test_course_check_works_inside_the_release_on_a_fresh_venv(built, tmp_path):
    built = shutil.copytree(built, tmp_path / "student-repo")  # a clone: the shared one stays
    py = _fresh_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                          "--no-deps", "--no-build-isolation", "-e", str(built)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    where = subprocess.run([str(py), "-c", "import autograder; print(autograder.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.strip() == str(built / "autograder" / "__init__.py"), where.stderr
    course = str(tmp_path / "venv" / "bin" / "course")
    stubs_run = subprocess.run([course, "check", "ex01"], cwd=built, env=env,
                               capture_output=True, text=True, timeout=600)
    assert stubs_run.returncode == 1, stubs_run.stdout[-2000:] + stubs_run.stderr[-2000:]
    # Each stub exercise is one line (autograder.results.failures), not a traceback per test.
    assert "ex01_vectors.one_hot: not written yet" in stubs_run.stdout, stubs_run.stdout[-2000:]
    solved_dir = tmp_path / "solved"  # the release itself stays as built (other tests scan it)
    solved_dir.mkdir()
    for t in catalogue.topics():
        shutil.copy2(SOLUTIONS / t.filename, solved_dir / t.filename)
    solved = subprocess.run([course, "check", "--dir", str(solved_dir)], cwd=built, env=env,
                            capture_output=True, text=True, timeout=600)
    assert solved.returncode == 0, solved.stdout[-4000:] + solved.stderr[-2000:]
    assert "All public tests pass" in solved.stdout


def test_recorded_reference_replays_values_and_reference_layers(tmp_path):
    """Recorder and Replay on a stand-in reference: functions, NamedTuples, tensors, a layer."""
    import types
    from typing import NamedTuple

    import numpy as np
    import torch

    from autograder.grading import recorded

    class Pair(NamedTuple):
        name: str
        shape: tuple

    ref = types.ModuleType("fake_ref")
    ref.SCALE = 3.0
    ref.double = lambda x: 2 * np.asarray(x, dtype=np.float64)
    ref.pairs = lambda n: [Pair("a", (n, 1)), Pair("b", (1, n))]
    ref.split = lambda t: (t[:1], {"rest": t[1:]})
    ref.Layer = lambda: torch.nn.Linear(3, 2)

    def drive(r):
        out = [r.SCALE, r.double([1, 2]), r.pairs(4), r.split(torch.arange(4.0))]
        layer = r.Layer().double()
        with torch.no_grad():
            for name, p in layer.named_parameters():
                p.copy_(torch.ones_like(p) * (2.0 if name == "weight" else 0.5))
            out.append(layer(torch.ones(1, 3, dtype=torch.float64)))
        return out

    store: dict[str, bytes] = {}
    want = drive(recorded.Recorder(ref, "fake", store))
    recorded.write(tmp_path / "rec.zip", {"fake": store})
    got = drive(recorded.Replay("fake", recorded.load(tmp_path / "rec.zip")["fake"]))
    assert got[0] == want[0] == 3.0
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2][0].name == "a" and got[2][1].shape == (1, 4)  # NamedTuples keep their fields
    assert isinstance(got[3], tuple) and torch.equal(got[3][1]["rest"], want[3][1]["rest"])
    assert torch.equal(got[4], want[4]) and got[4].dtype == torch.float64
    with pytest.raises(recorded.NotRecorded, match="runs in full when your work is graded"):
        recorded.Replay("fake", store).double([5, 6])
    # weights copied in are part of the key: other weights, no recorded value
    other = recorded.Replay("fake", store).Layer().double()
    with torch.no_grad():
        for p in other.parameters():
            p.fill_(7.0)
    with pytest.raises(recorded.NotRecorded):
        other(torch.ones(1, 3, dtype=torch.float64))
