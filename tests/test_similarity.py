"""`course similarity` (issue 38, item 7): a disguised copy is flagged; the reference, code
written independently (tests/banks/) and the untouched stubs are not."""

from __future__ import annotations

import csv
import io
import itertools

import pytest

from autograder import catalogue, paths
from autograder.cli.app import main
from autograder.exports import similarity
from autograder.student import reset
from tests.similar_code import disguise, independent

COPIED = "ex04_svd_lora"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """A class of five: the reference, independent code, the stubs, and a pair where bob
    copied alice's topic 4 (renamed, reordered); plus an id that is markup."""
    root = tmp_path_factory.mktemp("class")
    topics = catalogue.topic_modules()
    files = {
        "reference": {t: (paths.SOLUTIONS / f"{t}.py").read_text("utf-8") for t in topics},
        "independent": {t: independent(t, 0) for t in topics},
        "stubs": {t: reset.pristine_stub(t) for t in topics},
        "alice": {COPIED: independent(COPIED, 1)},
        "<b>bob": {COPIED: disguise(independent(COPIED, 1), seed=3)},
    }
    for sid, by_topic in files.items():
        (root / sid).mkdir()
        for t, text in by_topic.items():
            (root / sid / f"{t}.py").write_text(text, "utf-8")
    out = root.parent / "out"
    assert main(["similarity", "--class", str(root), "--out", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text("utf-8"))))
    return files, rows, (out / "similarity.html").read_text("utf-8")


def _score(rows, topic, a, b):
    a, b = sorted((a, b))
    [row] = [r for r in rows if (r["topic"], r["a"], r["b"]) == (topic, a, b)]
    return float(row["score"])


def test_a_copy_with_renamed_variables_and_reordered_functions_is_flagged(reports):
    files, rows, page = reports
    assert files["alice"][COPIED] != files["<b>bob"][COPIED]
    assert _score(rows, COPIED, "alice", "<b>bob") >= 0.75
    assert '<a href="#pair-1">&lt;b&gt;bob</a>' in page  # flagged, first, escaped
    assert '<mark class="a">' in page and '<mark class="b">' in page
    assert "<b>bob" not in page


def test_the_reference_and_independent_code_are_not_flagged(reports):
    _, rows, _ = reports
    for t in catalogue.topic_modules():
        assert _score(rows, t, "reference", "independent") < similarity.DEFAULT_THRESHOLD, t
    # alice's topic 4 is bank code too, written apart from the reference
    assert _score(rows, COPIED, "reference", "alice") < similarity.DEFAULT_THRESHOLD


def test_the_untouched_stubs_score_zero_against_everything(reports):
    _, rows, _ = reports
    stub_rows = [r for r in rows if "stubs" in (r["a"], r["b"])]
    assert stub_rows and all(float(r["score"]) == 0.0 for r in stub_rows)


def test_every_pair_handing_in_a_topic_is_scored_once(reports):
    files, rows, page = reports
    expected = [(t, a, b) for t in catalogue.topic_modules()
                for a, b in itertools.combinations(sorted(i for i in files if t in files[i]), 2)]
    assert [(r["topic"], r["a"], r["b"]) for r in rows] == expected
    assert all(0.0 <= float(r["score"]) <= 1.0 for r in rows)
    assert list(rows[0]) == similarity.CSV_HEADER
    assert "Content-Security-Policy" in page and "<script" not in page
    assert "Pairs at or above 0.50: 1<" in page  # only the copy


def test_bad_arguments_are_usage_errors(tmp_path, capsys):
    assert main(["similarity", "--out", str(tmp_path)]) == 2
    assert "give submissions and/or --class DIR" in capsys.readouterr().err
    assert main(["similarity", str(tmp_path), "--out", str(tmp_path / "o"),
                 "--threshold", "1.5"]) == 2
    assert "--threshold must lie in [0, 1], got 1.5" in capsys.readouterr().err
    assert main(["similarity", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_vectorised_score_is_copydetects():
    """fingerprints.shares gives, for each file of a pair, what copydetect's compare_files
    gives (no boilerplate here: copydetect 0.5 leaves some boilerplate hashes behind)."""
    import io

    import numpy as np
    from copydetect import CodeFingerprint, compare_files

    from autograder.exports import fingerprints

    texts = [(paths.SOLUTIONS / "ex03_softmax.py").read_text("utf-8"), independent("ex03_softmax"),
             independent("ex03_softmax", 1), disguise(independent("ex03_softmax", 1), seed=1)]
    prints = [fingerprints.fingerprint(t, fingerprints.filter_all([t])[0], np.zeros(0, np.int64))
              for t in texts]
    share = fingerprints.shares(prints)
    theirs = [CodeFingerprint("x.py", fingerprints.K, 1, fp=io.StringIO(t)) for t in texts]
    for a, b in itertools.combinations(range(len(texts)), 2):
        _, (s1, s2), _ = compare_files(theirs[a], theirs[b])
        assert (share[a, b], share[b, a]) == pytest.approx((s1, s2), abs=1e-12), (a, b)
    assert share[2, 3] > 0.8 and np.diag(share).tolist() == [1.0] * len(texts)
