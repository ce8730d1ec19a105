"""The hostile class graded once per test run, for tests/test_hostile.py and
tests/test_hidden_text.py (one grading serves both: the hidden-text attacks are part of it).

The class holds every attack of :data:`tests.hostile.attacks.ATTACKS` that can act here
(:func:`active`) plus a complete, correct submission (``complete``, a copy of ``solutions/``)
and one correct for topic 1 only (``reference_ex01``). It is graded by the real
``course grade --jobs 2`` into ``out``; at the same time a second ``course grade`` grades the
:data:`DETERMINISM` part of the same class folder into ``out2``, for the byte-identity check
(the runs overlap, so two graders share the machine, as on an instructor's, and the loops' and
sleeps' idle seconds overlap too). Limits are shortened (``--call-timeout``) so that loops and
sleeps cost little.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import time
from pathlib import Path

import pytest

from autograder import host
from autograder.driver import allowlist
from tests.hostile import harness
from tests.hostile.attacks import ATTACKS, EX01, NEEDS_BWRAP, build, context_defaults

CALL_TIMEOUT = "4"
SUBMISSION_TIMEOUT = "60"
ROOT = harness.ROOT
IS_ROOT = host.is_root()
CORRECT = ("complete", "reference_ex01")
TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")

#: The submissions graded a second time, at once, for the byte-identity check: those whose
#: outcome could plausibly hang on timing, on the host, or on the other grader running beside
#: them (one of each way), and the two honest ones. The rest of the battery fails or passes
#: on what its code returns, which the first grading checks attack by attack; the determinism
#: of ordinary gradings is also checked by tests/test_shards.py and tests/test_plan.py (two
#: runs of a class, byte for byte) and tests/test_golden.py (a stored fingerprint).
DETERMINISM = (
    *CORRECT,               # every topic, planned replay and live calls (topic 8: Triton)
    "infinite_loop",        # a busy call past its limit: which call the deadline catches
    "sleep_past_deadline",  # an idle one
    "ignore_sigterm",       # the kill escalation after a timeout
    "slowloris_reply",      # the grader's read deadline on a trickled reply
    "fork_bomb",            # where the process limit bites depends on scheduling
    "memory_bomb",          # the address-space limit, refused at some block
    "memory_children",      # children near their limits: which of them dies
    "output_flood",         # output cut at a limit while pipes are read in chunks
    "kill_parent",          # the worker killed mid-call, restarted for the rest
    "exits_and_aborts",     # the worker exiting and aborting mid-call
    "segfault_ctypes",      # the worker dying of a signal
    "outlive_call",         # strays reaped (or not) before the next call
    "tmp_drop_and_snoop",   # temp dirs shared with the other grader's workers
    "proc_snoop",           # the other grader's processes in /proc
    "fill_the_disk",        # quotas on temp space the other grader uses too
    "fill_the_inodes",      # /var/tmp's inode cap, shared likewise
    "hunt_host_copies",     # a walk of the whole disk while the other grader writes
    "ex08_triton_folders",  # Triton's caches and knobs, host-wide
)


def active(attack) -> bool:
    """Whether ``attack``'s defence can act on this machine (root, bubblewrap)."""
    if attack.root_only == NEEDS_BWRAP:
        return allowlist.usable()
    return IS_ROOT or not attack.root_only


def _grade_args(out: Path, subs: list[str]) -> list[str]:
    return ["grade", *subs, "--out", str(out), "--jobs", "2", "--call-timeout", CALL_TIMEOUT,
            "--submission-timeout", SUBMISSION_TIMEOUT]


