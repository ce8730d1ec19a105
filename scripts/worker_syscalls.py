"""The system calls workers make once their seccomp filter is loaded, read from an strace log.

How the worker filter's allow-list was measured (docs/design/threat-model.md, "The filter is
an allow-list"): run the grader under ``strace -f -qq -s 0 --decode-pids=pidns -o LOG …``
(the whole process tree, bubblewrap and zygotes included, traced from outside), then::

    python scripts/worker_syscalls.py LOG [LOG ...]

prints, per system call name, how many calls processes made after loading a seccomp filter (a
``seccomp(SECCOMP_SET_MODE_FILTER, …) = 0`` or ``prctl(PR_SET_SECCOMP, …) = 0`` of their own, or
of the process or thread that created them after it loaded one), and how many of those the
kernel answered with EPERM or ENOSYS. Calls before the filter (the grader, bubblewrap, the
zygote's imports, the worker's own isolation) are not counted: the filter never sees them.

Run strace with ``--decode-pids=pidns``: workers live in PID namespaces of their own, where
``clone`` returns the child's number in the namespace, and only that option tells which of
strace's pids it is (without it a worker's threads and children go uncounted).

Input: strace's ``-f`` format without ``-ff`` (``PID  name(args) = ret``, ``<unfinished ...>``
and ``<... name resumed>`` lines). A pid that exits (``+++ exited`` / ``+++ killed``) starts a
new life if it appears again (pid reuse over a long grading).
"""

from __future__ import annotations

import collections
import re
import sys

_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")
_RET = re.compile(r"\)\s+= (-?\d+|\?)(?: (E[A-Z0-9]+))?")
#: ``--decode-pids=pidns``: a pid returned inside a PID namespace (every worker is in one of
#: its own), followed by strace's own number for it, which its lines carry.
_HOST_PID = re.compile(r"= -?\d+ /\* (\d+) in strace's PID NS \*/")
_FILTER = re.compile(r"^(?:seccomp\(SECCOMP_SET_MODE_FILTER|prctl\(PR_SET_SECCOMP)")
_CREATES = {"clone", "clone3", "fork", "vfork"}


def measure(lines) -> dict[str, collections.Counter]:
    """Read strace ``-f`` lines; return ``{"calls": Counter(name), "EPERM": Counter(name),
    "ENOSYS": Counter(name)}`` for the calls filtered processes made (see the module's doc)."""
    filtered: dict[int, bool] = {}      # pid -> filtered, for pids whose creation we saw
    pending: dict[int, list] = {}       # pid -> its calls seen before its creator's return
    open_call: dict[int, tuple] = {}    # pid -> (name, filtered at the call's start)
    out = {"calls": collections.Counter(), "EPERM": collections.Counter(),
           "ENOSYS": collections.Counter()}

    def count(name: str, err: str | None) -> None:
        out["calls"][name] += 1
        if err in ("EPERM", "ENOSYS"):
            out[err][name] += 1

    for line in lines:
        m = _LINE.match(line)
        if not m:
            if "+++ exited" in line or "+++ killed" in line:
                pid = int(line.split()[0])
                filtered.pop(pid, None)
                pending.pop(pid, None)
                open_call.pop(pid, None)
            continue
        pid = int(m.group(1))
        resumed, name = m.group(2), m.group(3)
        if resumed is None:
            state = filtered.get(pid)
            open_call[pid] = (name, state)
        else:
            name, state = open_call.get(pid, (resumed, filtered.get(pid)))
        if line.rstrip().endswith("<unfinished ...>"):
            continue
        open_call.pop(pid, None)
        r = _RET.search(line)
        ret, err = (r.group(1), r.group(2)) if r else (None, None)
        if state is None and pid not in filtered:
            pending.setdefault(pid, []).append((name, err))
        elif state:
            count(name, err)
        if resumed is None and ret == "0" and _FILTER.match(line[m.start(3):]):
            filtered[pid] = True  # (libseccomp's load is never split by another thread)
        if name in _CREATES and ret not in (None, "?") and int(ret) > 0:
            host = _HOST_PID.search(line)
            child = int(host.group(1)) if host else int(ret)
            flag = bool(state if state is not None else filtered.get(pid, False))
            filtered[child] = flag
            for cname, cerr in pending.pop(child, []):
                if flag:
                    count(cname, cerr)
    return out


def main(argv: list[str]) -> int:
    """Print the table for the logs named in ``argv`` (CLI; 2 without a log)."""
    if not argv:
        print(__doc__)
        return 2
    total = {"calls": collections.Counter(), "EPERM": collections.Counter(),
             "ENOSYS": collections.Counter()}
    for path in argv:
        with open(path, errors="replace") as f:
            got = measure(f)
        for k, counter in total.items():
            counter.update(got[k])
    for name, n in sorted(total["calls"].items()):
        print(f"{name:24} {n:10} EPERM {total['EPERM'][name]:6} ENOSYS {total['ENOSYS'][name]:6}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
