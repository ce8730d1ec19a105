"""The kernel's counters for the whole host, which one worker could move and a later one read
(docs/design/threat-model.md, "Counters the host keeps").

Third red team: a hidden-phase worker started threads until the host's last PID handed out was
``16 * input (mod 4096)``, and the next submission's public worker read it back from
``/proc/loadavg`` (or from its own PID) and quoted it in its public feedback. Two measures, both
set up in the zygote and applied to each worker by :func:`autograder.sandbox.isolation.enter`:
each worker gets a PID namespace of its own (:class:`PidNamespaces`), and sees the files of
:data:`PROC_COUNTERS` frozen as they were when its slot started (:func:`freeze_proc_counters`).
Both need root; they are the grader's own code, and no student code runs here.
"""

from __future__ import annotations

import os
import shutil

from autograder.host import is_root
from autograder.sandbox.libc import (CLONE_NEWPID, MNT_DETACH, MS_BIND, MS_NODEV, MS_NOEXEC,
                                     MS_NOSUID)
from autograder.sandbox.libc import handle as _libc_handle

#: Files of /proc that show counters the kernel keeps for the whole host, which one worker can
#: move and a later one read (third red team: a hidden-phase worker set the last PID handed out
#: to ``16 * input``, and the next submission's public worker read it from ``/proc/loadavg``):
#: processes forked and context switches (``stat``), dentries and inodes left by path lookups
#: (``sys/fs/*``), the page cache and slabs (``meminfo``, ``vmstat``, ``zoneinfo``,
#: ``buddyinfo``), I/O, interrupt and scheduler tallies, and pressure stall totals. A worker sees
#: each frozen as the zygote read it when its slot started (:func:`proc_snapshot`), so none
#: moves; nothing a submission needs reads them but ``os.cpu_count()``, whose ``cpu`` lines of
#: ``stat`` stay as they were.
PROC_COUNTERS = ("loadavg", "stat", "meminfo", "vmstat", "zoneinfo", "buddyinfo", "uptime",
                 "schedstat", "diskstats", "softirqs", "interrupts", "sys/fs/dentry-state",
                 "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/file-nr", "sys/fs/aio-nr",
                 "pressure/cpu", "pressure/io", "pressure/memory", "pressure/irq")


def proc_snapshot() -> dict[str, bytes]:
    """The world-readable :data:`PROC_COUNTERS` as they are now: read once by the zygote when its
    slot starts (before any worker ran), then bound over the live files in every worker
    (:func:`freeze_proc_counters`). Files that are missing, or that only root may read (the
    slot uid could not read the live one either), are left out."""
    snapshot = {}
    for rel in PROC_COUNTERS:
        path = "/proc/" + rel
        try:
            if not os.stat(path).st_mode & 0o004:
                continue
            with open(path, "rb") as f:
                snapshot[rel] = f.read(1 << 20)
        except OSError:
            continue
    return snapshot


#: What :func:`freeze_proc_counters` binds over the live counters; the zygote fills it (:func:`proc_snapshot`)
#: before it forks, so every worker inherits the same one.
PROC_SNAPSHOT: dict[str, bytes] = {}


def freeze_proc_counters(stage: str, snapshot: dict[str, bytes] | None = None) -> list[str]:
    """In our mount namespace, bind a read-only copy of ``snapshot`` (by default
    :data:`PROC_SNAPSHOT`) over each live counter.

    The copies are written on a small tmpfs mounted at ``stage`` and bound one by one; the
    tmpfs is then detached from ``stage`` (the binds keep their files), so no folder of the
    worker's shows them. Returns the files covered (relative to ``/proc``).
    """
    libc = _libc_handle()
    snapshot = PROC_SNAPSHOT if snapshot is None else snapshot
    covered: list[str] = []
    if not snapshot:
        return covered
    os.makedirs(stage, exist_ok=True)
    if libc.mount(b"none", stage.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  b"size=4m,mode=0700") != 0:
        return covered
    try:
        for rel, data in snapshot.items():
            target = "/proc/" + rel
            if not os.path.isfile(target):
                continue
            copy = os.path.join(stage, rel.replace("/", "_"))
            with open(copy, "wb") as f:
                f.write(data)
            os.chmod(copy, 0o444)
            if libc.mount(copy.encode(), target.encode(), None, MS_BIND, None) == 0:
                covered.append(rel)
    finally:
        libc.umount2(stage.encode(), MNT_DETACH)
    return covered


class PidNamespaces:
    """A PID namespace of its own for each worker the zygote forks (as root, where the kernel
    allows it): the worker's PIDs, its threads' ids and the namespace's last-PID counter then
    start afresh for every submission, so a worker cannot read how many processes an earlier
    one started (the third red team's PID-counter channel, docs/design/threat-model.md).

    Before each fork, :meth:`prepare` unshares a new namespace for the zygote's next children
    and spawns its init there: ``cat`` reading a pipe whose write end only the zygote holds.
    The worker, forked next, is PID 2 of that namespace, not its init: an init ignores the
    signals it sends itself, so ``os.abort()`` would no longer end it as SIGABRT. Then
    :meth:`restore` sets the zygote's children back to its own namespace (its other forks,
    the uid killer's say, stay there). Killing the init ends every process of the namespace,
    a submission's escaped daemons too; should the zygote die, the pipe's last write end
    closes, every ``cat`` exits and the namespaces, workers included, go with it.

    Where unsharing is refused (not root, some containers) or ``cat`` is missing,
    :meth:`prepare` returns None and workers share the zygote's namespace, as before.
    """

    def __init__(self) -> None:
        self._own: int | None = None
        self._init = shutil.which("cat")
        self._alive_r, self._alive_w = os.pipe()  # both close-on-exec (PEP 446)
        try:
            self._own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass

    def prepare(self, keep_private: tuple[int, ...] = ()) -> int | None:
        """Make the zygote's next children start a new namespace and spawn its init; the init's
        PID (in the zygote's namespace), or None (nothing changed). ``keep_private``: file
        descriptors the init must not inherit (made close-on-exec here)."""
        if self._own is None or self._init is None or not is_root():
            return None
        libc = _libc_handle()
        if libc.unshare(CLONE_NEWPID) != 0:
            return None
        for fd in keep_private:
            os.set_inheritable(fd, False)
        try:
            return os.posix_spawn(self._init, [self._init], {}, setsid=True, file_actions=[
                (os.POSIX_SPAWN_DUP2, self._alive_r, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        except OSError:
            self.restore()
            return None

    def restore(self) -> None:
        """The zygote's later children are born in its own namespace again."""
        if self._own is not None:
            _libc_handle().setns(self._own, CLONE_NEWPID)
