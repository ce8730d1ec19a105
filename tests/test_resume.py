"""A batch killed with SIGKILL half-way resumes: nothing finished is regraded, nothing is torn.

``course grade --jobs 1`` runs on six submissions (three of them slow to import); as soon as the
first results file appears the whole process group gets SIGKILL. Every results file then on disk
must parse, and a second run must leave those files alone (same inode, same mtime) and grade
only the rest.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.hostile import harness
from tests.hostile.attacks import context_defaults

FAST = "import numpy as np\nfrom numpy.typing import ArrayLike\n\n{dot}\n"
SLOW = "import time\ntime.sleep(1.5)  # a slow import: the batch is still busy when killed\n" + FAST
IDS = {"a_fast": FAST, "b_fast": FAST, "c_slow": SLOW, "d_slow": SLOW, "e_slow": SLOW,
       "f_fast": FAST}


def _stamps(out: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in (out / "results").glob("*.json")}


@pytest.mark.slow
def test_a_batch_killed_half_way_resumes_without_regrading_or_torn_files(tmp_path):
    dot = context_defaults()["DOT"]
    class_dir, out = tmp_path / "class", tmp_path / "out"
    for sid, text in IDS.items():
        (class_dir / sid).mkdir(parents=True)
        (class_dir / sid / "ex01_vectors.py").write_text(text.format(dot=dot))
    args = ("grade", "--class", str(class_dir), "--out", str(out), "--jobs", "1")

    proc = harness.spawn(*args)
    deadline = time.monotonic() + 300
    while not list((out / "results").glob("*.json")):
        assert proc.poll() is None, f"the batch ended before it was killed: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no results file after 300 s"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()

    visible = sorted((out / "results").iterdir())
    finished = _stamps(out)
    assert 1 <= len(finished) < len(IDS), f"killed too late to test anything: {visible}"
    for p in visible:  # a torn write may leave a hidden temp file, never a broken result
        if p.suffix == ".json":
            json.loads(p.read_bytes().decode("utf-8"))
        else:
            assert p.name.startswith(".") and p.name.endswith(".tmp"), p.name
    assert not (out / "grades.csv").exists()

    again = harness.course(*args, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{len(finished)} unchanged, not regraded" in again.stdout
    after = _stamps(out)
    for name, stamp in finished.items():
        assert after[name] == stamp, f"{name} was rewritten although it was finished"
    assert sorted(after) == sorted(f"{sid}.json" for sid in IDS)
    assert not list(out.rglob("*.tmp")), "a stale temp file survived the resumed run"
    rows = list(csv.reader((out / "grades.csv").read_text("utf-8").splitlines()))
    assert [r[0] for r in rows[1:]] == sorted(IDS)
    for sid in IDS:
        doc = json.loads((out / "results" / f"{sid}.json").read_text("utf-8"))
        dots = [t for t in doc["tests"] if t["name"].startswith("ex01_vectors.dot:")]
        assert dots and all(t["status"] == "passed" for t in dots), sid


def test_feedback_read_back_from_the_results_file_is_the_feedback_written():
    """A re-run resumes a submission when its feedback.md equals what its results file gives.
    Read back, each test's score is rounded to 4 places: 89 tests of 12/90 points sum to
    11.8637 ("11.86") where the grade is 11.8667 ("11.87"), so feedback built from the tests'
    sum never matched and such a submission was regraded on every re-run (new-user review)."""
    from autograder import catalogue
    from autograder.results import model, writers

    topic = "ex01_vectors"
    tests = [model.TestOutcome(name=f"{topic}.dot: case {i}", topic=topic, exercise="dot",
                               visibility="public", points=12 / 90, score=12 / 90 * (i < 89),
                               kind="passed" if i < 89 else "failed",
                               message="" if i < 89 else "wrong")
             for i in range(90)]
    topics = {m: 0.0 for m in catalogue.topic_modules()}
    topics[topic] = sum(t.score for t in tests)
    written = model.Result(id="s", sha256="0", status="ok", tests=tests, topics=topics,
                           score=topics[topic], max_score=12.0)
    back = model.from_json(json.loads(writers.results_json(written)))
    assert f"{topic} — " in writers.feedback_md(written)
    assert ": 11.87 / 12" in writers.feedback_md(written)
    assert writers.feedback_md(back) == writers.feedback_md(written)
