"""As root, each worker slot is its own unprivileged user, fenced off from everything else.

Two slots graded side by side: different uids; neither can read the other's temp dir, the
solutions, the suites, the repository's tests or a class folder; /tmp is private to each worker;
a worker cannot touch the output file the grader reads back; and a fork bomb that fills one
slot's per-uid process limit leaves the other slot free to earn full marks.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

import pytest

from autograder.driver import allowlist
from autograder import host
from autograder.limits import Limits
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.helpers import ROOT, grade_sources, solution_source

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not host.is_root(),
    reason="slot uids, namespaces and per-uid process limits exist only when grading as root")]

PROBE = '''
import os, threading, time

def uid():
    return [os.getuid(), os.geteuid(), os.getgid()]

def workdir():
    return os.path.dirname(os.getcwd())

def read(path):
    try:
        with open(path, "rb") as f:
            return len(f.read())
    except Exception as exc:
        return type(exc).__name__

def listdir(path):
    try:
        return sorted(os.listdir(path))
    except Exception as exc:
        return type(exc).__name__

def write(path):
    try:
        with open(path, "a") as f:
            f.write("x")
        os.chmod(path, 0o666)
        return "written"
    except Exception as exc:
        return type(exc).__name__

def unlink(path):
    try:
        os.unlink(path)
        return "removed"
    except Exception as exc:
        return type(exc).__name__

def fork_bomb(n):
    """Fork until refused; the children sleep, holding the slot uid's process count."""
    kids = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        kids += 1
    return kids

def mypid():
    return os.getpid()

def sees(pid):
    """Whether /proc shows process ``pid`` (and its command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return len(f.read()) > 0
    except OSError:
        return False

def counters():
    """What the host's counters look like to this worker: its PID, a new thread's id, the
    namespace's last PID and the /proc files of host-wide tallies."""
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    got = {"pid": os.getpid(), "thread": t.native_id}
    for rel in ("loadavg", "stat", "meminfo", "vmstat", "sys/fs/dentry-state",
                "sys/fs/inode-nr", "sys/fs/file-nr", "sys/kernel/ns_last_pid"):
        got[rel] = read_text("/proc/" + rel)
    return got

def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except Exception as exc:
        return type(exc).__name__

def churn(n):
    """Move the counters: n threads (n PIDs handed out), n missed lookups (negative dentries)."""
    for _ in range(n):
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
    for i in range(n):
        try:
            os.stat(f"/usr/lib/course-churn-{i}-{os.urandom(4).hex()}")
        except OSError:
            pass
    return n

def start_thread():
    try:
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        return "started"
    except RuntimeError:
        return "refused"
