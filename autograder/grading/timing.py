"""Where a grading run's seconds go, by phase: the table Gradescope's ``run_autograder`` logs.

A student on Gradescope waits from ``run_autograder``'s start to ``results.json``
(docs/design/measured-facts.md, "Gradescope: what a student waits for"). :func:`start` begins a
:class:`Stopwatch` for this process; the grader marks the end of each phase with :func:`lap`
(a no-op when no stopwatch runs, as in `course grade`), and the caller prints
:meth:`Stopwatch.table` to its log. The first lap counts from the process's own start (the
Python interpreter's start-up and the grader's imports), read from ``/proc/self/stat``.
"""

from __future__ import annotations

import os
import time


def process_age() -> float | None:
    """Seconds since this process started (Linux's ``/proc/self/stat``, field 22, in clock
    ticks since boot, against ``CLOCK_BOOTTIME``), or None where that cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            stat = f.read()
        # Field 2, the command name, is in parentheses and may hold spaces: split after it.
        fields = stat[stat.rindex(")") + 2:].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 overall
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class Stopwatch:
    """Laps of one run: (phase, seconds), each from the end of the previous lap."""

    def __init__(self, first: str = "start-up (Python)") -> None:
        """Start now; ``first`` names the lap from the process's start to now (left out when
        the process's age cannot be read)."""
        self.laps: list[tuple[str, float]] = []
        age = process_age()
        if age is not None:
            self.laps.append((first, age))
        self._last = time.monotonic()

    def lap(self, phase: str) -> None:
        """End the lap ``phase`` now; a phase lapped twice (one sweep per submission) adds up."""
        now = time.monotonic()
        seconds, self._last = now - self._last, now
        for i, (name, before) in enumerate(self.laps):
            if name == phase:
                self.laps[i] = (name, before + seconds)
                return
        self.laps.append((phase, seconds))

    def total(self) -> float:
        """The seconds of every lap together."""
        return sum(s for _, s in self.laps)

    def table(self, title: str) -> str:
        """``title``, then one line per lap (seconds, two decimals) and the total."""
        width = max([len(name) for name, _ in self.laps] + [5])
        lines = [title]
        lines += [f"  {name:<{width}}  {seconds:6.2f}" for name, seconds in self.laps]
        lines.append(f"  {'total':<{width}}  {self.total():6.2f}")
        return "\n".join(lines)


_current: Stopwatch | None = None


def start(first: str = "start-up (Python)") -> Stopwatch:
    """Begin this process's stopwatch (replacing any earlier one) and return it."""
    global _current
    _current = Stopwatch(first)
    return _current


def stop() -> None:
    """End this process's stopwatch: later :func:`lap` calls do nothing."""
    global _current
    _current = None


def lap(phase: str) -> None:
    """End the lap ``phase`` of this process's stopwatch; nothing when none runs."""
    if _current is not None:
        _current.lap(phase)
