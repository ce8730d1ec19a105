"""The student loop on a temporary copy of exercises/: reset, submit, list, hint and watch."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.cli import app as cli
from autograder.grading import runner
from autograder.authoring import stubs
from autograder.student import reset as student
from tests.helpers import RUN_COURSE, ROOT, SOLUTIONS, stub_source, write_stubs
from tests.helpers import course

TOPIC1 = "ex01_vectors.py"


@pytest.fixture
def exdir(tmp_path) -> Path:
    """A private copy of the generated stubs: tests never touch the repository's exercises/."""
    return write_stubs(tmp_path / "exercises")


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160", "PYTHONUNBUFFERED": "1"}


def solved(name: str, topic: str = "ex01_vectors") -> str:
    return student.segment((SOLUTIONS / f"{topic}.py").read_text("utf-8"), name)


def replace_segment(text: str, name: str, new: str) -> str:
    old = student.segment(text, name)
    assert old is not None and text.count(old) == 1
    return text.replace(old, new)


# ---------------------------------------------------------------- reset

def test_reset_restores_exactly_the_stub_function_and_nothing_else(exdir, capsys):
    stub = stub_source("ex01_vectors")
    helper = "\n\ndef _my_helper(x):\n    return x  # mine\n"
    # The student's file: dot and cosine_similarity written, an import and a helper added.
    mine = replace_segment(stub, "dot", solved("dot"))
    mine = replace_segment(mine, "cosine_similarity", solved("cosine_similarity"))
    mine = mine.replace("import numpy as np\n", "import numpy as np\nimport math  # mine\n", 1)
    mine += helper
    (exdir / TOPIC1).write_text(mine, "utf-8")

    assert cli.main(["reset", "ex01_vectors.dot", "--dir", str(exdir)]) == 0
    want = replace_segment(stub, "cosine_similarity", solved("cosine_similarity"))
    want = want.replace("import numpy as np\n", "import numpy as np\nimport math  # mine\n", 1)
    want += helper
    assert (exdir / TOPIC1).read_text("utf-8") == want
    backups = list((exdir / ".backup").iterdir())
    assert len(backups) == 1 and backups[0].name.startswith(f"{TOPIC1}.")
    assert backups[0].read_text("utf-8") == mine
    assert "restored" in capsys.readouterr().out

    # Once more: nothing to do, no second backup.
    assert cli.main(["reset", "dot", "--dir", str(exdir)]) == 0
    assert len(list((exdir / ".backup").iterdir())) == 1


def test_reset_a_class_a_deleted_function_and_a_file_that_does_not_parse(exdir):
    stub4 = stub_source("ex04_svd_lora")
    lora_stub = student.segment(stub4, "LoRALinear")
    mine = replace_segment(stub4, "LoRALinear", solved("LoRALinear", "ex04_svd_lora"))
    (exdir / "ex04_svd_lora.py").write_text(mine, "utf-8")
    assert cli.main(["reset", "ex04_svd_lora.LoRALinear", "--dir", str(exdir)]) == 0
    assert (exdir / "ex04_svd_lora.py").read_text("utf-8") == stub4
    assert student.segment(stub4, "LoRALinear") == lora_stub

    # A syntax error elsewhere in the file does not stop the reset of another function.
    stub = stub_source("ex01_vectors")
    broken = replace_segment(stub, "one_hot", "def one_hot(ids, vocab_size)\n    return ids")
    mine = replace_segment(broken, "dot", solved("dot"))
    (exdir / TOPIC1).write_text(mine, "utf-8")
    assert cli.main(["reset", "dot", "--dir", str(exdir)]) == 0
    assert (exdir / TOPIC1).read_text("utf-8") == broken

    # A deleted function comes back (appended); the rest stays.
    without = stub.replace(student.segment(stub, "normalize_rows"), "")
    (exdir / TOPIC1).write_text(without, "utf-8")
    assert cli.main(["reset", "normalize_rows", "--dir", str(exdir)]) == 0
    text = (exdir / TOPIC1).read_text("utf-8")
    assert text.startswith(without.rstrip("\n"))
    assert student.segment(text, "normalize_rows") == student.segment(stub, "normalize_rows")