'''


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("iso-class")
    (d / "alice").mkdir()
    (d / "alice" / "ex01_vectors.py").write_text(solution_source("ex01_vectors"))
    return d


#: A world-readable folder outside the private temp dirs, hidden the way `course grade` hides
#: the class and output folders (pytest's own tmp dirs are 0700 and under /tmp: unreadable to
#: a slot uid anyway, so they would not show the hiding works).
WORLD_READABLE = "/usr/share/doc"
#: `allowlist.usable` as the module found it, before any fixture patched it
REAL_USABLE = allowlist.usable


@pytest.fixture(scope="module", params=["bubblewrap", "fallback"])
def pair(request, class_dir):
    """Two slots, each with a session running PROBE (their zygotes start in parallel), once in
    bubblewrap's allow-list view (where it runs) and once on the fallback path without it."""
    if request.param == "bubblewrap" and not allowlist.usable():
        pytest.skip("bubblewrap is not usable here: " + allowlist.status())
    patch = pytest.MonkeyPatch()
    if request.param == "fallback":
        patch.setattr(allowlist, "usable", lambda: False)
    request.addfinalizer(patch.undo)
    hide = [str(class_dir), WORLD_READABLE]
    slots = [Slot(i, Limits(call_seconds=30), hide=hide) for i in (0, 1)]
    sessions = [Session(s, {"ex01_vectors": PROBE.encode()}) for s in slots]
    threads = [threading.Thread(target=s.load, args=("ex01_vectors",)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    yield sessions
    for s in sessions:
        s.close()
    for s in slots:
        s.close()


def call(session: Session, name: str, *args):
    return session.call("ex01_vectors", name, args)


def test_each_slot_runs_as_its_own_unprivileged_user(pair):
    a, b = pair
    ua, ub = call(a, "uid"), call(b, "uid")
    assert ua[0] == ua[1] == a.slot.uid and ub[0] == ub[1] == b.slot.uid
    assert 0 not in (ua[0], ub[0]) and ua[0] != ub[0]


def test_a_worker_cannot_read_another_slots_temp_dir(pair):
    a, b = pair
    theirs = call(b, "workdir")
    assert call(b, "read", f"{theirs}/sub/ex01_vectors.py") == len(PROBE.encode())  # its own
    for path in (f"{theirs}/sub/ex01_vectors.py", f"{theirs}/sub", b.slot.tmp_root):
        got = call(a, "listdir" if not path.endswith(".py") else "read", path)
        assert isinstance(got, str), f"slot A read {path}: {got}"
    # On the host too, the files are the slot's alone.
    st = os.stat(os.path.join(b.workdir, "sub"))
    assert st.st_uid == b.slot.uid and st.st_mode & 0o077 == 0


def test_a_worker_cannot_read_solutions_suites_tests_git_or_the_class(pair, class_dir):
    a, _ = pair
    for path in (ROOT / "solutions" / "ex01_vectors.py",
                 ROOT / "autograder" / "suites" / "hidden" / "ex01_vectors.py",
                 ROOT / "autograder" / "suites" / "public" / "ex01_vectors.py",
                 ROOT / "tests" / "helpers.py", ROOT / ".git" / "HEAD",
                 class_dir / "alice" / "ex01_vectors.py"):
        if path.exists():
            assert isinstance(call(a, "read", str(path)), str), path
    for folder in (ROOT / "solutions", ROOT / "autograder" / "suites", class_dir):
        got = call(a, "listdir", str(folder))  # hidden (empty) or not there at all
        assert got == [] or isinstance(got, str), (folder, got)


@pytest.mark.skipif(not (os.path.isdir(WORLD_READABLE) and os.listdir(WORLD_READABLE)),
                    reason=f"{WORLD_READABLE} is missing or empty here")
def test_a_hidden_folder_is_empty_to_the_worker_even_when_world_readable(pair):
    a, _ = pair
    got = call(a, "listdir", WORLD_READABLE)  # covered (empty), or not in the view at all
    assert got in ([], "PermissionError", "FileNotFoundError"), got
    assert os.listdir(WORLD_READABLE), "the host's folder itself is untouched"


def test_tmp_is_private_to_each_worker(pair):
    a, b = pair
    name = f"/tmp/iso-canary-{secrets.token_hex(4)}"
    assert call(a, "write", name) == "written"
    assert call(a, "read", name) == 1
    assert call(b, "read", name) == "FileNotFoundError"
    assert not os.path.exists(name), "a worker's /tmp file landed in the host's /tmp"


def test_a_worker_cannot_replace_the_output_file_the_grader_reads(pair):
    a, _ = pair
    assert call(a, "unlink", "../output.txt") == "PermissionError"
    assert call(a, "write", "../output.txt") == "PermissionError"
    assert call(a, "write", "../intruder") == "PermissionError"


def _kernel() -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return (0, 0)


@pytest.mark.skipif(_kernel() < (5, 8), reason="a proc mount has its own hidepid from Linux 5.8")
def test_a_worker_cannot_see_another_slots_processes(pair):
    """Red team: hidden inputs put in a process's command line were read from /proc by another
    submission's public-test worker graded at the same time on another slot."""
    a, b = pair
    assert call(a, "sees", call(a, "mypid")) and call(b, "sees", call(b, "mypid"))  # its own
    # The other's worker by its PID on the host (in its own PID namespace it has another).
    assert not call(a, "sees", b.pid) and not call(b, "sees", a.pid)


def test_a_fork_bomb_in_one_slot_leaves_the_other_slot_full_marks(pair):
    a, b = pair
    kids = call(a, "fork_bomb", 500)
    assert 0 < kids < 500  # the per-uid limit stopped it
    assert call(a, "start_thread") == "refused"  # slot A's uid is full…
    assert call(b, "start_thread") == "started"  # …slot B's is not
    results = grade_sources(b.slot, {"ex01_vectors": solution_source("ex01_vectors")})
    failed = [n for n, r in results.items() if not r.passed]
    assert results and not failed, failed
    # Closing A's session ends its sleepers (they ran as A's uid).
    uid = a.slot.uid
    a.close()
    left = [p for p in os.listdir("/proc") if p.isdigit() and _owner(p) == uid]
    assert left == [], f"slot A's processes outlived its session: {left}"


def _owner(pid: str) -> int | None:
    try:
        return Path(f"/proc/{pid}").stat().st_uid
    except OSError:
        return None


def _pid_namespaces_allowed() -> bool:
    """Whether this kernel lets us make a PID namespace (some containers refuse it)."""
    from autograder.sandbox import libc

    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.handle().unshare(libc.CLONE_NEWPID) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


@pytest.mark.parametrize("path", ["bubblewrap", "fallback"])
def test_a_worker_reads_no_host_counter_an_earlier_worker_moved(path, monkeypatch):
    """Third red team: a hidden-phase worker set the host's last PID to 16 times a hidden
    input by starting threads, and the next submission's public worker read it back from
    /proc/loadavg (and from its own PID). Each worker now has a PID namespace of its own and
    sees the host-wide tallies frozen, so what a worker finds is the same whatever the one
    before it did."""
    if path == "bubblewrap":
        if not REAL_USABLE():
            pytest.skip("bubblewrap is not usable here: " + allowlist.status())
        # The module's `pair[fallback]` fixture may still be in force (module scope), with
        # `usable` patched to False: this test then skipped in every full run.
        monkeypatch.setattr(allowlist, "usable", REAL_USABLE)
    if not _pid_namespaces_allowed():
        pytest.skip("this kernel refuses PID namespaces (a container?)")
    if path == "fallback":
        monkeypatch.setattr(allowlist, "usable", lambda: False)
    slot = Slot(2, Limits(call_seconds=30))
    seen = []
    try:
        for moved in (0, 300, 0):
            for name, args in (("churn", (moved,)), ("counters", ())):
                session = Session(slot, {"ex01_vectors": PROBE.encode()})
                try:
                    got = call(session, name, *args)
                finally:
                    session.close()
            seen.append(got)
    finally:
        slot.close()
    assert seen[0]["pid"] < 10 and seen[0]["loadavg"].count(" ") == 4, seen[0]
    for key in seen[0]:
        assert seen[0][key] == seen[1][key] == seen[2][key], (key, [s[key] for s in seen])


#: In a forked child (its own mount namespace: nothing here reaches the host), enter the
#: deny-list view with one cover's mount made to fail, then print what happened.
ENTER_SCRIPT = r'''
import json, os, sys
from autograder.sandbox import isolation
broken = sys.argv[1]  # "hide", "ptys" or "" (nothing broken)
base = sys.argv[2]  # outside /tmp, which the view covers whole
os.chmod(base, 0o755)  # reachable: the instructor folder is covered, not left out of a view
secret = os.path.join(base, "instructor")
os.makedirs(secret)
for d in ("work", "work/tmp", "sub"):
    os.makedirs(os.path.join(base, d), exist_ok=True)
