"""A submission's time: the budget its calls may spend and its hard deadline
(docs/design/grading-contract.md).

One :class:`Budget` per session, shared by the two ways the session calls its worker: one call
at a time (:class:`autograder.driver.session.Session`) and all at once
(:class:`autograder.driver.pipeline.Pipeline`). It is plain data, so it travels with a
suspended session to another process (it pickles) and the deadline stops meanwhile.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from collections.abc import Iterable

from autograder.limits import Limits


@dataclass
class Budget:
    """The seconds a submission's calls took and may still take, and its hard deadline.

    Attributes:
        limits: ``submission_seconds`` (the budget and the deadline) and ``call_seconds``.
        spent: the budget's use: live calls, and pipelined calls a test used (:meth:`charge`).
        student_seconds: every second the worker computed for the submission, pipelined
            calls no test reached included (a statistic).
        started: the hard deadline's start (``time.monotonic()``), when the first worker is
            asked for (a zygote's own start is not the submission's work); None: not started.
        forking: seconds the zygotes took to fork the submission's workers since ``started``
            (the grader's work: the deadline moves by it).
        left: seconds of the deadline left when suspended (None: never suspended once started).
    """

    limits: Limits
    spent: float = 0.0
    student_seconds: float = 0.0
    started: float | None = None
    forking: float = 0.0
    left: float | None = None

    @property
    def seconds(self) -> float:
        """The submission's budget, and its deadline's length (``limits.submission_seconds``)."""
        return self.limits.submission_seconds

    def start(self) -> None:
        """Start the hard deadline now, unless it runs already."""
        if self.started is None:
            self.started = time.monotonic()

    def forked(self, seconds: float) -> None:
        """Move the deadline by ``seconds`` a zygote took to fork a worker (not the
        submission's work: a zygote warms up torch, seconds, just before its second fork)."""
        self.forking += seconds

    def time_left(self) -> float:
        """Seconds before the hard deadline (negative once it passed)."""
        if self.started is None:
            return self.limits.submission_seconds
        return self.started + self.forking + self.limits.submission_seconds - time.monotonic()

    def out_of_time(self) -> bool:
        """Whether the hard deadline has passed: every remaining test then fails."""
        return self.time_left() <= 0

    def exhausted(self) -> bool:
        """Whether a call starting now is refused: the budget is spent or the deadline passed."""
        return self.spent >= self.limits.submission_seconds or self.out_of_time()

    def timeout(self, timeout: float | None) -> float:
        """A call's time limit: its own (``call_seconds`` by default), at most what is left of
        the budget and of the deadline."""
        return min(timeout or self.limits.call_seconds,
                   self.limits.submission_seconds - self.spent, self.time_left())

    def account(self, seconds: float) -> None:
        """Count a live call's ``seconds`` against the budget and as the student's."""
        self.spent += seconds
        self.student_seconds += seconds

    def charge(self, seconds: float) -> None:
        """Charge pipelined calls a test used to the budget (they were counted as the
        student's when they ran)."""
        self.spent += seconds

    def affordable(self, seconds: Iterable[float]) -> bool:
        """Whether calls taking ``seconds`` would all have run within the budget, call by call
        (each is refused once the budget is spent before it starts)."""
        spent = self.spent
        for dt in seconds:
            if spent >= self.limits.submission_seconds:
                return False
            spent += dt
        return True

    def suspend(self) -> None:
        """Stop the deadline: the time until :meth:`resume` is other submissions'."""
        self.left = None if self.started is None else self.time_left()

    def resume(self) -> None:
        """Go on with the rest of the deadline :meth:`suspend` kept, from now."""
        if self.left is not None:
            used = self.limits.submission_seconds - self.left  # nan for an endless budget
            self.started = time.monotonic() - (used if math.isfinite(used) else 0.0)
            self.forking = 0.0