def test_reset_keeps_windows_line_endings_and_odd_characters(exdir):
    stub = stub_source("ex01_vectors")
    # A form feed and a LINE SEPARATOR in a comment: not line breaks for the parser.
    odd = "# page\x0cbreak and \u2028 separator\n"
    mine = odd + replace_segment(stub, "dot", solved("dot"))
    (exdir / TOPIC1).write_bytes(mine.replace("\n", "\r\n").encode("utf-8"))
    assert cli.main(["reset", "dot", "--dir", str(exdir)]) == 0
    assert (exdir / TOPIC1).read_bytes() == (odd + stub).replace("\n", "\r\n").encode("utf-8")


def test_reset_refuses_unknown_names_with_exit_2(exdir, capsys):
    before = (exdir / TOPIC1).read_bytes()
    for name in ("nope", "ex01_vectors.nope", "eigen", "ex99.dot"):
        assert cli.main(["reset", name, "--dir", str(exdir)]) == 2, name
    err = capsys.readouterr().err
    assert "unknown topic or exercise 'nope'" in err and "ex01_vectors has no exercise" in err
    assert "ex03_softmax, ex03, ex3, 3 or softmax" in err  # the forms a name may take
    assert (exdir / TOPIC1).read_bytes() == before
    assert not (exdir / ".backup").exists()
    assert cli.main(["reset", "dot", "--dir", str(exdir / "missing")]) == 2


def _notebook_with(folder: Path, topic: str, written: dict[str, str]) -> Path:
    """`course notebook TOPIC` in ``folder``, then the cells of ``written`` (exercise -> its
    code) filled in, each with an output as if run."""
    import nbformat

    folder.mkdir(exist_ok=True)
    assert cli.main(["notebook", topic, "--dir", str(folder)]) == 0
    path = next(folder.glob("*.ipynb"))
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for name, code in written.items():
            if cell.cell_type == "code" and student.segment(cell.source, name):
                cell.source = replace_segment(cell.source, name, code)
                cell.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
                cell.execution_count = 1
    nbformat.write(nb, path)
    return path


def test_reset_in_a_notebook_folder_resets_the_notebook_and_writes_no_py(tmp_path, capsys,
                                                                         monkeypatch):
    """A reset beside a notebook wrote a whole stub exercises/ex03_softmax.py, which then won
    over the notebook: `course check` fell to 0 and `course submit` handed in the stub."""
    import nbformat

    from autograder.grading.submission import notebook_to_source

    folder = tmp_path / "work"
    mine = {n: solved(n, "ex03_softmax") for n in ("softmax", "logsumexp")}
    path = _notebook_with(folder, "3", mine)
    before = path.read_bytes()
    py = folder / "ex03_softmax.py"

    assert cli.main(["reset", "ex03_softmax.logsumexp", "--dir", str(folder)]) == 0
    assert not py.exists()
    out = capsys.readouterr().out
    assert f"restored to its stub in {path}" in out
    backups = list((folder / ".backup").iterdir())
    assert [b.read_bytes() for b in backups] == [before]  # backed up before it changed
    stub = stub_source("ex03_softmax")
    code = notebook_to_source(path.read_bytes()).decode()
    assert student.segment(code, "logsumexp") == student.segment(stub, "logsumexp")
    assert student.segment(code, "softmax") == mine["softmax"]  # the rest stays
    cells = {c.source: c for c in nbformat.read(path, as_version=4).cells}
    reset_cell = next(c for src, c in cells.items() if "def logsumexp" in src)
    assert reset_cell.outputs == [] and reset_cell.execution_count is None
    assert next(c for src, c in cells.items() if "def softmax(" in src).outputs

    # Once more: nothing to do, nothing backed up.
    assert cli.main(["reset", "logsumexp", "--dir", str(folder)]) == 0
    assert "nothing changed" in capsys.readouterr().out and len(backups) == 1
    # The .py reset, called on this folder, refuses rather than write a .py beside it.
    for call in (student.reset, student.reset_topic):
        with pytest.raises(student.ResetError, match="never with a .py beside it"):
            call(folder, "logsumexp" if call is student.reset else "3")
    assert not py.exists()

    # The whole topic: never unasked; with --yes the notebook is the stub again, backed up.
    monkeypatch.setattr(sys, "stdin", open(os.devnull))
    kept = path.read_bytes()
    assert cli.main(["reset", "3", "--dir", str(folder)]) == 2
    assert path.read_bytes() == kept and "pass --yes" in capsys.readouterr().err
    assert cli.main(["reset", "3", "--yes", "--dir", str(folder)]) == 0
    assert not py.exists()
    assert ast_equal(notebook_to_source(path.read_bytes()).decode(), stub)
    assert sorted(b.read_bytes() for b in (folder / ".backup").iterdir()) == sorted(
        [before, kept])
    assert f"{path} restored to its stub" in capsys.readouterr().out


