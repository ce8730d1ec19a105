"""The worker's interpreter made the student's, just before it serves requests: run in the
forked worker (:func:`autograder.sandbox.worker.child_main`) after isolation and limits.

The untrusted side: it runs in the process that will hold student code, and a submission can
undo what it does there (the finder below, say). What holds without root is only best effort:
docs/design/threat-model.md says so; as root the instructor's folders are not even in view.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

from autograder.host import repo_root, secret_paths


def prepare(sub_dir: str) -> None:
    """Make this (forked, isolated) interpreter the student's: ``sub_dir`` first on
    ``sys.path``, the repository and its solutions nowhere, the instructor's modules gone
    from ``sys.modules`` and refused at import, scratch files in the worker's private folder,
    output line-buffered, torch on one thread, Triton's folders private (:func:`triton_folders`)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    # Scratch files go to the worker's private dir, which is removed after the submission
    # (its ``tmp``: the worker may not write next to the grader's output.txt).
    scratch = os.path.join(os.path.dirname(sub_dir), "tmp")
    os.environ["TMPDIR"] = os.environ["HOME"] = scratch if os.path.isdir(scratch) else sub_dir
    tempfile.tempdir = None
    triton_folders(os.environ["HOME"])
    # Line-buffered: a worker ends with SIGKILL, which would drop what print() left in the
    # buffer (the student's output would then depend on when the buffer happened to fill).
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
    torch = sys.modules.get("torch")
    if torch is not None:
        # docs/design/measured-facts.md: a child forked after a multi-threaded torch op hangs
        # unless it goes single-threaded.
        torch.set_num_threads(1)
    repo = repo_root()
    secret = secret_paths()
    sys.path[:] = [sub_dir] + [
        p for p in sys.path
        if p and p != "." and os.path.realpath(p) != repo and not _under(p, secret)
    ]
    for name in list(sys.modules):
        if _instructors(name):
            del sys.modules[name]
    # ``autograder.suites`` stays reachable through the package's own path. As root its folder
    # is hidden; without root (a laptop) this finder is the best effort (the student can
    # remove it: docs/design/threat-model.md says file-system isolation is best effort there).
    sys.meta_path.insert(0, _RefuseInstructors())
    sys.dont_write_bytecode = True


#: Where Triton 3.9 writes (``triton/knobs.py``): its home, and below it the kernel cache,
#: the IR dumps and the kernel overrides. ``TRITON_HOME``'s default is read once, when the zygote
#: imports triton, from the *zygote's* HOME (the grader's own, not the worker's private one), so
#: each one is set here; the three folders are set too, not left to follow the home, so that
#: none can point elsewhere.
TRITON_FOLDERS = {"TRITON_HOME": "", "TRITON_CACHE_DIR": ".triton/cache",
                  "TRITON_DUMP_DIR": ".triton/dump", "TRITON_OVERRIDE_DIR": ".triton/override"}
#: Triton variables that would send its cache elsewhere (a cache class of one's choosing, a
#: remote cache): never set in a worker (the zygote's environment holds none either).
TRITON_ELSEWHERE = ("TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND")


def triton_folders(home: str) -> dict[str, str]:
    """Point every folder Triton writes into ``home`` (the worker's private folder), before
    any student code runs; the variables set, by name.

    Triton reads them from the environment at each use (``triton.knobs.env_str``), so a cache
    file one submission writes lands in its own folder, which is gone before the next
    submission starts, and nothing reaches the grader's ``~/.triton``
    (docs/design/threat-model.md, Triton kernels). Whether triton is installed does not
    matter: only variables are set.
    """
    folders = {name: os.path.join(home, sub) if sub else home
               for name, sub in TRITON_FOLDERS.items()}
    os.environ.update(folders)
    for name in TRITON_ELSEWHERE:
        os.environ.pop(name, None)
    return folders


def _instructors(name: str) -> bool:
    return name.split(".")[0] in ("solutions", "tests") or name.startswith("autograder.suites")


class _RefuseInstructors:
    """A meta path finder that refuses the instructor's modules."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if _instructors(name):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def _under(path: str, roots: list[str]) -> bool:
    p = os.path.realpath(path)
    return any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)
