"""The host-wide phase lock: no hidden-phase worker runs while a public-phase worker runs,
whichever grader on this machine started them.

Kernel state that every worker's view shares (a futex word keyed by a shared file's inode and
offset, host-wide counters) lets two processes that run at the same time signal to each
other, and no filter closes every such channel (docs/design/threat-model.md, phases). What
closes the kind is time: a worker that holds a hidden input never runs beside a worker whose
output reaches a student. Within one batch the sweeps order it (:mod:`autograder.grading.batch`);
across graders on one kernel this lock does: a public phase holds it shared, a hidden phase
holds it exclusively, for as long as that phase's workers live. Only graders that run a hidden
phase take it (``course grade``, Gradescope's run): a public-only check holds no hidden input,
and where students run code of their own on the grading host, any of their processes could
listen without a grader, so the lock would order nothing that matters there.

The lock is ``flock(2)`` on :data:`LOCK_NAME` in the system's run folder (``/run/lock``, or the
temp folder where that is not writable). It is a lock between graders, which are trusted: no
worker's view contains it (an allow-list view holds no ``/run`` and a private ``/tmp``; the
worker filter refuses ``flock`` too), so no submission can take or hold it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
from typing import Iterator

#: The lock file's name, in :func:`lock_path`'s folder.
LOCK_NAME = "course-grading-phases.lock"

#: Set to another path to give a set of graders a lock of their own (the repository's
#: parallel test workers are not adversaries of each other: tests/conftest.py). Every real
#: grader of a host must use the default.
LOCK_ENV = "COURSE_PHASE_LOCK"


def lock_path() -> str:
    """Where the lock lives: ``$COURSE_PHASE_LOCK``, else ``/run/lock`` (root's, and on
    Debian writable by every user) or, failing that, the temp folder."""
    override = os.environ.get(LOCK_ENV)
    if override:
        return override
    for folder in ("/run/lock", tempfile.gettempdir()):
        if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return os.path.join(folder, LOCK_NAME)
    return os.path.join(tempfile.gettempdir(), LOCK_NAME)


def _open(path: str) -> int:
    """A descriptor to lock ``path`` with: created world-readable (graders of every user share
    it); ``flock`` needs only read access, so another user's file serves as well."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except PermissionError:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    return fd


@contextlib.contextmanager
def phase_lock(phase: str) -> Iterator[None]:
    """Hold the host-wide lock for ``phase``: shared for ``"public"``, exclusive for
    ``"hidden"``. Blocks until it is granted (another grader's phase of the other kind ends).

    The caller must hold it until every worker of the phase is reaped, and must not hold it
    already in this process for the other phase (``flock`` would convert the lock, not nest it).

    Raises:
        ValueError: ``phase`` is neither "public" nor "hidden".
        OSError: the lock file cannot be opened (a path that is a symlink, a folder, …).
    """
    if phase not in ("public", "hidden"):
        raise ValueError(f"phase must be 'public' or 'hidden', not {phase!r}")
    fd = _open(lock_path())
    mode = fcntl.LOCK_SH if phase == "public" else fcntl.LOCK_EX
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            # Another grader of this machine is in the other phase: say why nothing moves.
            print(f"waiting for another grader on this machine to finish its "
                  f"{'hidden' if phase == 'public' else 'public'} tests (the phases of two "
                  f"graders never overlap: {lock_path()})", file=sys.stderr, flush=True)
            fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # releases the lock