def ast_equal(a: str, b: str) -> bool:
    import ast

    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def test_reset_refuses_a_notebook_it_cannot_read_and_leaves_it(tmp_path, capsys):
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "ex03_softmax.ipynb").write_text('{"cells": [', "utf-8")
    for target in ("logsumexp", "3"):
        assert cli.main(["reset", target, "--yes", "--dir", str(folder)]) == 1
        err = capsys.readouterr().err
        assert "cannot read" in err and "course notebook 3 --force" in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["ex03_softmax.ipynb"]
    assert (folder / "ex03_softmax.ipynb").read_text("utf-8") == '{"cells": ['


def test_reset_in_a_folder_without_the_file_says_it_wrote_the_stub(tmp_path, capsys):
    """It said "already the original stub: nothing changed" while it wrote a new file."""
    assert cli.main(["reset", "dot", "--dir", str(tmp_path)]) == 0
    assert f"{tmp_path / TOPIC1} was missing: wrote the whole stub" in capsys.readouterr().out
    assert (tmp_path / TOPIC1).read_text("utf-8") == stub_source("ex01_vectors")


def test_the_pristine_stub_is_the_generated_one():
    for t in catalogue.topics():
        want = stubs.make_stub((SOLUTIONS / t.filename).read_text("utf-8"), t)
        assert student.pristine_stub(t.module) == want


# ---------------------------------------------------------------- submit

def test_submit_zip_has_a_manifest_and_is_graded_under_its_stem(exdir, tmp_path):
    shutil.copy(SOLUTIONS / TOPIC1, exdir / TOPIC1)
    (exdir / "notes.txt").write_text("not submitted")
    handed_in = [TOPIC1, "ex02_projections.py"]  # two topics keep the grading quick
    for t in catalogue.topics():
        if t.filename not in handed_in:
            (exdir / t.filename).unlink()
    out = tmp_path / "alice.zip"
    proc = course("submit", "--dir", str(exdir), "--out", str(out), "--id", "s1234567",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "alice" in proc.stdout

    with zipfile.ZipFile(out) as zf:
        names = sorted(zf.namelist())
        manifest = json.loads(zf.read("manifest.json"))
        contents = {n: zf.read(n) for n in names}
    assert names == sorted([*handed_in, "manifest.json"])
    assert manifest["student_id"] == "s1234567" and manifest["course_version"]
    assert manifest["missing"] == [t.filename for t in catalogue.topics()][2:]
    datetime.fromisoformat(manifest["created"].replace("Z", "+00:00"))
    assert [f["name"] for f in manifest["files"]] == sorted(n for n in names if n.endswith(".py"))
    for f in manifest["files"]:
        assert f["sha256"] == hashlib.sha256(contents[f["name"]]).hexdigest()
        assert contents[f["name"]] == (exdir / f["name"]).read_bytes()
    n1 = len(runner.collect("ex01_vectors", hidden=False))
    assert manifest["public_checks"]["ex01_vectors"] == {"passed": n1, "total": n1}

    graded = tmp_path / "graded"
    proc = course("grade", str(out), "--out", str(graded), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((graded / "grades.csv").read_text("utf-8").splitlines()))
    assert [r["id"] for r in rows] == ["alice"]
    assert rows[0]["ex01_vectors"] == "12.00" and rows[0]["ex02_projections"] == "0.00"
    assert (graded / "results" / "alice.json").exists()


def test_submit_defaults_to_user_and_a_zip_named_after_them(exdir, tmp_path, monkeypatch,
                                                             capsys):
    """The zip's stem is the id `course grade` gives it: one file per student, no clashes."""
    monkeypatch.setenv("USER", "bob")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["submit", "--dir", str(exdir), "--no-check"]) == 0
    with zipfile.ZipFile(tmp_path / "bob.zip") as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert sorted(zf.namelist()) == sorted([t.filename for t in catalogue.topics()]
                                               + ["manifest.json"])
    assert manifest["student_id"] == "bob" and manifest["public_checks"] is None
    assert manifest["missing"] == []
    (exdir / "ex02_projections.py").unlink()
    assert cli.main(["submit", "--dir", str(exdir), "--no-check", "--out", "x.zip"]) == 0
    assert "ex02_projections.py" in capsys.readouterr().out  # named as missing
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["submit", "--dir", str(empty), "--no-check"]) == 2


