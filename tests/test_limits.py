"""Limits that hold across files and processes (issue "Grader, round 2", part 3), as root.

- Disk: each worker's TMPDIR/HOME/cwd, /tmp, /var/tmp and /dev/shm are private tmpfs mounts
  capped in bytes and inodes; red team: 1,200 files of 1 MiB landed on the host's disk, since
  ``RLIMIT_FSIZE`` caps one file only. A full tmpfs fails the student's write, and another
  slot writes on undisturbed.
- Memory: the slot as a whole has a memory cap (a control group, autograder.driver.cgroups), so
  children of 512 MiB each cannot add up past it; without the group, they do (shown below).
"""

from __future__ import annotations

import os
import threading

import pytest

from autograder.driver import cgroups
from autograder import host
from autograder.limits import Limits
from autograder.driver.errors import WorkerDied
from autograder.driver.session import Session
from autograder.driver.slot import Slot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not host.is_root(), reason="private tmpfs mounts and control groups need root")]

PROBE = r'''
import errno, os, sys, tempfile, time

def fill(folder, mib_each, most):
    """Write files of ``mib_each`` MiB into ``folder`` until refused: (count, errno name)."""
    block = b"x" * (mib_each * 2**20)
    for i in range(most):
        try:
            with open(os.path.join(folder, f"f{i}"), "wb") as f:
                f.write(block)
        except OSError as exc:
            return [i, errno.errorcode.get(exc.errno, str(exc.errno))]
    return [most, None]

def many(folder, most):
    """Empty files until refused: (count, errno name)."""
    for i in range(most):
        try:
            open(os.path.join(folder, f"e{i}"), "w").close()
        except OSError as exc:
            return [i, errno.errorcode.get(exc.errno, str(exc.errno))]
    return [most, None]

def where():
    return {"tmpdir": tempfile.gettempdir(), "home": os.environ["HOME"], "cwd": os.getcwd()}

def children(n, mib):
    """Fork ``n`` children that each touch ``mib`` MiB: how many hold it at the end, at once.
    Each says it holds its memory with a file in the worker's own temp folder (a worker may not
    make a pipe: the host-wide pipe inode counter, sandbox/seccomp_filter.py)."""
    flags = tempfile.mkdtemp(prefix="held-")
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            try:
                buf = bytearray(mib * 2**20)
                for i in range(0, len(buf), 4096):
                    buf[i] = 1
                open(os.path.join(flags, str(os.getpid())), "w").close()
                time.sleep(60)
            finally:
                os._exit(0)
        kids.append(pid)
    done, alive = set(), set(kids)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not alive <= done:
        alive = {k for k in alive if os.waitpid(k, os.WNOHANG) == (0, 0)}
        done = {int(name) for name in os.listdir(flags)}
        time.sleep(0.05)
    time.sleep(1.0)  # a late allocation may still make the OOM killer end an earlier child
    alive = {k for k in alive if os.waitpid(k, os.WNOHANG) == (0, 0)}
    holding = len(alive & done)
    for k in kids:
        try:
            os.kill(k, 9)
        except OSError:
            pass
    return holding
'''

MIB = 2**20


def _session(limits: Limits) -> tuple[Slot, Session]:
    slot = Slot(0, limits)
    session = Session(slot, {"ex01_vectors": PROBE.encode()})
    session.load("ex01_vectors")
    return slot, session


def call(session: Session, name: str, *args):
    return session.call("ex01_vectors", name, args, timeout=120)


@pytest.fixture(scope="module")
def capped():
    """A slot whose tmpfs folders are capped at 24 MiB and 500 inodes (small, to be quick)."""
    slot, session = _session(Limits(call_seconds=120, tmpfs_bytes=24 * MIB, tmpfs_inodes=500))
    yield session
    session.close()
    slot.close()


