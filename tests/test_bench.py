"""A small-N smoke run of the throughput benchmark (the benchmark itself is not a test)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT


@pytest.mark.slow
def test_benchmark_runs_and_prints_its_table():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "grade_throughput.py"), "--n", "3",
         "--pytest-sample", "1", "--share-sample", "2", "--no-nbgrader", "--otter-sample", "1",
         # one cheap topic: the harness is exercised whole, the timing means nothing here
         "--topics", "ex01_vectors"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "| course grade --jobs 2 |" in out
    assert "pytest per submission" in out
    assert "grader overhead" in out and "peak memory" in out
    # Otter's row where bench/setup_otter.sh made its venv (not in CI), else a line saying so;
    # where it ran, the bridge graded the complete student fully and the stub not at all.
    if (ROOT / "bench" / ".otter-venv" / "bin" / "otter").exists():
        assert "| otter run (sample 1) |" in out
        assert "s0000_complete 12.00 / 12.00 (course grade 12.00)" in out
    else:
        assert "otter: not measured (run bench/setup_otter.sh)" in out


def test_suite_profile_rows_cover_every_test_and_pass_on_the_reference(tmp_path):
    """bench/suite_profile.py on one cheap topic: a row per graded test, the reference passing
    each (a profile of failing tests would measure the wrong thing), calls and bytes counted."""
    out = tmp_path / "profile.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "suite_profile.py"), "--topics", "ex01_vectors",
         "--top", "3", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    from autograder.grading import runner

    rows = json.loads(out.read_text())
    assert sorted(r["name"] for r in rows) == sorted(s.name for s in runner.collect("ex01_vectors"))
    assert all(r["passed"] for r in rows)
    assert sum(r["calls"] for r in rows) > len(rows)  # every test calls the submission
    # a request frame holds at least its header and a reply its value, whatever the test
    assert all(r["sent"] > 10 * r["calls"] and r["received"] > 0 for r in rows if r["calls"])
    assert "costliest 3 tests by student seconds:" in proc.stdout
