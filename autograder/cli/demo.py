"""The example class of `course demo` (and `make demo`), which `autograder.cli.app` grades.

The class is assembled in ``build/demo-class/``: the hand-written submissions of
``examples/submissions/`` plus two made at run time (docs/design/interface.md, the example class):
``complete`` (a copy of ``solutions/``) and ``stubs`` (generated from them, as `course stubs`
writes ``exercises/``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import catalogue, paths
from autograder.authoring import stubs

if TYPE_CHECKING:
    from rich.table import Table

ROOT = paths.ROOT

#: What each submission of the example class shows, in the order the grade table lists them.
LEGEND = {
    "complete": "the reference solutions: every topic, full marks",
    "exit_on_import": "tries to end the grading process (os._exit on import in topic 1, "
                      "sys.exit in a topic 2 call): only its own worker ends, those topics "
                      "score 0",
    "infinite_loop": "right dot products, a normalize_rows that never returns: cut off at the "
                     "time limit, its other tests still graded",
    "monkeypatch_numpy": "patches NumPy's comparisons to pass everything: the checks run outside "
                         "its process, so it gains nothing",
    "partly_right_a": "topic 1 written independently, right but for entries near 1e200 "
                      "(its norms overflow); topic 3's softmax without subtracting the maximum",
    "partly_right_b": "topic 1 mostly right (negative ids wrap around, the cosine not clipped): "
                      "some tests fail",
    "stubs": "the untouched stubs (`course stubs`): every test raises NotImplementedError, 0",
    "syntax_error": "a SyntaxError in topic 1: that topic does not import, 0",
}
#: What the status column's ``partial`` means (the word is the interface's: grades.csv).
PARTIAL = ("partial = some topic missing, did not import or timed out (most examples hand in "
           "only some topics); ok = every topic ran; error = nothing could be graded")


def topics_line() -> str:
    """The grade table's column heads spelled out: ``ex01 = vectors, ex02 = projections, …``
    (a new user met ``ex01``…``ex08`` with no names)."""
    return ", ".join(f"{m[:4]} = {m[5:].replace('_', ' ')}" for m in catalogue.topic_modules())


def legend_lines() -> list[str]:
    """The legend `course demo` prints under its grade table: one ``"name: what it shows"``
    line per example submission, then what the status ``partial`` means and the topics."""
    return ([f"{name}: {what}" for name, what in LEGEND.items()] + [PARTIAL]
            + [f"topics: {topics_line()}"])


def legend() -> "Table":
    """:func:`legend_lines` as a borderless two-column rich table (long lines wrap in their
    column, the names stay aligned)."""
    from rich.table import Table

    t = Table.grid(padding=(0, 2))
    t.title = "What each example submission shows"
    t.title_justify = "left"
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for name, what in LEGEND.items():
        t.add_row(name, what)
    t.add_row("", "")
    t.add_row("status", PARTIAL)
    t.add_row("topics", topics_line())
    return t


def print_legend(console) -> None:
    """Print :func:`legend` on the rich ``console`` (under the demo's grade table)."""
    console.print(legend())


def assemble(dest: Path, root: Path = ROOT) -> list[Path]:
    """Build the example class in ``dest`` (replacing it); return its submissions."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for sub in sorted((root / "examples" / "submissions").iterdir()):
        if sub.is_dir():
            shutil.copytree(sub, dest / sub.name)
    (dest / "complete").mkdir()
    (dest / "stubs").mkdir()
    for t in catalogue.topics():
        if (root / "solutions" / t.filename).exists():
            shutil.copy2(root / "solutions" / t.filename, dest / "complete" / t.filename)
    # The stubs as `course stubs` makes them, not the working copy's exercises/: a student's
    # edits (or `course reset`'s backups) there must not change the example's grades.
    for path, text in stubs.generate_all(root).items():
        (dest / "stubs" / path.name).write_text(text, encoding="utf-8")
    return sorted(dest.iterdir())


def prepare(out: Path) -> Path:
    """Assemble the example class in ``build/demo-class/`` and clear ``out`` (the demo always
    grades afresh); return the class folder for ``course grade --class``."""
    class_dir = ROOT / "build" / "demo-class"
    assemble(class_dir)
    if out.exists():
        shutil.rmtree(out)
    return class_dir
