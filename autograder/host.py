"""The host as the sandbox sees it, from either side: whether the grader is root, where the
package's checkout is, which folders no worker may read and which the interpreter needs.

Read by the trusted side (:mod:`autograder.driver.slot` hides the secret folders from the zygote,
:mod:`autograder.driver.allowlist` builds the zygote's view) and by the worker before it runs
student code (:mod:`autograder.sandbox.isolation`, :mod:`autograder.sandbox.interpreter`). Facts
only: nothing here changes the process or the machine.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from autograder.paths import PACKAGE_DIR


def repo_root() -> str:
    """The folder holding the package (a checkout's root): the workers' ``PYTHONPATH``."""
    return str(PACKAGE_DIR.parent)


def secret_paths(extra: list[str] | None = None) -> list[str]:
    """Folders no worker may read: solutions, suites, the repo's tests and examples, and extras.

    In a checkout, every other top-level folder too but the package itself and those holding
    the interpreter (``.venv``): ``.git`` holds every committed solution and hidden test as a
    loose object, ``build/`` a demo class with a copy of the solutions (hostile battery:
    crawl_repo).
    """
    root = PACKAGE_DIR.parent
    paths = [root / "solutions", root / "tests", root / "examples", PACKAGE_DIR / "suites"]
    if _is_file(root / "pyproject.toml"):
        keep = [os.path.realpath(p) for p in needed_paths()]
        for child in _children(root):
            real = os.path.realpath(child)
            if (child.is_dir() and not child.is_symlink() and child != PACKAGE_DIR
                    and not any(k == real or k.startswith(real + "/") for k in keep)):
                paths.append(child)
    out = [str(p) for p in paths if _is_dir(p)]
    out += [os.path.realpath(p) for p in (extra or []) if _is_dir(p)]
    return sorted(set(out))


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except OSError:
        return False


def _children(p: Path) -> list[Path]:
    try:
        return list(p.iterdir())
    except OSError:
        return []


def _is_dir(p: str | Path) -> bool:
    # A checkout in a 0700 folder of another user raises here instead of answering False.
    try:
        return os.path.isdir(p)
    except OSError:
        return False


def is_root() -> bool:
    """Whether the grader runs as root (CI, Gradescope): slot uids, namespaces and cgroups
    apply only then (docs/design/threat-model.md)."""
    return os.geteuid() == 0



def needed_paths() -> list[str]:
    """What the worker's interpreter must still reach after it drops to the slot uid: the
    Python installation, the venv and every folder on ``sys.path`` (real paths, sorted)."""
    paths = {sys.base_prefix, sys.prefix, sys.exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sysconfig.get_paths().values())
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
