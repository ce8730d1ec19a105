"""What a worker may see and do, beyond rlimits (docs/design/grading-contract.md §3,
docs/design/threat-model.md).

As root (CI, Gradescope), a forked worker enters new mount and network namespaces, hides the
instructor's paths under empty read-only tmpfs mounts, and drops to its slot's own unprivileged
uid. Where namespaces are refused (some containers) it still drops to the slot uid; where the
grader is not root (a laptop) only the process split and rlimits apply, and file-system isolation
is best effort (the README says so).
"""

from __future__ import annotations

import os
import tempfile

from autograder.host import is_root, needed_paths
from autograder.sandbox import host_counters
from autograder.sandbox.libc import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
)
from autograder.sandbox.libc import handle as _libc_handle

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
#: World-writable folders: each worker gets empty private ones (see ``_private_tmp``).
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def _hide(path: str) -> bool:
    libc = _libc_handle()
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    return libc.mount(b"none", path.encode(), b"tmpfs", flags, b"size=4k,mode=000") == 0


def _blocking_ancestor(path: str) -> tuple[str, str] | None:
    """The first ancestor of ``path`` that others cannot traverse, and its child on the way."""
    parts = path.strip("/").split("/")
    cur = "/"
    for part in parts:
        try:
            if not os.stat(cur).st_mode & 0o001:
                return cur, part
        except OSError:
            return None
        cur = os.path.join(cur, part)
    return None


def _expose(paths: list[str], scratch: str) -> list[str]:
    """In our private mount namespace, let other uids reach ``paths`` through closed parents.

    A parent such as ``/root`` (0700) is covered with an empty 0755 tmpfs into which only the
    needed children are bind-mounted back: the host's permissions are never changed, and the
    rest of that parent stays invisible.
    """
    libc = _libc_handle()
    exposed: list[str] = []
    # Staging mounts live on a tmpfs inside the worker's own temp dir: nothing on the host.
    os.makedirs(scratch, exist_ok=True)
    if libc.mount(b"none", scratch.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=64k") != 0:
        return exposed
    for _ in range(8):  # nested closed parents are opened one level per round
        blocked: dict[str, set[str]] = {}
        for p in paths:
            hit = _blocking_ancestor(p)
            if hit:
                blocked.setdefault(hit[0], set()).add(hit[1])
        if not blocked:
            break
        for parent, children in sorted(blocked.items()):
            stage = tempfile.mkdtemp(prefix="stage-", dir=scratch)
            staged = []
            for child in sorted(children):
                src = os.path.join(parent, child)
                dst = os.path.join(stage, child)
                os.mkdir(dst) if os.path.isdir(src) else open(dst, "w").close()
                if libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None) == 0:
                    staged.append(child)
            if libc.mount(b"none", parent.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                          b"size=64k,mode=755") != 0:
                return exposed
            for child in staged:
                src, dst = os.path.join(stage, child), os.path.join(parent, child)
                os.mkdir(dst) if os.path.isdir(src) else open(dst, "w").close()
                libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None)
            exposed.append(parent)
    return exposed