def test_scratch_folders_are_the_private_tmpfs(capped):
    got = call(capped, "where")
    assert got["tmpdir"] == got["home"] == got["cwd"] == os.path.join(capped.workdir, "tmp")


@pytest.mark.parametrize("folder", ["cwd", "/tmp", "/var/tmp", "/dev/shm"])
def test_a_scratch_folder_fills_at_its_cap_and_nothing_reaches_the_host(capped, folder):
    path = "." if folder == "cwd" else folder
    before = _disk_used()
    count, err = call(capped, "fill", path, 1, 200)
    assert err == "ENOSPC" and 16 <= count <= 24, (count, err)
    # Nothing of it is on a disk: the host's free space did not shrink by the 24 MiB written.
    assert _disk_used() - before < 16 * MIB


def test_inodes_are_capped_too(capped):
    count, err = call(capped, "many", "/var/tmp", 5000)
    assert err == "ENOSPC" and count < 500, (count, err)


def test_a_full_tmpfs_leaves_another_slot_writing(capped):
    call(capped, "fill", "/tmp", 1, 200)  # full (again)
    slot, other = _session(Limits(call_seconds=120, tmpfs_bytes=24 * MIB))
    try:
        assert call(other, "fill", "/tmp", 1, 8) == [8, None]
    finally:
        other.close()
        slot.close()


def _disk_used() -> int:
    st = os.statvfs(os.path.realpath(os.environ.get("TMPDIR", "/tmp")))
    return (st.f_blocks - st.f_bfree) * st.f_frsize


needs_cgroups = pytest.mark.skipif(
    cgroups.create("course-probe", 2**30, 64) is None,
    reason="no writable cgroup hierarchy here: " + cgroups.status())


def _children_done(n: int, mib: int) -> int:
    # 2 GiB of address space each: a forked worker (torch mapped) plus 512 MiB fits in it.
    slot, session = _session(Limits(call_seconds=120, address_space=2048 * MIB))
    try:
        return call(session, "children", n, mib)
    except WorkerDied:
        return 0  # the OOM killer chose the worker itself: capped all the same
    finally:
        session.close()
        slot.close()


@needs_cgroups
def test_a_slots_memory_is_capped_as_a_whole():
    """Eight children of 512 MiB each (4 GiB) in a slot capped at 2 GiB + 1 GiB of headroom:
    each is within its own address-space limit, their sum is not."""
    done = _children_done(8, 512)
    assert done * 512 * MIB < 3 * 1024 * MIB, done


@needs_cgroups
def test_without_the_control_group_the_children_add_up(monkeypatch):
    """The protection removed: the same eight children all get their memory."""
    monkeypatch.setattr(cgroups, "create", lambda *a, **k: None)
    assert _children_done(8, 512) == 8


def test_cgroup_caps_are_written():
    group = cgroups.create("course-probe", 3 * 2**30, 99)
    if group is None:
        pytest.skip(cgroups.status())
    base = {os.path.dirname(p) for p in group.procs_files}
    texts = {}
    for d in base:
        for name in ("memory.max", "memory.limit_in_bytes", "pids.max"):
            try:
                with open(os.path.join(d, name)) as f:
                    texts[name] = f.read().strip()
            except OSError:
                pass
    assert texts.get("pids.max") == "99"
    assert (texts.get("memory.max") or texts.get("memory.limit_in_bytes")) == str(3 * 2**30)


def test_two_slots_write_at_once():
    """Each worker's tmpfs is its own: two slots filling theirs at once both reach the cap."""
    results = []
    pairs = [_session(Limits(call_seconds=120, tmpfs_bytes=16 * MIB)) for _ in range(2)]
    try:
        threads = [threading.Thread(
            target=lambda s=s: results.append(call(s, "fill", "/tmp", 1, 100)))
            for _, s in pairs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for slot, s in pairs:
            s.close()
            slot.close()
    assert len(results) == 2 and all(err == "ENOSPC" and 10 <= n <= 16 for n, err in results)