def test_submit_hands_in_notebooks_and_says_what_an_empty_folder_lacks(tmp_path, capsys):
    """A notebook-only folder could not be handed in ("no .py files"), though the grader
    reads notebooks; a notebook beside its .py is not handed in (the .py wins), and that is
    said."""
    folder = tmp_path / "work"
    _notebook_with(folder, "3", {})
    (folder / TOPIC1).write_text(stub_source("ex01_vectors"), "utf-8")
    (folder / "ex01_vectors.ipynb").write_text("{}", "utf-8")
    out = tmp_path / "me.zip"
    capsys.readouterr()
    assert cli.main(["submit", "--dir", str(folder), "--no-check", "--out", str(out)]) == 0
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["ex01_vectors.py", "ex03_softmax.ipynb",
                                         "manifest.json"]
        manifest = json.loads(zf.read("manifest.json"))
    assert "ex01_vectors.py" not in manifest["missing"]
    assert "ex03_softmax.py" not in manifest["missing"]
    err = capsys.readouterr().err
    assert (f"course submit: warning: {folder / 'ex01_vectors.ipynb'} is ignored: "
            f"{folder / TOPIC1} in the same folder wins") in err

    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["submit", "--dir", str(empty), "--no-check"]) == 2
    said = capsys.readouterr().out
    assert "no .py files and no exercise notebooks" in said and str(empty) in said, said


