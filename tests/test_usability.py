"""Rough edges a new user met (fresh-clone trial), each pinned down.

An empty class wrote no results/ or feedback/ although the CLI named them; ``--id ../evil``
made a hidden ``.._evil.zip`` that `course grade` then refused; outputs were mode 0600; a
re-run of an unchanged class started worker slots and graded the reference again; value
failures printed "first at index (0); there expected …"; a typo in a topic got no suggestion.
"""

from __future__ import annotations

import os
import re
import shutil
import stat

import numpy as np
import pytest

from autograder import catalogue
from autograder.authoring import checks
from autograder.cli import app as cli
from autograder.grading import batch as grade
from autograder.grading import slot_process
from tests.helpers import ROOT, SOLUTIONS


def test_an_empty_class_still_writes_every_output(tmp_path, capsys):
    (tmp_path / "class").mkdir()
    out = tmp_path / "out"
    assert cli.main(["grade", "--class", str(tmp_path / "class"), "--out", str(out)]) == 0
    assert "no submissions found" in capsys.readouterr().err
    assert (out / "results").is_dir() and (out / "feedback").is_dir()
    assert (out / "grades.csv").read_text().startswith("id,ex01_vectors,")


@pytest.mark.parametrize("given, expected", [("../evil", "_evil.zip"), ("...", "submission.zip"),
                                             ("ada lovelace", "ada_lovelace.zip"),
                                             ("ann/..", "ann_.zip")])
def test_a_submit_id_never_makes_a_hidden_or_dotted_zip(tmp_path, monkeypatch, given, expected):
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "ex01_vectors.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["submit", "--dir", str(folder), "--id", given, "--no-check"]) == 0
    assert (tmp_path / expected).is_file()


@pytest.mark.slow
def test_outputs_are_ordinary_files_and_a_rerun_starts_no_slot(tmp_path, monkeypatch):
    sub = tmp_path / "class" / "alice"
    sub.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ex01_vectors.py", sub)
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        grade.grade_batch([sub], out)
    finally:
        os.umask(old)
    for p in [out / "grades.csv", out / "report.html", *out.glob("results/*.json"),
              *out.glob("feedback/*.md")]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p

    def no_slot(*args):
        raise AssertionError("an unchanged submission started a worker slot")

    monkeypatch.setattr(slot_process.SlotProcess, "start", no_slot)
    [again] = grade.grade_batch([sub], out)
    assert again.resumed and again.total == catalogue.get_topic("ex01_vectors").points


def test_a_value_failure_names_the_entry_as_numpy_indexes_it():
    got, expected = np.array([1.0, 2.0, 3.5]), np.array([1.0, 2.0, 3.0])
    assert checks.compare(got, expected, 1e-7, 1e-7).endswith(
        "first at index [2]: expected 3.0, got 3.5")
    assert "first at index [1, 0]" in checks.compare(np.array([[1.0, 2.0], [0.0, 4.0]]),
                                                      np.array([[1.0, 2.0], [3.0, 4.0]]), 1e-7, 1e-7)
    assert "first at index [()]" in checks.compare(np.array(1.0), np.array(2.0), 1e-7, 1e-7)


def test_a_misspelt_topic_or_exercise_gets_a_suggestion():
    with pytest.raises(KeyError, match="did you mean 'softmax'"):
        catalogue.get_topic("sofmax")
    with pytest.raises(KeyError, match="did you mean 'softmax'"):
        catalogue.get_exercise("ex03_softmax.softmx")
    with pytest.raises(KeyError, match="did you mean"):
        catalogue.get_exercise("logsumexpp")


def test_the_example_class_ignores_the_working_copys_exercises(tmp_path):
    """A student's edits in exercises/ (or `course reset`'s .backup/ there) must not change the
    example class's stubs, nor so the demo's grades or the repository's tests (issue: a
    checkout where `course reset` ran failed `make test`)."""
    from autograder.cli import demo
    from tests.helpers import stub_source

    root = tmp_path / "repo"
    for part in ("solutions", "examples"):
        shutil.copytree(ROOT / part, root / part)
    (root / "exercises" / ".backup").mkdir(parents=True)
    (root / "exercises" / "ex01_vectors.py").write_text("def dot(u, v):\n    return 1.0\n")
    (root / "exercises" / ".backup" / "ex01_vectors.py").write_text("# an old backup\n")
    subs = {p.name: p for p in demo.assemble(tmp_path / "class", root=root)}
    stubs = subs["stubs"]
    assert sorted(p.name for p in stubs.iterdir()) == sorted(
        t.filename for t in catalogue.topics())
    for t in catalogue.topics():
        assert (stubs / t.filename).read_text("utf-8") == stub_source(t.module)


@pytest.mark.parametrize("argv, stray", [(["check", "3", "4"], "4"), (["list", "extra"], "extra"),
                                         (["submit", "--idd", "x"], "--idd x")])
