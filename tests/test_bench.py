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