def _private_tmp(keep: list[str], limits: dict | None = None) -> list[str]:
    """In our mount namespace, cover the world-writable folders with empty tmpfs mounts.

    A file a worker leaves in /tmp or /dev/shm would otherwise be readable by another slot's
    worker, and would persist for the next submission of its own slot (a poisoned cache, say).
    What the worker needs below them (a venv under /tmp, its own workdir) is bind-mounted back
    from the covered folder, reached through a file descriptor opened before covering it.
    """
    libc = _libc_handle()
    done: list[str] = []
    for folder in SHARED_TMP:
        if os.path.islink(folder) or not os.path.isdir(folder):
            continue
        real = os.path.realpath(folder)
        inside = sorted({os.path.realpath(p) for p in keep
                         if os.path.realpath(p).startswith(real + "/")})
        inside = [p for p in inside if not any(p.startswith(q + "/") for q in inside)]
        if any(os.path.realpath(p) == real for p in keep):
            continue
        old = os.open(real, os.O_PATH | os.O_DIRECTORY)
        try:
            if libc.mount(b"none", real.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                          _tmpfs_options(limits or {}, "1777", None, None)) != 0:
                continue
            for p in inside:
                src = f"/proc/self/fd/{old}/{os.path.relpath(p, real)}"
                if os.path.isdir(src):
                    os.makedirs(p, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    open(p, "w").close()
                libc.mount(src.encode(), p.encode(), None, MS_BIND | MS_REC, None)
            done.append(real)
        finally:
            os.close(old)
    return done


def _private_proc() -> bool:
    """In our mount namespace, a /proc of our own that lists only our own uid's processes.

    Red team: a hidden test's worker put that test's inputs in a child's command line, and
    another submission's public-test worker, graded at the same time on another slot, read it
    from /proc and raised it in a visible message. ``hidepid=2`` hides other uids' processes
    (each slot's workers have their own uid). Only on Linux 5.8 and later, where each proc
    mount has its own options: before, the option would change the host's /proc too.
    """
    try:
        release = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    if release < (5, 8):
        return False
    return _libc_handle().mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                b"hidepid=2") == 0


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (the uid change clears it: call it after)."""
    import signal

    _libc_handle().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def prefer_killing_me(score: int) -> None:
    """Set this process's OOM score adjustment (-1000: never .. 1000: first); best effort.

    Where the slot's memory cap (autograder.driver.cgroups) is hit, the kernel's OOM killer
    picks by this score: the workers set 1000, the zygote -1000.
    """
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(score))
    except OSError:
        pass


def become_subreaper() -> None:
    """Orphans of our descendants get us as their parent (so we can find and kill them)."""
    _libc_handle().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reachable_by_others(paths: list[str]) -> bool:
    """Whether another uid can traverse every parent folder of each of ``paths``."""
    return all(_blocking_ancestor(p) is None for p in paths)


def _tmpfs_options(limits: dict, mode: str, uid: int | None, gid: int | None) -> bytes:
    """A private tmpfs's options: size and inode caps (a full one fails the student's own
    write, never another slot's), its mode and, as root, its owner."""
    opts = (f"size={int(limits.get('tmpfs_bytes', 256 * 2**20))},"
            f"nr_inodes={int(limits.get('tmpfs_inodes', 20000))},mode={mode}")
    if uid is not None:
        opts += f",uid={uid},gid={gid}"
    return opts.encode()


def _private_scratch(cmd: dict, uid: int | None, gid: int | None) -> bool:
    """The worker's TMPDIR/HOME/cwd (``workdir/tmp``) becomes a capped tmpfs of its own.

    Red team: 1,200 files of 1 MiB each landed on the host's disk, ``RLIMIT_FSIZE`` capping
    one file only. Now nothing a worker writes reaches a disk (tmpfs pages count against the
    slot's memory cap too: autograder.driver.cgroups).
    """
    scratch = os.path.join(cmd["workdir"], "tmp")
    opts = _tmpfs_options(cmd.get("limits", {}), "0700", uid, gid)
    return _libc_handle().mount(b"none", scratch.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                                opts) == 0


def _no_ptys() -> bool:
    """Take pseudo-terminals away: ptys count against one limit for the whole host
    (``kernel.pty.max``), private devpts instances included, so 64 processes opening 256
    each could leave none for anyone else for the submission's 120 s (red team). Nothing a
    submission needs uses one. ``/dev/pts`` is covered by an empty read-only tmpfs, and
    ``/dev/ptmx``, where it is a device rather than a link into ``/dev/pts``, by /dev/null.
    """
    libc = _libc_handle()
    ok = True
    if os.path.isdir("/dev/pts"):
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        ok = libc.mount(b"none", b"/dev/pts", b"tmpfs", flags, b"size=4k,mode=000") == 0
    if os.path.exists("/dev/ptmx") and not os.path.islink("/dev/ptmx"):
        ok = libc.mount(b"/dev/null", b"/dev/ptmx", None, MS_BIND, None) == 0 and ok
    return ok


