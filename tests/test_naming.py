"""One way to name things (topics, exercises) in every student command; `course check` of one
exercise; `course reset TOPIC`; `course notebook TOPIC` (issue 15, items 4-5)."""

from __future__ import annotations

import ast
import io
import sys

import nbformat
import pytest

from autograder import catalogue
from autograder.cli import app as cli
from autograder.cli import student_commands
from autograder.grading import runner
from autograder.grading import submission
from autograder.student import notebook
from autograder.student import reset as student
from tests.helpers import SOLUTIONS, course, solution_source, stub_source, write_stubs

TOPIC1 = "ex01_vectors.py"
FORMS = "ex03_softmax, ex03, ex3, 3 or softmax"  # how every "unknown topic" message says it


@pytest.fixture
def exdir(tmp_path):
    return write_stubs(tmp_path / "exercises")


class Terminal(io.StringIO):
    """A stdin that is a terminal and answers ``text``."""

    def isatty(self) -> bool:
        return True


# ---------------------------------------------------------------- names

def test_a_topic_takes_any_case_and_no_leading_zero():
    for alias in ("ex3", "EX03", "Ex3", "EX03_SOFTMAX", "ex3_softmax", "Softmax", "ex03_softmax.py",
                  " 3 "):
        assert catalogue.get_topic(alias).module == "ex03_softmax", alias
    assert catalogue.get_topic("SVD_LORA").module == "ex04_svd_lora"
    assert catalogue.get_exercise("EX3.logsumexp").qualname == "ex03_softmax.logsumexp"
    assert catalogue.get_exercise("loralinear").qualname == "ex04_svd_lora.LoRALinear"
    assert catalogue.resolve("ex1") == (catalogue.get_topic(1), None)
    assert catalogue.resolve("dot") == (catalogue.get_topic(1), catalogue.get_exercise("dot"))
    # A name that is a topic and an exercise means the topic; TOPIC.NAME the exercise.
    assert catalogue.resolve("softmax")[1] is None
    assert catalogue.resolve("ex3.softmax")[1].qualname == "ex03_softmax.softmax"


def test_unknown_names_list_the_valid_forms():
    with pytest.raises(KeyError, match=f"unknown topic 'ex9'; name a topic as {FORMS}"):
        catalogue.get_topic("ex9")
    with pytest.raises(KeyError, match="ex01_vectors has no exercise 'nope'; its exercises: "
                                       "one_hot, embedding_lookup"):
        catalogue.get_exercise("ex1.nope")
    with pytest.raises(KeyError, match=r"unknown exercise 'nope'; name an exercise as TOPIC\.NAME"):
        catalogue.get_exercise("nope")
    with pytest.raises(KeyError, match=f"unknown topic or exercise 'eigen'; name a topic as "
                                       f"{FORMS}.*or one exercise as TOPIC.NAME"):
        catalogue.resolve("eigen")


def test_every_student_command_refuses_an_unknown_name_with_exit_2(exdir, capsys):
    before = (exdir / TOPIC1).read_bytes()
    for argv in (["check", "eigen"], ["watch", "ex9"], ["reset", "eigen"],
                 ["notebook", "ex9"], ["notebook", "dot"]):
        assert cli.main([*argv, "--dir", str(exdir)]) == 2, argv
        assert FORMS in capsys.readouterr().err, argv
    assert cli.main(["hint", "eigen"]) == 2
    assert (exdir / TOPIC1).read_bytes() == before and not (exdir / ".backup").exists()
    assert not list(exdir.glob("*.ipynb"))
    assert [t.module for t in student_commands._topics("watch", "EX3")] == ["ex03_softmax"]


# ---------------------------------------------------------------- check one exercise

def test_check_one_exercise_runs_only_its_public_tests(exdir):
    stub = stub_source("ex01_vectors")
    (exdir / TOPIC1).write_text(stub.replace(student.segment(stub, "dot"),
                                             student.segment(solution_source("ex01_vectors"),
                                                             "dot")), "utf-8")
    n_dot = sum(s.exercise == "dot" for s in runner.collect("ex01_vectors", hidden=False))
    for name in ("ex1.dot", "dot"):
        proc = course("check", name, "--dir", str(exdir))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        first = proc.stdout.splitlines()[0]
        assert first == f"Checking {exdir.resolve()} (public tests of ex01_vectors.dot only)"
        rows = [line.split("│")[1:3] for line in proc.stdout.splitlines() if "│" in line]
        assert [[c.strip() for c in r] for r in rows] == [["ex01_vectors.dot", f"{n_dot}/{n_dot}"]]
    proc = course("check", "EX1", "--dir", str(exdir))  # the whole topic: its stubs fail
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == f"Checking {exdir.resolve()} (public tests)"
    rows = [line.split("│")[1].strip() for line in proc.stdout.splitlines() if "│" in line]
    assert rows == ["ex01_vectors"]


# ---------------------------------------------------------------- reset TOPIC

