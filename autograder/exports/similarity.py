"""`course similarity`: which submissions share code, topic by topic (docs/design/interface.md,
outputs of `course similarity`).

Every pair of submissions that both hand in a topic's file is compared with copydetect
(https://github.com/blingenf/copydetect), the winnowing fingerprints of Schleimer, Wilkerson and
Aiken, "Winnowing: local algorithms for document fingerprinting" (SIGMOD 2003), which MOSS uses.
Pygments tokenises the code and copydetect writes every name as ``V``/``F``/``O`` and every string
as ``S`` before hashing, so renamed variables and reordered functions still match, while comments,
docstrings and layout never count. The topic's stub (and the notebook `course notebook` makes of
it) is boilerplate: its fingerprints are dropped, so the given signatures, docstrings and
imports never make two submissions alike, and an untouched stub scores 0 against anything.

Submissions are read as `course grade` reads them (:func:`autograder.grading.uploads.load`:
folders or zips, notebooks' code cells, nothing run).

Outputs, both written atomically:

- ``similarity.csv``: ``topic,a,b,score`` for every pair (ids sorted, ``a < b``), topics in
  catalogue order; ``score`` in [0, 1], 4 decimals.
- ``similarity.html``: the :data:`MAX_SHOWN` most similar pairs at or above the threshold, each
  with both files side by side and the matching code highlighted, and a count of the rest. Self-contained, no script, and a
  Content-Security-Policy that forbids every fetch, as ``report.html``.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder import catalogue, templating
from autograder.exports import fingerprints
from autograder.results.text import csv_cell
from autograder.results.writers import write_atomic

#: The shortest match that counts, in characters of copydetect's filtered code (one per name
#: or string, operators and keywords as written). copydetect's default is 25; on this course's
#: bank of independent correct implementations (tests/banks/) 25 put the reference within 0.43
#: of one of them, idioms such as ``V = V.V(V, V=V)`` matching; at 40 the highest is under 0.3,
#: and a copied topic still scores above 0.8 (tests/test_similarity.py).
NOISE_CHARS = fingerprints.K
#: Pairs at or above this score are shown in similarity.html (``--threshold``).
DEFAULT_THRESHOLD = 0.5
#: At most this many pairs, the highest, are listed and drawn side by side in the HTML (the
#: CSV has them all; the page counts the rest).
MAX_SHOWN = 100
#: Lines of context kept around each match in the side-by-side view.
CONTEXT_LINES = 10
CSV_NAME, HTML_NAME = "similarity.csv", "similarity.html"
CSV_HEADER = ["topic", "a", "b", "score"]


@dataclass(frozen=True)
class Pair:
    """Two submissions' files of one topic and how much of them match.

    ``score`` is the mean of the two fractions copydetect reports (each file's tokens, stub
    removed, that lie in a match), so a small file wholly inside a large one is not a copy of it
    on its own; ``a_html``/``b_html`` are the files with matches highlighted (escaped HTML),
    filled only for pairs shown in the HTML.
    """

    topic: str
    a: str
    b: str
    score: float
    a_html: str = ""
    b_html: str = ""


def boilerplate_texts(topic: catalogue.Topic) -> list[str]:
    """The given code of ``topic`` no match may count: its stub, and the same stub as the code
    of the notebook `course notebook` writes (it adds cells of its own).

    Raises:
        FileNotFoundError: neither the solution nor a committed stub of the topic is found.
    """
    import nbformat

    from autograder.grading.submission import notebook_to_source
    from autograder.student import notebook, reset

    stub = reset.pristine_stub(topic.module)
    if stub is None:
        raise FileNotFoundError(f"no stub of {topic.module} to use as boilerplate "
                                f"(neither solutions/{topic.filename} nor exercises/ holds it)")
    nb = nbformat.writes(notebook.build(topic, stub)).encode("utf-8")
    return [stub, notebook_to_source(nb).decode("utf-8", "replace")]


def read_sources(paths: list[Path]) -> dict[str, dict[str, str]]:
    """id -> topic module -> source text, for every submission path (folder or .zip), read as
    `course grade` reads them; a topic that is missing or unreadable is absent."""
    from autograder.grading import uploads

    out: dict[str, dict[str, str]] = {}
    for p in paths:
        loaded = uploads.load(p)
        out[loaded.id] = {t: src.decode("utf-8", "replace")
                          for t, src in loaded.sources.items() if t not in loaded.problems}
    return out


def _highlight(a: fingerprints.Fingerprint, b: fingerprints.Fingerprint) -> tuple[str, str]:
    """Both raw texts as escaped HTML, the matching code in ``<mark>`` (copydetect's
    ``highlight_overlap``, far-off lines cut to "...")."""
    from copydetect.utils import highlight_overlap

    out = []
    for f, s, colour in zip((a, b), fingerprints.slices(a, b), ("a", "b")):
        if not s.size:  # nothing shared (a pair flagged at threshold 0)
            out.append(html.escape(f.raw))
            continue
        text, _ = highlight_overlap(f.raw, s, f'<mark class="{colour}">', "</mark>",
                                    truncate=CONTEXT_LINES, escape_html=True)
        out.append(text)
    return out[0], out[1]


def compare_topic(topic: str, sources: dict[str, str], boilerplate: list[str],
                  filtered: dict[str, tuple], threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every pair of ``sources`` (id -> text of ``topic``'s file), ids sorted, ``a < b``;
    ``filtered``: copydetect's filtered text and offsets of each text (and of each
    ``boilerplate`` text), by text. Identical files are fingerprinted once. The
    :data:`MAX_SHOWN` highest pairs at or above ``threshold`` carry their highlighted code.
    """
    import numpy as np

    bp = np.unique(np.concatenate([np.zeros(0, np.int64)] + [
        fingerprints.kgram_hashes(filtered[t][0]) for t in boilerplate]))
    texts = sorted(set(sources.values()))
    row = {t: i for i, t in enumerate(texts)}
    prints = [fingerprints.fingerprint(t, filtered[t], bp) for t in texts]
    share = fingerprints.shares(prints)
    score = (share + share.T) / 2  # each file's share, averaged: see Pair
    pairs = [Pair(topic, a, b, round(float(score[row[sources[a]], row[sources[b]]]), 4))
             for a, b in itertools.combinations(sorted(sources), 2)]
    shown = sorted((i for i, p in enumerate(pairs) if p.score >= threshold),
                   key=lambda i: -pairs[i].score)[:MAX_SHOWN]
    for i in shown:
        p = pairs[i]
        a_html, b_html = _highlight(prints[row[sources[p.a]]], prints[row[sources[p.b]]])
        pairs[i] = Pair(topic, p.a, p.b, p.score, a_html, b_html)
    return pairs


