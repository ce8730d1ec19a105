"""The example class of `course demo` (and `make demo`), which `autograder.cli.app` grades.

The class is assembled in ``build/demo-class/``: the hand-written submissions of
``examples/submissions/`` plus two made at run time (docs/design/interface.md, the example class):
``complete`` (a copy of ``solutions/``) and ``stubs`` (a copy of ``exercises/``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder import catalogue, paths

ROOT = paths.ROOT


def assemble(dest: Path, root: Path = ROOT) -> list[Path]:
    """Build the example class in ``dest`` (replacing it); return its submissions."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for sub in sorted((root / "examples" / "submissions").iterdir()):
        if sub.is_dir():
            shutil.copytree(sub, dest / sub.name)
    for name, src in (("complete", root / "solutions"), ("stubs", root / "exercises")):
        (dest / name).mkdir()
        for t in catalogue.topics():
            if (src / t.filename).exists():
                shutil.copy2(src / t.filename, dest / name / t.filename)
    return sorted(dest.iterdir())


def prepare(out: Path) -> Path:
    """Assemble the example class in ``build/demo-class/`` and clear ``out`` (the demo always
    grades afresh); return the class folder for ``course grade --class``."""
    class_dir = ROOT / "build" / "demo-class"
    assemble(class_dir)
    if out.exists():
        shutil.rmtree(out)
    return class_dir
