"""The C library's Linux calls that Python 3.11's ``os`` lacks (``mount``, ``umount2``,
``unshare``, ``setns``, ``prctl``), through ctypes, and the flags they take. Used by the
untrusted side only, before student code runs (autograder.sandbox.isolation, host_counters).
"""

from __future__ import annotations

import ctypes
import ctypes.util

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 1 << 18
MNT_DETACH = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000

_libc: ctypes.CDLL | None = None


def handle() -> ctypes.CDLL:
    """The C library, loaded once, with ``errno`` kept for ``ctypes.get_errno()``."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc
