"""One memory and process cap for a worker slot as a whole (control groups).

``RLIMIT_AS`` caps one process and ``RLIMIT_NPROC`` counts a uid's processes, so a submission
that forks 64 children of 4 GiB each could still take 256 GiB (issue "Grader, round 2"). As root,
each slot's zygote is started inside its own control group, which every worker and every child
of a worker inherits: ``memory.max`` (v2) or ``memory.limit_in_bytes`` (v1) caps the memory of
the whole slot, tmpfs pages included, and ``pids.max`` its tasks. When the cap is hit the
kernel's OOM killer ends a process of that slot (the workers are made its first choice, the
zygote its last: :func:`autograder.sandbox.isolation.prefer_killing_me`), never one of another slot or of the grader.

Where the CPU controller is there too, the slot's group also gets one fair share of the CPU
(``cpu.weight`` or ``cpu.shares``, at their defaults) for all its processes together. Without
it the kernel shares the CPU between sessions (autogroups) or processes, so a submission
whose children each call ``setsid`` took 60 shares against the other slot's one: a correct
topic-8 submission graded beside it ran out of its time budget and lost 8.5 of 14 points
(docs/design/threat-model.md, Limits). Best effort: without the controller the caps above
still hold.

Where neither hierarchy can be written (not root, a container without cgroup delegation), the
per-process rlimits and the slot uid's process count are what is left; ``status`` says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ROOT = "/sys/fs/cgroup"
#: The kernel's default weight of a group (v2 ``cpu.weight``, v1 ``cpu.shares``): every slot
#: gets the same share as any other task group, whatever it runs inside.
CPU_WEIGHT_V2 = 100
CPU_SHARES_V1 = 1024


@dataclass(frozen=True)
class Group:
    """A slot's control group: the ``cgroup.procs`` files a process joins it through."""

    name: str
    procs_files: tuple[str, ...]
    kind: str  # "v2" or "v1"


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _v2_root() -> str | None:
    """The cgroup2 mount that offers the memory and pids controllers, if any."""
    for root in (ROOT, os.path.join(ROOT, "unified")):
        try:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                controllers = f.read().split()
        except OSError:
            continue
        if {"memory", "pids"} <= set(controllers):
            return root
    return None


def create(name: str, memory_bytes: int, tasks: int) -> Group | None:
    """Make (or reuse) the group ``name`` with these caps; None where this machine cannot.

    Needs root. A group left by an earlier grader is reused: its caps are written again.
    """
    if os.geteuid() != 0:
        return None
    v2 = _v2_root()
    if v2 is not None:
        _write(os.path.join(v2, "cgroup.subtree_control"), "+memory +pids")
        # Its own write: a controller the kernel refuses fails the whole line.
        _write(os.path.join(v2, "cgroup.subtree_control"), "+cpu")
        path = os.path.join(v2, name)
        os.makedirs(path, exist_ok=True)
        if (_write(os.path.join(path, "memory.max"), str(memory_bytes))
                and _write(os.path.join(path, "pids.max"), str(tasks))):
            _write(os.path.join(path, "memory.swap.max"), "0")
            _write(os.path.join(path, "cpu.weight"), str(CPU_WEIGHT_V2))
            return Group(name, (os.path.join(path, "cgroup.procs"),), "v2")
        return None
    mem, pids = os.path.join(ROOT, "memory"), os.path.join(ROOT, "pids")
    if not (os.path.isdir(mem) and os.path.isdir(pids)):
        return None
    try:
        for base in (mem, pids):
            os.makedirs(os.path.join(base, name), exist_ok=True)
    except OSError:
        return None
    cpu = _v1_cpu_group(name)
    # Where swap is accounted, memory+swap gets the same cap (else pages would go to swap).
    # v1 wants memory <= memory+swap at every step: raising, memsw goes first; lowering, last.
    memsw = os.path.join(mem, name, "memory.memsw.limit_in_bytes")
    _write(memsw, str(memory_bytes))
    ok = (_write(os.path.join(mem, name, "memory.limit_in_bytes"), str(memory_bytes))
          and _write(os.path.join(pids, name, "pids.max"), str(tasks)))
    _write(memsw, str(memory_bytes))
    if not ok:
        return None
    # pids stays last: usage() reads the memory group first and the pids group last.
    return Group(name, (os.path.join(mem, name, "cgroup.procs"), *cpu,
                        os.path.join(pids, name, "cgroup.procs")), "v1")


def _v1_cpu_group(name: str) -> tuple[str, ...]:
    """The ``cgroup.procs`` of the slot's v1 cpu group at the default shares, or nothing where
    the cpu hierarchy is missing or cannot be written (the slot then shares the CPU as before).
    """
    # The hierarchy's own file first: on a bare tmpfs, makedirs would just make folders.
    if not os.path.isfile(os.path.join(ROOT, "cpu", "cpu.shares")):
        return ()
    path = os.path.join(ROOT, "cpu", name)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return ()
    if not _write(os.path.join(path, "cpu.shares"), str(CPU_SHARES_V1)):
        return ()
    return (os.path.join(path, "cgroup.procs"),)


def joining(group: Group | None, command: list[str]) -> list[str]:
    """``command`` preceded by a tiny shell that moves itself into ``group``, then execs.

    The shell joins before the command starts, so the zygote and everything it forks are
    counted from their first page (no window in which a child could escape the group).
    """
    if group is None:
        return command
    script = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 97; shift; '
              'n=$((n-1)); done; exec "$@"')
    return ["/bin/sh", "-c", script, "sh", str(len(group.procs_files)), *group.procs_files,
            *command]

def usage(group: Group) -> dict[str, int]:
    """The group's peak memory (bytes) and its current task count, where the kernel says."""
    out: dict[str, int] = {}
    base = os.path.dirname(group.procs_files[0])
    for key, fname in (("peak", "memory.max_usage_in_bytes"), ("peak", "memory.peak"),
                       ("tasks", "pids.current")):
        for d in {base, os.path.dirname(group.procs_files[-1])}:
            try:
                with open(os.path.join(d, fname)) as f:
                    out[key] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return out


def status() -> str:
    """One line for the instructor: whether slots get a memory and task cap of their own."""
    if os.geteuid() != 0:
        return "not root: no per-slot memory cap (per-process rlimits only)"
    if _v2_root() is not None:
        return "cgroup v2: each slot's memory and tasks are capped as a whole" + _cpu_clause()
    if os.path.isdir(os.path.join(ROOT, "memory")) and os.path.isdir(os.path.join(ROOT, "pids")):
        return "cgroup v1: each slot's memory and tasks are capped as a whole" + _cpu_clause()
    return "no writable cgroup hierarchy: per-process rlimits and the slot uid's process count only"


def _cpu_clause() -> str:
    v2 = _v2_root()
    if v2 is not None:
        try:
            with open(os.path.join(v2, "cgroup.controllers")) as f:
                there = "cpu" in f.read().split()
        except OSError:
            there = False
    else:
        there = os.path.isfile(os.path.join(ROOT, "cpu", "cpu.shares"))
    return ", and each has one fair share of the CPU" if there else ""
