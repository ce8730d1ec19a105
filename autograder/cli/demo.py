"""The example class of `course demo` (and `make demo`), which `autograder.cli.app` grades.

The class is assembled in ``build/demo-class/``: the hand-written submissions of
``examples/submissions/`` plus two made at run time (docs/design/interface.md, the example class):
``complete`` (a copy of ``solutions/``) and ``stubs`` (generated from them, as `course stubs`
writes ``exercises/``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder import catalogue, paths
from autograder.authoring import stubs

ROOT = paths.ROOT


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