def test_a_stray_argument_shows_the_subcommands_own_usage(capsys, argv, stray):
    """argparse left a subcommand's stray argument to the top-level parser, whose usage lists
    only the command names: the student saw no option of the command they ran."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: course {argv[0]} "), err
    assert f"course {argv[0]}: error: unrecognized arguments: {stray}" in err


def test_grading_a_path_that_does_not_exist_says_so(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path / "nonexist.zip"), "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert "nonexist.zip' does not exist" in err and "neither" not in err, err
    assert not (tmp_path / "g").exists()
    (tmp_path / "notes.txt").write_text("x")  # there, but not a submission: as before
    assert cli.main(["grade", str(tmp_path / "notes.txt"), "--out", str(tmp_path / "g")]) == 2
    assert "is neither a folder nor a .zip file" in capsys.readouterr().err


def test_nbgrader_writes_nothing_when_a_solution_cannot_be_exported(tmp_path, monkeypatch,
                                                                      capsys):
    """`course nbgrader DIR` wrote the config and the first notebooks, then failed: a half
    course folder was left behind. Every notebook is now made before anything is written."""
    from autograder.exports.nbgrader import export as nbgrader_export

    root = tmp_path / "repo"
    shutil.copytree(SOLUTIONS, root / "solutions")
    (root / "solutions" / "ex02_projections.py").unlink()
    dest = tmp_path / "course"
    with pytest.raises(nbgrader_export.ExportError, match="ex02_projections.py"):
        nbgrader_export.build(dest, topics=["1", "2"], root=root)
    assert not dest.exists()

    # A solution that cannot be exported (no ### BEGIN SOLUTION block), not the first topic.
    real = nbgrader_export.topic_notebook

    def broken(topic, *args, **kwargs):
        if topic.module == "ex02_projections":
            raise nbgrader_export.ExportError("ex02_projections.linear has no ### BEGIN "
                                              "SOLUTION block")
        return real(topic, *args, **kwargs)

    monkeypatch.setattr(nbgrader_export, "topic_notebook", broken)
    assert cli.main(["nbgrader", str(dest), "--topic", "1", "--topic", "2"]) == 1
    assert "BEGIN SOLUTION" in capsys.readouterr().err
    assert not dest.exists()


@pytest.mark.parametrize("makefile", ["Makefile", "autograder/exports/templates/release/Makefile"])
@pytest.mark.parametrize("system", ["Linux", "Darwin"])
def test_make_venv_says_it_is_installing_and_installs_triton_on_linux_only(tmp_path, makefile,
                                                                          system):
    """The release's Makefile printed nothing for the ~3 minutes of its install, and both
    asked pip for Triton, which has no wheel for macOS or Windows. Run `make venv` with a
    stand-in Python (it logs each pip call) and a stand-in `uname`."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    import subprocess

    work = tmp_path / "repo"
    (work / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / makefile, work / "Makefile")
    (work / "pyproject.toml").write_text("")
    (work / "scripts" / "install_sandbox.sh").write_text("true\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "pip.log"
    fake_py = ("#!/bin/sh\nmkdir -p .venv/bin\n"
               f"printf '#!/bin/sh\\necho \"$*\" >> {log}\\n' > .venv/bin/python\n"
               "chmod +x .venv/bin/python\n")
    for name, text in (("python3", fake_py), ("uname", f"#!/bin/sh\necho {system}\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items()  # not the flags of a `make test` around us
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    proc = subprocess.run(["make", "venv", f"PYTHON={bin_dir / 'python3'}"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the whole time up front (a new user measured 4.5 minutes against "about 3"), then a
    # line per step, each before its step runs
    out = proc.stdout
    assert "about 5 minutes the first time" in out and "about 3 minutes" not in out
    steps = re.findall(r"^==> \[(\d)/(\d)\] (.*)$", out, re.MULTILINE)
    assert [int(i) for i, _, _ in steps] == list(range(1, int(steps[0][1]) + 1)), out
    torch_step = next(text for _, _, text in steps if text.startswith("installing torch"))
    assert "2.13.0" in torch_step
    assert out.index(torch_step) < out.index("pip install -q torch==2.13.0")
    calls = log.read_text().splitlines()
    # torch first, pinned as before; triton beside it on Linux alone, and nowhere else
    want = ["torch==2.13.0", "triton==3.9.0"] if system == "Linux" else ["torch==2.13.0"]
    assert calls[:2] == ["-m pip install -q --upgrade pip",
                         "-m pip install -q " + " ".join(want)], calls
    assert not any("triton" in c for c in calls[2:]), calls


def test_course_nbgrader_says_each_topic_as_it_starts(tmp_path, capsys):
    """`course nbgrader` printed nothing for its 18 s: a line per topic, on stderr."""
    assert cli.main(["nbgrader", str(tmp_path / "nb"), "--topic", "1", "--topic", "3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split("] ", 1)[1] for line in err if line.startswith("course nbgrader: [")] == [
        "[1/2] ex01_vectors: collecting its tests, writing its notebook …",
        "[2/2] ex03_softmax: collecting its tests, writing its notebook …"], err