def test_check_and_list_say_a_notebook_is_ignored_and_where_nothing_was_found(tmp_path,
                                                                             capsys):
    """Both files of a topic: `course check` and `course list` read the .py without a word,
    and a student working in the notebook saw their edits do nothing. A folder without the
    topic: "not found in the submission", and no word that a notebook would do."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "ex03_softmax.py").write_text(stub_source("ex03_softmax"), "utf-8")
    (folder / "ex03_softmax.ipynb").write_text("{}", "utf-8")
    warning = (f"warning: {folder / 'ex03_softmax.ipynb'} is ignored: "
               f"{folder / 'ex03_softmax.py'} in the same folder wins (move the .py away to "
               "work in the notebook)")
    assert cli.main(["check", "3", "--dir", str(folder)]) == 1
    assert f"course check: {warning}" in capsys.readouterr().err
    assert cli.main(["list", "--static", "--dir", str(folder)]) == 0
    assert f"course list: {warning}" in capsys.readouterr().err

    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["check", "3", "--dir", str(empty)]) == 1
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert (f"ex03_softmax.py not found in the checked folder {empty} (an ex03_softmax.ipynb "
            "notebook works too)") in out, out
    assert "in the submission" not in out


def test_list_reads_a_notebook_as_the_grader_does(tmp_path, capsys):
    folder = tmp_path / "work"
    _notebook_with(folder, "3", {"logsumexp": solved("logsumexp", "ex03_softmax")})
    capsys.readouterr()
    assert cli.main(["list", "--static", "--dir", str(folder)]) == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in capsys.readouterr().out.splitlines() if line.count("│") >= 6}
    assert rows["logsumexp"][1] == "written" and rows["softmax"][1] == "todo"
    assert rows["one_hot"][1] == "no file"


# ---------------------------------------------------------------- list

def test_list_shows_progress_per_topic_and_exercise(exdir, capsys):
    shutil.copy(SOLUTIONS / TOPIC1, exdir / TOPIC1)
    assert cli.main(["reset", "dot", "--dir", str(exdir)]) == 0
    capsys.readouterr()
    assert cli.main(["list", "--dir", str(exdir)]) == 0
    out = capsys.readouterr().out
    specs = runner.collect("ex01_vectors", hidden=False)
    n_dot = sum(s.exercise == "dot" for s in specs)
    n_one_hot = sum(s.exercise == "one_hot" for s in specs)
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.count("│") >= 6}
    assert rows["ex01_vectors"][2] == f"{len(specs) - n_dot}/{len(specs)}"
    assert rows["one_hot"][1:3] == ["written", f"{n_one_hot}/{n_one_hot}"]
    assert rows["dot"][1:3] == ["todo", f"0/{n_dot}"]
    n2 = len(runner.collect("ex02_projections", hidden=False))
    assert rows["ex02_projections"][2] == f"0/{n2}" and rows["linear"][1] == "todo"
    assert "exercises pass all their public tests" in out

    assert cli.main(["list", "--static", "--dir", str(exdir)]) == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in capsys.readouterr().out.splitlines() if line.count("│") >= 6}
    assert rows["dot"][1:3] == ["todo", f"?/{n_dot}"] and rows["one_hot"][1] == "written"
    assert len(rows) == len(catalogue.topics()) + len(catalogue.all_exercises())


# ---------------------------------------------------------------- hint

def test_hint_tiers(capsys):
    ex = catalogue.get_exercise("ex03_softmax.softmax")
    assert len(ex.hints) >= 2
    assert cli.main(["hint", "ex03_softmax.softmax"]) == 0
    out = capsys.readouterr().out
    assert f"Hint 1/{len(ex.hints)}: {ex.hints[0]}" in out and ex.hints[1] not in out
    assert "--level 2" in out and "Lesson: docs/lessons/" in out
    assert cli.main(["hint", "softmax", "--level", "99"]) == 0
    out = capsys.readouterr().out
    assert all(h in out for h in ex.hints) and "(more:" not in out
    assert cli.main(["hint", "nope"]) == 2


def test_hint_for_a_topic_lists_its_exercises_first_hints(capsys):
    top = catalogue.get_topic("ex08_flash_attention")
    for name in ("8", "ex08", "flash_attention"):
        assert cli.main(["hint", name]) == 0, name
        out = capsys.readouterr().out
        for ex in top.exercises:
            assert ex.qualname in out and f"Hint 1/{len(ex.hints)}: {ex.hints[0]}" in out
            assert ex.hints[1] not in out
    # An exercise still wins over the topic of the same name (softmax is both).
    assert cli.main(["hint", "softmax"]) == 0
    assert "ex03_softmax.logsumexp" not in capsys.readouterr().out


# ---------------------------------------------------------------- watch

class Watcher:
    """`course watch` in a subprocess, its output collected line by line."""

    def __init__(self, *args: str, cwd: Path, new_session: bool = False) -> None:
        # new_session: its own process group, to be sent a signal as a terminal sends Ctrl-C
        self.proc = subprocess.Popen([sys.executable, "-c", RUN_COURSE, "watch", *args],
                                     cwd=cwd, env={**env(), "PYTHONFAULTHANDLER": "1"},
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=new_session)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def wait_for(self, needle: str, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while needle not in self.text:
            if self.proc.poll() is not None or time.monotonic() > end:
                raise AssertionError(f"no {needle!r} in the output of course watch:\n{self.text}")
            time.sleep(0.1)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def test_watch_rechecks_the_topic_whose_file_changed(exdir, tmp_path):
    (exdir / "ex01_vectors.ipynb").write_text("{}")  # the .py beside it wins: said
    w = Watcher("1", "--dir", str(exdir), "--once", cwd=tmp_path)
    try:
        w.wait_for("Watching")
        (exdir / "ex02_projections.py").write_text("# not watched\n")  # topic 2: ignored
        time.sleep(0.5)
        shutil.copy(SOLUTIONS / TOPIC1, exdir / TOPIC1)
        end = time.monotonic() + 120
        while w.proc.poll() is None and time.monotonic() < end:
            if "re-checking" not in w.text:  # a save the watcher was not yet ready for
                os.utime(exdir / TOPIC1)
            time.sleep(0.5)
        assert w.proc.returncode == 0, w.text
    finally:
        w.close()
    n = len(runner.collect("ex01_vectors", hidden=False))
    assert "re-checking ex01_vectors.py" in w.text and "ex02_projections.py" not in w.text
    assert (f"course watch: warning: {exdir.resolve() / 'ex01_vectors.ipynb'} is ignored: "
            f"{exdir.resolve() / TOPIC1} in the same folder wins") in w.text, w.text
    assert f"all {n} public tests pass" in w.text
    assert f"{n}/{n}" in w.text


def _signal_masks(pid: int) -> str:
    """Each thread's name and signal masks (/proc: pending, blocked, ignored, caught)."""
    lines = []
    with contextlib.suppress(OSError):
        for tid in sorted(os.listdir(f"/proc/{pid}/task")):
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            fields = [ln for ln in status.splitlines()
                      if ln.startswith(("Name:", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))]
            lines.append(f"thread {tid}: " + "; ".join(" ".join(f.split()) for f in fields))
    return "\n".join(lines)