cmd = {"workdir": os.path.join(base, "work"), "sub_dir": os.path.join(base, "sub"),
       "hide": [secret], "limits": {}}
if broken == "hide":
    isolation._hide = lambda path: False
if broken == "ptys":
    isolation._no_ptys = lambda: False
try:
    applied = isolation.enter(cmd)
    print(json.dumps({"ran": True, "hidden": applied["hidden"] == [secret]}))
except isolation.IsolationIncomplete as exc:
    print(json.dumps({"ran": False, "why": str(exc)}))
'''


@pytest.mark.parametrize("broken", ["", "hide", "ptys"])
def test_a_worker_whose_cover_cannot_be_mounted_runs_nothing(broken):
    """Each cover of the deny-list view is a mount, and a failed mount is silent: the worker
    would run with an instructor folder readable to its uid. Where a promised cover (an
    instructor folder, the ptys) could not be made, entering the view raises and the worker
    runs no submission code."""
    import json
    import subprocess
    import sys

    import shutil
    import tempfile

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = tempfile.mkdtemp(prefix="course-enter-", dir="/srv" if os.path.isdir("/srv") else None)
    try:
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                               "-c", ENTER_SCRIPT, broken, base], capture_output=True,
                              text=True, env=env, timeout=120)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if not broken:
        assert got == {"ran": True, "hidden": True}
    else:
        assert got["ran"] is False
        assert ("instructor" if broken == "hide" else "/dev/pts") in got["why"]
