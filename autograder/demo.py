"""`course demo` (and `make demo`): grade the bundled example class and print its table.

The class is assembled in ``build/demo-class/``: the hand-written submissions of
``examples/submissions/`` plus two made at run time (docs/design/interface.md, the example class):
``complete`` (a copy of ``solutions/``) and ``stubs`` (a copy of ``exercises/``).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from autograder import catalogue

ROOT = Path(__file__).resolve().parent.parent


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


def run(out: Path, jobs: int = 2) -> int:
    from autograder import cli

    class_dir = ROOT / "build" / "demo-class"
    t0 = time.monotonic()
    assemble(class_dir)
    if out.exists():
        shutil.rmtree(out)  # the demo always grades afresh
    rc = cli.main(["grade", "--class", str(class_dir), "--out", str(out), "--jobs", str(jobs)])
    print(f"demo finished in {time.monotonic() - t0:.1f} s")
    return rc