def _grade(base: Path) -> dict:
    mark = str(secrets.randbelow(9 * 10**8) + 10**8)
    class_dir, out = base / "class", base / "out"
    victim = base / "victim.txt"
    victim.write_text(f"VICTIM_SECRET_{mark}\n")
    listener = harness.Listener(f"hostile-{mark}")
    ctx = {**context_defaults(), "CLASS": str(class_dir), "OUT": str(out),
           "PORT": str(listener.port), "ABSTRACT": f"hostile-{mark}", "MARK": mark,
           "SLEEP": f"3{mark}", "VICTIM": str(victim), "SECRET": f"HOSTILE_SECRET_{mark}"}
    # A world-readable copy of the solutions outside the repository (hunt_host_copies).
    decoy = Path("/srv") / f"course-hostile-{mark}"
    if IS_ROOT:
        harness.copy_solutions(decoy / "source" / "solutions")
        for p in (decoy, decoy / "source", decoy / "source" / "solutions"):
            os.chmod(p, 0o755)
    class_dir.mkdir()
    paths = {"complete": harness.copy_solutions(class_dir / "complete"),
             "reference_ex01": harness.copy_solutions(class_dir / "reference_ex01", [EX01])}
    for attack in ATTACKS:
        if active(attack):
            paths[attack.id] = build(attack, class_dir, ctx)
    again = sorted(str(paths[sid]) for sid in DETERMINISM if sid in paths)
    canaries = [os.path.join(d, f"HOSTILE_CANARY_{mark}") for d in TMP_DIRS]
    canaries += ["/root/HOSTILE_CANARY_home", str(ROOT / "HOSTILE_CANARY_repo"),
                 str(ROOT / "autograder" / "HOSTILE_CANARY_pkg")]
    before_repo = harness.snapshot(ROOT, harness.SNAPSHOT_SKIP)
    ours = ("out", "done.json", ".lock")  # what the test itself writes there
    before_base = {k: v for k, v in harness.snapshot(base).items() if not k.startswith(ours)}
    t0 = time.monotonic()
    env = harness.course_env(HOSTILE_SECRET=ctx["SECRET"])
    runs = [harness.spawn(*_grade_args(out, ["--class", str(class_dir)]), env=env),
            harness.spawn(*_grade_args(base / "out2", again), env=env)]
    proc, proc2 = (harness.finish(r, timeout=600) for r in runs)
    seconds = time.monotonic() - t0
    leftover: list[int] = []
    for _ in range(10):  # strays get a moment to be reaped, no more
        leftover = harness.processes_with(ctx["SLEEP"])
        if not leftover:
            break
        time.sleep(0.3)
    harness.kill_all(leftover)
    listener.close()
    shutil.rmtree(decoy, ignore_errors=True)
    after_repo = harness.snapshot(ROOT, harness.SNAPSHOT_SKIP)
    after_base = {k: v for k, v in harness.snapshot(base).items() if not k.startswith(ours)}
    repo_changes = harness.changed(before_repo, after_repo)
    me = os.getuid()
    suspicious_repo = [p for p in repo_changes
                       if "HOSTILE" in p or after_repo.get(p, (0, 0, me))[2] != me]
    found_canaries = [c for c in canaries if os.path.lexists(c)]
    found_canaries += glob.glob(str(base.parent / "HOSTILE_CANARY*"))
    found_canaries += [p for d in TMP_DIRS for p in glob.glob(f"{d}/HOSTILE_CANARY_*{mark}*")]
    return {"rc": proc.returncode, "stdout": proc.stdout[-20000:], "stderr": proc.stderr[-20000:],
            "rc2": proc2.returncode, "stderr2": proc2.stderr[-20000:],
            "again": sorted(sid for sid in DETERMINISM if sid in paths),
            "grade_seconds": round(seconds, 1), "ctx": {k: ctx[k] for k in (
                "MARK", "SLEEP", "SECRET", "CLASS", "OUT", "VICTIM")},
            "leftover": leftover, "net_hits": listener.hits,
            "victim": victim.read_text(), "base_changes": harness.changed(before_base, after_base),
            "repo_changes": suspicious_repo, "canaries": sorted(set(found_canaries))}


def hostile_class(tmp_path_factory) -> dict:
    """The graded hostile class, shared by every pytest-xdist worker of this run: what
    :func:`_grade` saw, plus ``base`` (the shared folder) and ``out`` (the full grading's
    output). Fails the calling test if ``course grade`` failed on the class."""
    base = harness.shared_dir(tmp_path_factory, "hostile")
    info = harness.once(base, _grade)
    info["base"] = base
    info["out"] = base / "out"
    if info["rc"] != 0:
        pytest.fail(f"course grade failed on the hostile class (rc {info['rc']}):\n"
                    f"{info['stderr'][-5000:]}")
    return info
