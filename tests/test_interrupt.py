"""Ctrl-C (or SIGTERM) during `course grade` stops the batch quietly and resumably.

Six ex01-only submissions, three of them slow to import, are graded by two slots (one, in the
grader's own process, for --jobs 1); as soon as the first results file appears the whole
process group gets the signal, as a terminal's Ctrl-C does. The grader must print one "interrupted: k/n" line, exit 128 + the signal, leave no
traceback, no temp file, no half-batch grades.csv and no process behind; the same command
run again then resumes the k saved submissions and grades the rest.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from tests.hostile import harness
from tests.hostile.attacks import context_defaults

FAST = "import numpy as np\nfrom numpy.typing import ArrayLike\n\n{dot}\n"
SLOW = "import time\ntime.sleep(1.5)  # a slow import: the batch is still busy when stopped\n" + FAST
IDS = {"a_fast": FAST, "b_slow": SLOW, "c_slow": SLOW, "d_fast": FAST, "e_slow": SLOW,
       "f_fast": FAST}


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time in ticks, state) of ``pid``; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19]), fields[0].decode()


def _tree(root: int) -> dict[int, int]:
    """pid -> start time of ``root`` and every process descended from it (slots, zygotes,
    sandboxed workers, the resource tracker)."""
    stats = {int(p): _stat(int(p)) for p in os.listdir("/proc") if p.isdigit()}
    stats = {pid: s for pid, s in stats.items() if s is not None}
    found = {root: stats[root][1]} if root in stats else {}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, start, _state) in stats.items():
            if ppid in found and pid not in found:
                found[pid] = start
                grew = True
    return found


def _alive(tree: dict[int, int]) -> list[int]:
    """The processes of ``tree`` still running (same pid and start time, not a zombie)."""
    alive = []
    for pid, start in tree.items():
        s = _stat(pid)
        if s is not None and s[1] == start and s[2] not in ("Z", "X"):
            alive.append(pid)
    return alive


def _slot_dirs(tree: dict[int, int]) -> set[str]:
    """The slot temp folders (``course-slotN-*``) the processes of ``tree`` work in."""
    found = set()
    for pid in tree:
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if os.path.basename(cwd).startswith("course-slot"):
            found.add(cwd)
    return found


def _make_class(tmp_path: Path) -> tuple[Path, Path]:
    dot = context_defaults()["DOT"]
    class_dir, out = tmp_path / "class", tmp_path / "out"
    for sid, text in IDS.items():
        (class_dir / sid).mkdir(parents=True)
        (class_dir / sid / "ex01_vectors.py").write_text(text.format(dot=dot))
    return class_dir, out


@pytest.mark.slow
# Both signals and both paths of grade_batch (the pool and the in-process slot), in two runs.
@pytest.mark.parametrize(("sig", "jobs"), [(signal.SIGINT, "2"), (signal.SIGTERM, "1")],
                         ids=["SIGINT-jobs2", "SIGTERM-jobs1"])
def test_a_signalled_batch_stops_quietly_and_resumes(tmp_path, sig, jobs):
    class_dir, out = _make_class(tmp_path)
    args = ("grade", "--class", str(class_dir), "--out", str(out), "--jobs", jobs)

    proc = harness.spawn(*args)
    deadline = time.monotonic() + 300
    while not list((out / "results").glob("*.json")):
        assert proc.poll() is None, f"the batch ended before it was stopped: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no results file after 300 s"
        time.sleep(0.02)
    tree = _tree(proc.pid)
    assert len(tree) >= 3, f"expected the grader, its slots and their zygotes: {tree}"
    slot_dirs = _slot_dirs(tree)  # the zygotes run in their slot's temp folder
    assert slot_dirs, tree
    os.killpg(proc.pid, sig)  # what a terminal's Ctrl-C does: the whole foreground group
    stopped = harness.finish(proc, timeout=120)

    assert stopped.returncode == 128 + sig, stopped.stderr[-3000:]
    assert "Traceback" not in stopped.stderr, stopped.stderr[-3000:]
    assert "grader fault" not in stopped.stderr, stopped.stderr[-3000:]
    lines = [ln for ln in stopped.stderr.splitlines() if "interrupted" in ln]
    assert len(lines) == 1, stopped.stderr[-3000:]
    m = re.search(r"interrupted: (\d+)/(\d+) submissions saved; run the same command again "
                  r"to resume", lines[0])
    assert m, lines[0]
    saved, total = int(m[1]), int(m[2])
    assert total == len(IDS)
    results = sorted(p.name for p in (out / "results").glob("*.json"))
    assert 1 <= saved == len(results) < len(IDS), (saved, results)
    assert not (out / "grades.csv").exists(), "grades.csv written for half a batch"
    assert not (out / "report.html").exists(), "report.html written for half a batch"
    assert not list(out.rglob("*.tmp")), "a temp file was left behind"

    # Nothing of the run survives: slots, zygotes, sandboxed workers (each zygote goes as soon
    # as its slot closes it; the poll only waits for the kernel to finish the job).
    gone_by = time.monotonic() + 60
    while _alive(tree) and time.monotonic() < gone_by:
        time.sleep(0.1)
    left = _alive(tree)
    if left:
        harness.kill_all(left)
    assert not left, f"processes of the stopped run survived: {left}"
    assert not [d for d in slot_dirs if os.path.exists(d)], "a slot's temp folder was left"

    again = harness.course(*args, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{saved} unchanged, not regraded" in again.stdout, again.stdout[-3000:]
    assert sorted(p.name for p in (out / "results").glob("*.json")) == sorted(
        f"{sid}.json" for sid in IDS)
    assert (out / "grades.csv").exists() and (out / "report.html").exists()
