"""The limits of a worker and of a submission: one model, shared by both sides.

The grader (trusted) sends them with each fork; the worker (untrusted side) applies them. They
live here, not in :mod:`autograder.sandbox.worker`, so the judging side never imports the module that
runs student code. Defaults: docs/design/interface.md, limits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Limits:
    """Resource limits of one worker (docs/design/interface.md, limits)."""

    call_seconds: float = 10.0
    submission_seconds: float = 120.0
    address_space: int = 4 * 2**30
    processes: int = 64
    output_bytes: int = 2**20
    open_files: int = 256
    #: each private tmpfs folder of a worker (TMPDIR/HOME/cwd, /tmp, /var/tmp, /dev/shm)
    tmpfs_bytes: int = 256 * 2**20
    tmpfs_inodes: int = 20000

    def to_json(self) -> dict:
        return dict(self.__dict__)
