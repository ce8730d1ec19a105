"""Shards: one class graded as N independent `course grade --shard K/N` runs, then merged.

No scheduler of our own: a cluster engine (a Slurm array job, a Kubernetes Indexed Job, a
GitHub Actions matrix: :mod:`autograder.exports.cluster`) starts the N runs, anywhere, all
writing into one output folder (or folders merged afterwards); `course report` then builds
grades.csv and report.html from the results files (docs/design/interface.md, shards).

The split is by submission id: the class's ids sorted (code-point order, the same on every
machine and locale), the i-th goes to shard ``i mod N``. Round robin rather than a hash of the
id because the issue asks for shards balanced by count: sizes differ by at most one, where a
hash's would spread binomially (a shard of a class of 300 in 8 shards could get 50 instead of
38). Its price, that adding a submission moves others to another shard, costs nothing: a
shard resumes every submission whose result is already in the output folder, whichever
shard wrote it (autograder.grading.batch, resuming).

Each shard is an ordinary batch (both sweeps, the host-wide phase lock): N shards on one
machine are N graders, whose public and hidden phases that lock keeps apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from autograder.grading import ids, uploads
from autograder.results import model

__all__ = ["Shard", "parse", "select", "Missing", "missing"]

#: The most shards a class may be split into (a typo such as 0/40000 is refused, not run).
MAX_SHARDS = 10_000


class Shard(NamedTuple):
    """The ``index``-th (from 0) of ``count`` parts of a class."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    """``"K/N"`` as a :class:`Shard`: K from 0 to N-1 (an array job's task id), N from 1 to
    :data:`MAX_SHARDS`.

    Raises:
        ValueError: ``text`` is not two decimal integers with a ``/`` between them, or K or N
            is out of range (the message says which and quotes ``text``).
    """
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if m is None:
        raise ValueError(f"--shard must be K/N (e.g. 0/4: the first of 4 parts), not {text!r}")
    k, n = int(m[1]), int(m[2])
    if not 1 <= n <= MAX_SHARDS:
        raise ValueError(f"--shard {text}: N must be between 1 and {MAX_SHARDS}, not {n}")
    if k >= n:
        raise ValueError(f"--shard {text}: K counts from 0, so it must be below N={n} "
                         f"(0 to {n - 1}), not {k}")
    return Shard(k, n)


def select(paths: list[Path], shard: Shard) -> list[Path]:
    """The submissions of ``paths`` that ``shard`` grades: sorted by id, the i-th of them when
    ``i mod shard.count == shard.index`` (ids are unique: :func:`submission.discover`).

    Every shard of one class, given the same ``paths`` in any order, gets a disjoint part, and
    the parts together are ``paths``; their sizes differ by at most one.
    """
    ordered = sorted(paths, key=graded_id)
    return ordered[shard.index::shard.count]


def graded_id(path: Path) -> str:
    """The id the upload at ``path`` is graded and written under: its own, or the derived id an
    unusable or duplicate name gets (:func:`autograder.grading.ids.identify`, as `course grade`
    reads it)."""
    return ids.identify(path)[0]


class Missing(NamedTuple):
    """A submission of the class with no current result in an output folder."""

    id: str
    why: str  # "no result" or "result of an older upload"


def missing(out: Path, paths: list[Path]) -> list[Missing]:
    """The submissions of ``paths`` (sorted by id) without a current result in ``out``: no
    results file that reads back, or one graded from another upload (its submission hash
    differs: the student handed in again after that shard ran). Reads the submissions' files
    to hash them; runs nothing."""
    gaps: list[Missing] = []
    for p in sorted(paths, key=graded_id):
        sid = graded_id(p)
        done = model.load(out, sid)
        if done is None:
            gaps.append(Missing(sid, "no result"))
        elif done.sha256 != uploads.load(p, notebooks=False).sha256:
            gaps.append(Missing(sid, "result of an older upload"))
    return gaps
