"""autograder.grading.timing: the seconds-by-phase table Gradescope's run_autograder logs."""

from __future__ import annotations

import subprocess
import sys
import time

from autograder.grading import timing


def test_laps_add_up_and_a_repeated_phase_accumulates(monkeypatch):
    clock = iter([10.0, 10.5, 12.0, 12.25])
    monkeypatch.setattr(timing.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(timing, "process_age", lambda: 1.5)
    w = timing.Stopwatch("start-up")
    w.lap("a")        # 0.5
    w.lap("b")        # 1.5
    w.lap("a")        # 0.25 more
    assert w.laps == [("start-up", 1.5), ("a", 0.75), ("b", 1.5)]
    assert w.total() == 3.75
    lines = w.table("title:").splitlines()
    assert lines[0] == "title:"
    assert lines[1].split() == ["start-up", "1.50"]
    assert lines[-1].split() == ["total", "3.75"]


def test_without_the_process_age_the_first_lap_is_left_out(monkeypatch):
    monkeypatch.setattr(timing, "process_age", lambda: None)
    w = timing.Stopwatch("start-up")
    w.lap("a")
    assert [name for name, _ in w.laps] == ["a"]


def test_process_age_counts_from_the_process_start():
    """A child that sleeps before asking is at least that old, and not much older."""
    code = ("import time; time.sleep(0.6); from autograder.grading import timing; "
            "print(timing.process_age())")
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    wall = time.monotonic() - t0
    age = float(out)
    assert 0.55 <= age <= wall + 0.05  # clock ticks: 10 ms


def test_lap_without_a_stopwatch_does_nothing_and_start_stop_switch_it():
    timing.stop()
    timing.lap("ignored")  # no stopwatch: `course grade` pays nothing
    w = timing.start("start-up")
    timing.lap("a")
    timing.stop()
    timing.lap("b")
    assert [name for name, _ in w.laps][-1] == "a"
    assert "b" not in [name for name, _ in w.laps]
