"""`course reset --undo` puts the newest backup back, and `course notebook` moves a topic's
``.py`` aside (backed up) instead of leaving it to win over the notebook (issue 38, item 4)."""

from __future__ import annotations

from autograder.cli import app as cli
from autograder.student import reset
from tests.helpers import stub_source


def test_undo_restores_the_last_reset_and_can_itself_be_undone(tmp_path, capsys):
    folder = tmp_path / "exercises"
    folder.mkdir()
    mine = stub_source("ex03_softmax").replace("raise NotImplementedError", "return 1  # mine", 1)
    path = folder / "ex03_softmax.py"
    path.write_text(mine)
    assert cli.main(["reset", "3", "--yes", "--dir", str(folder)]) == 0
    assert path.read_text() == stub_source("ex03_softmax")
    capsys.readouterr()

    assert cli.main(["reset", "--undo", "--dir", str(folder)]) == 0
    assert path.read_text() == mine
    out = capsys.readouterr().out
    assert f"{path} restored from" in out and "the file it replaced is saved as" in out
    # the stub it replaced was backed up: undo again, and the stub is back
    assert cli.main(["reset", "--undo", "3", "--dir", str(folder)]) == 0
    assert path.read_text() == stub_source("ex03_softmax")


def test_undo_without_a_backup_or_with_an_unknown_topic_says_so(tmp_path, capsys):
    assert cli.main(["reset", "--undo", "--dir", str(tmp_path)]) == 1
    assert "no backup to restore" in capsys.readouterr().err
    assert cli.main(["reset", "--undo", "nope", "--dir", str(tmp_path)]) == 2
    assert cli.main(["reset", "--dir", str(tmp_path)]) == 2
    assert "--undo" in capsys.readouterr().err


def test_the_newest_backup_is_found_by_the_time_in_its_name(tmp_path):
    backups = tmp_path / ".backup"
    backups.mkdir()
    for name in ("ex03_softmax.py.20260101-120000", "ex03_softmax.py.20260101-120000-2",
                 "ex03_softmax.py.20250101-235959", "ex01_vectors.py.20270101-000000"):
        (backups / name).write_text(name)
    assert reset.last_backup(tmp_path).name == "ex01_vectors.py.20270101-000000"
    assert reset.last_backup(tmp_path, reset.catalogue.get_topic(3)).name == \
        "ex03_softmax.py.20260101-120000-2"


def test_notebook_moves_the_py_aside_when_asked(tmp_path, capsys):
    folder = tmp_path / "exercises"
    folder.mkdir()
    py = folder / "ex03_softmax.py"
    py.write_text("# my work\n")
    assert cli.main(["notebook", "3", "--dir", str(folder), "--move-py"]) == 0
    out = capsys.readouterr()
    assert not py.exists() and (folder / "ex03_softmax.ipynb").exists()
    assert "moved aside to" in out.out and "warning" not in out.err
    # nothing lost: reset --undo brings it back
    assert cli.main(["reset", "--undo", "--dir", str(folder)]) == 0
    assert py.read_text() == "# my work\n"


def test_notebook_leaves_the_py_where_nobody_can_be_asked(tmp_path, capsys):
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "ex03_softmax.py").write_text("# my work\n")
    assert cli.main(["notebook", "3", "--dir", str(folder)]) == 0  # stdin is not a terminal
    assert (folder / "ex03_softmax.py").exists()
    assert "--move-py" in capsys.readouterr().err


def test_move_py_moves_the_py_when_the_notebook_is_there_already(tmp_path, capsys):
    """`course notebook 3`, then `course notebook 3 --move-py` as its warning says: the second
    moves the .py and keeps the notebook (it said 'already exists; nothing written')."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    py = folder / "ex03_softmax.py"
    py.write_text("# my work\n")
    assert cli.main(["notebook", "3", "--dir", str(folder)]) == 0
    nb = folder / "ex03_softmax.ipynb"
    nb.write_text(nb.read_text() + " ")  # the student's notebook, not to be overwritten
    mine = nb.read_text()
    capsys.readouterr()
    assert cli.main(["notebook", "3", "--dir", str(folder), "--move-py"]) == 0
    assert not py.exists() and nb.read_text() == mine
    assert "moved aside to" in capsys.readouterr().out