def test_watch_stops_cleanly_on_ctrl_c(exdir, tmp_path):
    w = Watcher("--dir", str(exdir), cwd=tmp_path)
    try:
        w.wait_for("Watching")
        w.proc.send_signal(signal.SIGINT)
        try:
            rc = w.proc.wait(30)
        except subprocess.TimeoutExpired:
            # Where it hangs (seen under heavy load only, not reproduced by hand, not even with
            # SIGINT sent to each of its threads): which threads ignore, block or hold the
            # signal, then every thread's Python stack (PYTHONFAULTHANDLER prints it on SIGABRT).
            masks = _signal_masks(w.proc.pid)
            w.proc.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                w.proc.wait(10)
            time.sleep(0.5)
            pytest.fail(f"course watch still ran 30 s after SIGINT:\n{masks}\n{w.text[-6000:]}")
        assert rc == 0, w.text
    finally:
        w.close()
    assert "Stopped watching." in w.text


def test_ctrl_c_in_a_terminal_during_a_recheck_stops_without_tracebacks(exdir, tmp_path):
    """A terminal's Ctrl-C goes to the whole foreground process group, often while a re-check
    runs: `course watch` stops with exit 0 and no traceback of its own, of a worker being set
    up in a folder the grader just removed, or of a zygote sent one command too many (a new
    student saw them in a terminal, 6 times in 8, on a softmax re-check; this machine did not
    reproduce them with the fixes removed, at delays from 0 to 1 s: a guard, not a proof)."""
    w = Watcher("1", "--dir", str(exdir), cwd=tmp_path, new_session=True)
    try:
        w.wait_for("Watching")
        shutil.copy(SOLUTIONS / TOPIC1, exdir / TOPIC1)
        end = time.monotonic() + 120
        while "re-checking" not in w.text and time.monotonic() < end:
            os.utime(exdir / TOPIC1)  # a save the watcher was not yet ready for
            time.sleep(0.5)
        time.sleep(0.3)  # the re-check's workers are being forked and fed
        os.killpg(w.proc.pid, signal.SIGINT)
        rc = w.proc.wait(60)
        time.sleep(0.5)  # the reader thread takes the last lines
    finally:
        w.close()
    assert rc == 0, w.text
    assert "Traceback" not in w.text and "Error" not in w.text, w.text
    assert "Stopped watching." in w.text


def test_watch_usage_errors(exdir, tmp_path):
    assert cli.main(["watch", "eigen", "--dir", str(exdir)]) == 2
    assert cli.main(["watch", "--dir", str(tmp_path / "nope")]) == 2