def test_reset_a_whole_topic_asks_first_and_backs_the_file_up(exdir, capsys, monkeypatch):
    mine = (SOLUTIONS / TOPIC1).read_text("utf-8")
    (exdir / TOPIC1).write_text(mine, "utf-8")

    # Not a terminal and no --yes: refused, nothing touched.
    assert cli.main(["reset", "ex1", "--dir", str(exdir)]) == 2
    assert "pass --yes" in capsys.readouterr().err
    assert (exdir / TOPIC1).read_text("utf-8") == mine and not (exdir / ".backup").exists()

    # A terminal: the question, and no means no.
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(["reset", "EX01", "--dir", str(exdir)]) == 1
    assert ("Reset every exercise of ex01_vectors? Your file is backed up first. [y/N]"
            in capsys.readouterr().out)
    assert (exdir / TOPIC1).read_text("utf-8") == mine and not (exdir / ".backup").exists()

    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(["reset", "1", "--dir", str(exdir)]) == 0
    assert (exdir / TOPIC1).read_text("utf-8") == stub_source("ex01_vectors")
    [backup] = (exdir / ".backup").iterdir()
    assert backup.name.startswith(f"{TOPIC1}.") and backup.read_text("utf-8") == mine
    assert str(backup) in capsys.readouterr().out

    # Already the stub: nothing to ask, nothing backed up; --yes needs no terminal.
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert cli.main(["reset", "ex01_vectors", "--dir", str(exdir)]) == 0
    (exdir / TOPIC1).write_text(mine, "utf-8")
    assert cli.main(["reset", "vectors", "--yes", "--dir", str(exdir)]) == 0
    assert (exdir / TOPIC1).read_text("utf-8") == stub_source("ex01_vectors")
    assert len(list((exdir / ".backup").iterdir())) == 2

    # One exercise still works; a name that is also a topic says how to reset the exercise.
    assert cli.main(["reset", "ex01_vectors.dot", "--dir", str(exdir)]) == 0
    monkeypatch.setattr(sys, "stdin", Terminal(""))
    (exdir / "ex03_softmax.py").write_text("# mine\n", "utf-8")
    assert cli.main(["reset", "softmax", "--dir", str(exdir)]) == 1  # EOF: no
    assert "course reset ex03_softmax.softmax" in capsys.readouterr().out


# ---------------------------------------------------------------- notebooks

def test_notebook_of_a_topic_filled_in_passes_course_check(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    proc = course("notebook", "1", "--dir", str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = folder / "ex01_vectors.ipynb"
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    top = catalogue.get_topic(1)
    assert nb.cells[0].cell_type == "markdown"
    assert top.title in nb.cells[0].source and top.lesson_page in nb.cells[0].source
    stub = stub_source("ex01_vectors")
    as_graded = submission.notebook_to_source(path.read_bytes()).decode()
    assert ast.dump(ast.parse(as_graded)) == ast.dump(ast.parse(stub))
    # title, imports, one cell per exercise, the check cell (%course check N)
    assert len(nb.cells) == 3 + len(top.exercises)

    # Never overwritten unasked.
    proc = course("notebook", "ex1", "--dir", str(folder))
    assert proc.returncode == 1 and "already exists" in proc.stderr and "--force" in proc.stderr

    # Filled in with the solution's functions, it passes `course check`.
    solution = solution_source("ex01_vectors")
    for cell in nb.cells[2:-1]:  # the last cell is the check's magics
        for node in ast.parse(cell.source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                cell.source = cell.source.replace(student.segment(cell.source, node.name),
                                                  student.segment(solution, node.name))
    nbformat.write(nb, path)
    proc = course("check", "1", "--dir", str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Checking {folder.resolve()} (public tests)" in proc.stdout

    # --force rewrites it; a .py beside it is what gets graded, and that is said.
    (folder / TOPIC1).write_text(stub, "utf-8")
    filled_in = path.read_bytes()
    proc = course("notebook", "vectors", "--dir", str(folder), "--force")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ex01_vectors.py" in proc.stderr and ".py wins when graded" in proc.stderr
    # the notebook it replaced (filled in) is kept
    backups = list((folder / ".backup").iterdir())
    assert [b.read_bytes() for b in backups] == [filled_in]
    assert f"saved as {backups[0]}" in proc.stdout
    assert submission.notebook_to_source(path.read_bytes()).decode() == as_graded


def test_notebook_without_jupytext_holds_the_same_cells(monkeypatch):
    top = catalogue.get_topic("ex08")
    stub = stub_source(top.module)
    with_jupytext = notebook.build(top, stub)
    monkeypatch.setitem(sys.modules, "jupytext", None)  # import jupytext -> ImportError
    plain = notebook.build(top, stub)
    assert [(c.cell_type, c.source) for c in plain.cells] == \
        [(c.cell_type, c.source) for c in with_jupytext.cells]
    assert "@triton.jit" in plain.cells[2].source  # a decorated kernel keeps its decorator
