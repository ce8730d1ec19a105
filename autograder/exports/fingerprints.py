"""copydetect's fingerprints and score for a whole topic of a class at once (used by
:mod:`autograder.exports.similarity`).

copydetect (https://github.com/blingenf/copydetect) tokenises with Pygments and writes names as
``V``/``F``/``O`` and strings as ``S`` (``filter_code``), hashes every ``k``-gram of that text
(``hashed_kgrams``; with copydetect's window of 1, winnowing keeps them all), drops the
boilerplate's hashes, and scores a file of a pair by the share of its fingerprinted characters
that lie in a ``k``-gram the other file also has: ``token_overlap / token_coverage`` in
``compare_files``, where both count the union of the intervals ``[p, p + k)``. Its pair loop
builds Python lists per shared hash, about 2 ms a pair: 360,000 pairs (a class of 300, eight
topics) took over ten minutes. Here the same score is computed for one file against every other
file in a few NumPy passes over an inverted index (hash -> files), and the expensive part that
is left, Pygments' lexing, runs in a process pool.

Two departures, both deliberate: boilerplate hashes are removed wherever they occur (copydetect
0.5 removes them with ``np.intersect1d(..., assume_unique=True)`` on a list that has repeats,
which leaves some behind), and Python's salted ``hash`` is replaced by a polynomial hash of the
code points, so scores do not depend on the process (and hashing a file is a few vector
operations).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fingerprint:
    """One file's fingerprints: ``raw`` as handed in, ``offsets`` from copydetect's filter (to
    map filtered positions back to ``raw``), and, for each fingerprinted position ``pos``
    (ascending, in filtered characters), its ``k``-gram's hash ``hashes`` (int64)."""

    raw: str
    offsets: np.ndarray
    pos: np.ndarray
    hashes: np.ndarray

    @property
    def coverage(self) -> int:
        """Filtered characters inside some fingerprinted ``k``-gram (copydetect's
        ``token_coverage``)."""
        return int(covered(self.pos, np.ones((1, len(self.pos)), bool), K)[0])


#: The k of the k-grams, in filtered characters (set by similarity.NOISE_CHARS).
K = 40


def _filter(text: str) -> tuple[str, np.ndarray]:
    from copydetect.utils import filter_code

    return filter_code(text, "submission.py", "python")


def filter_all(texts: list[str], jobs: int = 1) -> list[tuple[str, np.ndarray]]:
    """copydetect's filtered text and offsets for each of ``texts``, in order, lexed by
    ``jobs`` processes (Pygments costs 20-100 ms a file)."""
    if jobs <= 1 or len(texts) < 8:
        return [_filter(t) for t in texts]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_filter, texts, chunksize=max(1, len(texts) // (4 * jobs))))


#: The polynomial hash's base (odd, 64-bit; arithmetic wraps modulo 2**64).
_BASE = np.uint64(0x9E3779B97F4A7C15)


def kgram_hashes(filtered: str, k: int = K) -> np.ndarray:
    """The hash of each ``k``-gram of ``filtered`` (position ``i`` starts it), as int64: a
    polynomial hash of its code points modulo 2**64, computed for all positions at once
    (copydetect's ``hashed_kgrams`` calls Python's ``hash``, salted per process)."""
    codes = np.frombuffer(filtered.encode("utf-32-le", "surrogatepass"), np.uint32)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, np.int64)
    h = np.zeros(n, np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * _BASE + codes[j:j + n].astype(np.uint64)
    return h.view(np.int64)


def fingerprint(raw: str, filtered: tuple[str, np.ndarray], boilerplate: np.ndarray,
                k: int = K) -> Fingerprint:
    """``raw``'s fingerprints from its filtered text, without the ``boilerplate`` hashes."""
    text, offsets = filtered
    h = kgram_hashes(text, k)
    keep = ~np.isin(h, boilerplate)
    return Fingerprint(raw, offsets, np.flatnonzero(keep), h[keep])


def covered(pos: np.ndarray, mask: np.ndarray, k: int = K) -> np.ndarray:
    """Per row of ``mask`` (files × positions), the length of the union of ``[p, p + k)`` over
    the positions ``pos`` (ascending) it marks: copydetect's ``get_copied_slices`` summed.

    Each marked position adds ``min(gap to the next marked one, k)``; the last adds ``k``.
    """
    rows, cols = np.nonzero(mask)  # row-major: each row's positions come ascending
    if not len(rows):
        return np.zeros(mask.shape[0], np.int64)
    p = pos[cols]
    gap = np.full(len(p), k, np.int64)
    same = rows[1:] == rows[:-1]
    gap[:-1][same] = np.minimum(p[1:][same] - p[:-1][same], k)
    return np.bincount(rows, weights=gap, minlength=mask.shape[0]).astype(np.int64)


def shares(prints: list[Fingerprint], k: int = K) -> np.ndarray:
    """``S[a, b]``: the share of file ``a``'s fingerprinted characters that lie in a ``k``-gram
    file ``b`` also has (copydetect's per-file similarity; 0 for a file with none)."""
    n = len(prints)
    out = np.zeros((n, n))
    if not n:
        return out
    vocab, inverse = np.unique(np.concatenate([f.hashes for f in prints]), return_inverse=True)
    owner = np.repeat(np.arange(n), [len(f.hashes) for f in prints])
    # The inverted index: for each hash (column), the files holding it, as CSR.
    pairs = np.unique(inverse.astype(np.int64) * n + owner)
    col, files = pairs // n, pairs % n
    start = np.searchsorted(col, np.arange(len(vocab) + 1))
    at = 0
    for a, f in enumerate(prints):
        ids = inverse[at:at + len(f.hashes)]
        at += len(f.hashes)
        cov = f.coverage
        if not cov:
            continue
        lo, hi = start[ids], start[ids + 1]
        mask = np.zeros((n, len(ids)), bool)
        counts = hi - lo
        which = np.repeat(np.arange(len(ids)), counts)
        flat = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        mask[files[np.repeat(lo, counts) + flat], which] = True
        out[a] = covered(f.pos, mask, k) / cov
    return out


def slices(a: Fingerprint, b: Fingerprint, k: int = K) -> tuple[np.ndarray, np.ndarray]:
    """Where ``a`` and ``b`` match, as copydetect's slices of each raw text (a 2×N array of
    starts and ends), for ``highlight_overlap``; the mapping back through the filter's
    offsets is ``compare_files``'s."""
    from copydetect.utils import get_copied_slices

    out = []
    for f, other in ((a, b), (b, a)):
        s = get_copied_slices(f.pos[np.isin(f.hashes, other.hashes)], k).astype(np.int64)
        if len(f.offsets) and s.size:
            s += f.offsets[:, 1][np.clip(np.searchsorted(f.offsets[:, 0], s), 0,
                                         f.offsets.shape[0] - 1)]
        out.append(s)
    return out[0], out[1]