def _read_only(path: str) -> bool:
    """Make ``path`` read-only in our mount namespace (a bind onto itself, remounted)."""
    libc = _libc_handle()
    if libc.mount(path.encode(), path.encode(), None, MS_BIND | MS_REC, None) != 0:
        return False
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
    return libc.mount(b"none", path.encode(), None, flags, None) == 0


def enter(cmd: dict) -> dict:
    """Called in the forked worker before any student code runs. Returns what was applied.

    As root: new mount, network and IPC namespaces; under bubblewrap (``cmd["allowlist"]``,
    autograder.driver.allowlist) the view is already an allow-list, otherwise the instructor's
    folders are covered (the deny-list of :func:`secret_paths`); either way the submission is
    read-only, TMPDIR/HOME/cwd and the world-writable folders are private capped tmpfs
    mounts, /proc shows only the slot's own processes (only the worker's own, in its own PID
    namespace: :class:`PidNamespaces`) and the host-wide counters frozen
    (:data:`PROC_COUNTERS`), and the worker drops to the slot uid.
    """
    applied = {"namespaces": False, "hidden": [], "uid": os.geteuid(),
               "allowlist": bool(cmd.get("allowlist"))}
    if not is_root():
        return applied
    libc = _libc_handle()
    needed = needed_paths() + [cmd["workdir"]]
    uid, gid = cmd.get("uid"), cmd.get("gid")
    # CLONE_NEWIPC: no System V / POSIX IPC object is shared with another worker either.
    if libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) == 0:
        applied["namespaces"] = True
        libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
        if not applied["allowlist"]:
            applied["exposed"] = _expose(needed, os.path.join(cmd["workdir"], ".stage"))
            for p in cmd.get("hide", []):
                if _holds_needed(p, needed):
                    continue  # e.g. a submission's folder that also holds the venv
                if _hide(p):
                    applied["hidden"].append(p)
        # /tmp first: in the deny-list path the workdir is below it, bound back in.
        applied["private_tmp"] = _private_tmp(needed, cmd.get("limits", {}))
        applied["no_ptys"] = _no_ptys()
        applied["scratch"] = _private_scratch(cmd, uid, gid)
        applied["read_only_submission"] = _read_only(cmd["sub_dir"])
        applied["private_proc"] = _private_proc()
        applied["frozen_proc"] = host_counters.freeze_proc_counters(
            os.path.join(cmd["workdir"], ".proc"))
        _kept_or_raise(applied, cmd, needed)
    if uid is not None and not reachable_by_others(needed):
        # No namespace to open the interpreter's closed parents in (some containers): the
        # slot uid could not even import the standard library, so stay root, rlimited.
        uid = None
    if uid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        applied["uid"] = uid
    return applied


def _holds_needed(path: str, needed: list[str]) -> bool:
    """Whether ``path`` is, or holds, a path the worker needs (it is then left uncovered)."""
    return any(n == path or n.startswith(path.rstrip("/") + "/") for n in needed)


class IsolationIncomplete(RuntimeError):
    """A cover this view promises could not be mounted in this worker: it must not run any
    submission code (the worker exits; the grader reports the worker's death)."""


def _kept_or_raise(applied: dict, cmd: dict, needed: list[str]) -> None:
    """Fail closed where the namespace view's promises did not hold: an instructor folder
    (``cmd["hide"]``, in the deny-list view) still there but not covered, or ptys not taken
    away. A mount that fails is otherwise silent, and the worker would run with the folder
    readable to its uid.

    Raises:
        IsolationIncomplete: naming what was left uncovered.
    """
    missed = []
    if not applied["allowlist"]:
        for p in cmd.get("hide", []):
            if p not in applied["hidden"] and os.path.lexists(p) and not _holds_needed(p, needed):
                missed.append(p)
    if not applied["no_ptys"]:
        missed.append("/dev/pts and /dev/ptmx")
    if missed:
        raise IsolationIncomplete(f"could not cover {', '.join(missed)}")


def nproc_cap(n: int) -> int:
    """RLIMIT_NPROC counts every process of the uid: as a shared uid, leave room for the rest."""
    if is_root():
        return n  # not enforced for root; the slot uid (set before this) makes it bite
    uid = os.getuid()
    mine = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    mine += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return mine + n
