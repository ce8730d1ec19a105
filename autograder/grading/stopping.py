"""Stopping a batch: the signals, the pool's shutdown and the exception `course grade` reports
(:mod:`autograder.grading.batch` and :mod:`autograder.grading.slot_process` hold the parts that
touch its slots and files)."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Callable


class Interrupted(KeyboardInterrupt):
    """:func:`grade_batch` was stopped by SIGINT or SIGTERM; what was graded is on disk.

    ``saved`` of the batch's ``total`` submissions have complete results (a re-run of the same
    batch resumes them); ``signum`` is the signal that stopped it. grades.csv and report.html
    were not written.
    """

    def __init__(self, saved: int, total: int, signum: int) -> None:
        super().__init__(f"{saved}/{total} submissions saved")
        self.saved, self.total, self.signum = saved, total, signum

    @property
    def exit_code(self) -> int:
        """The shell's code for a death by ``signum``: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


#: The signals that stop a batch.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds the grader gives its slots to close their zygotes once stopped, before SIGKILL.
SLOT_CLOSE_SECONDS = 30


@contextlib.contextmanager
def stop_signals(on_stop: Callable[[int, object], None]):
    """While inside, SIGINT and SIGTERM call ``on_stop`` (the grader's: ``batch._GraderStop``).

    A signal the caller ignores (``nohup``, a background job) stays ignored; outside the main
    thread, where no handler can be set, nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s, before in old.items():
        if before is not signal.SIG_IGN:
            signal.signal(s, on_stop)
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def stops_ignored():
    """While inside, SIGINT and SIGTERM are ignored (main thread only): clean-up after a
    stop is not itself cut short, and processes spawned meanwhile start ignoring both."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and make every slot leave (SIGTERM: see
    :func:`slot_process._slot_stop`), waiting for them; a slot that does not leave within
    ``SLOT_CLOSE_SECONDS`` is killed."""
    # The executor's own processes: Python 3.14's terminate_workers() does the same.
    procs = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(OSError, ValueError):
            p.terminate()
    deadline = time.monotonic() + SLOT_CLOSE_SECONDS
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.exitcode is None:
            with contextlib.suppress(OSError, ValueError):
                p.kill()
            p.join()