def compare(sources: dict[str, dict[str, str]], threshold: float = DEFAULT_THRESHOLD,
            jobs: int = 1, progress: Callable[[str], None] | None = None) -> list[Pair]:
    """Every pair of every topic, topics in catalogue order (see :func:`compare_topic`);
    Pygments lexes the distinct files in ``jobs`` processes; ``progress`` is told what
    is being done."""
    topics = catalogue.topics()
    given = {t.module: boilerplate_texts(t) for t in topics}
    texts = sorted({x for s in sources.values() for x in s.values()}
                   | {x for b in given.values() for x in b})
    if progress:
        progress(f"tokenising {len(texts)} distinct file(s) with Pygments ({jobs} process(es)) …")
    # copydetect logs a warning per file it cannot tokenise: the report says what matters.
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filtered = dict(zip(texts, fingerprints.filter_all(texts, jobs)))
        pairs: list[Pair] = []
        for t in topics:
            if progress:
                progress(f"comparing every pair of {len(sources)} submission(s): {t.module} …")
            in_topic = {i: s[t.module] for i, s in sources.items() if t.module in s}
            pairs += compare_topic(t.module, in_topic, given[t.module], filtered, threshold)
    return pairs


def csv_text(pairs: list[Pair]) -> str:
    """similarity.csv's text: the header, then one row per pair (ids made safe for
    spreadsheets, :func:`autograder.results.text.csv_cell`), LF line ends."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for p in pairs:
        w.writerow([p.topic, csv_cell(p.a), csv_cell(p.b), f"{p.score:.4f}"])
    return buf.getvalue()


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_text(pairs: list[Pair], threshold: float, n_submissions: int) -> str:
    """similarity.html's text: a table of the flagged pairs and, for each (at most
    :data:`MAX_SHOWN`), the two files side by side with the matches marked."""
    flagged = sorted((p for p in pairs if p.score >= threshold),
                     key=lambda p: (-p.score, p.topic, p.a, p.b))
    rows, views = [], []
    for n, p in enumerate(flagged[:MAX_SHOWN], 1):
        rows.append(f'<tr><td class="n">{p.score:.2f}</td><td>{_e(p.topic)}</td>'
                    f'<td><a href="#pair-{n}">{_e(p.a)}</a></td><td>{_e(p.b)}</td></tr>')
        views.append(f'<section id="pair-{n}"><h3>{_e(p.topic)}: {_e(p.a)} and {_e(p.b)} '
                     f'({p.score:.2f})</h3><div class="side">'
                     f"<div><h4>{_e(p.a)}</h4><pre>{p.a_html}</pre></div>"
                     f"<div><h4>{_e(p.b)}</h4><pre>{p.b_html}</pre></div></div></section>")
    more = len(flagged) - len(rows)
    note = (f"<p>{more} more pair(s) at or above the threshold are in "
            f"<code>{CSV_NAME}</code> only.</p>" if more > 0 else "")
    table = ('<table id="pairs"><thead><tr><th>score</th><th>topic</th><th>a</th><th>b</th>'
             f'</tr></thead><tbody>{"".join(rows)}</tbody></table>' if rows
             else '<p id="no-pairs">No pair reaches the threshold.</p>')
    return templating.fill("autograder.exports", "similarity/similarity.html",
                           css=templating.text("autograder.results", "report.css"),
                           submissions=n_submissions, compared=len(pairs),
                           threshold=f"{threshold:.2f}", flagged=len(flagged),
                           noise=NOISE_CHARS, table=table + note, pairs="\n".join(views))


def write(out: Path, pairs: list[Pair], threshold: float, n_submissions: int) -> tuple[Path, Path]:
    """Write similarity.csv and similarity.html into ``out`` (created); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / CSV_NAME, csv_text(pairs))
    write_atomic(out / HTML_NAME, html_text(pairs, threshold, n_submissions))
    return out / CSV_NAME, out / HTML_NAME
