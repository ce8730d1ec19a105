"""`course watch`: re-run the public checks of the topics whose files were saved."""

from __future__ import annotations

import signal
import time
from pathlib import Path


from autograder import catalogue
from autograder.console import console, print_failures, print_output
from autograder.grading.runner import TestResult
from autograder.student.progress import (check_public, progress, progress_table, summary_line,
                                         warn_shadowed)


#: How many failures `course watch` prints after each save.
WATCH_FAILURES = 5


# ---------------------------------------------------------------- watch

def _failures(results: list[TestResult], notes: dict[str, str] | None = None,
              limit: int = WATCH_FAILURES, folder: Path | None = None) -> None:
    """One topic's failures after a save: its first ``limit`` failed tests (the shared order
    and caps of :func:`autograder.console.print_failures`; tracebacks name the files in
    ``folder``)."""
    if results:
        print_failures(results, limit, notes, folder)


def _changed_topics(changes, folder: Path, topics: list[catalogue.Topic]) -> list[catalogue.Topic]:
    names = {Path(p).name for _, p in changes if Path(p).parent == folder}
    return [t for t in topics if t.filename in names or f"{t.module}.ipynb" in names]


def _saves(watchfiles, folder: Path, only_topics):
    """watchfiles' change sets for ``folder``, watched in a daemon thread: the main thread
    waits on a queue, in Python, so a Ctrl-C always reaches it (inside watchfiles' Rust loop
    one was missed for 30 s on a loaded machine, twice: tests/test_student_loop.py)."""
    import queue
    import threading

    changes: queue.Queue = queue.Queue()
    stop = threading.Event()

    def run() -> None:
        for found in watchfiles.watch(folder, watch_filter=only_topics, recursive=False,
                                      stop_event=stop, raise_interrupt=False):
            changes.put(found)

    threading.Thread(target=run, daemon=True).start()
    try:
        while True:
            try:
                yield changes.get(timeout=0.5)
            except queue.Empty:
                continue
    finally:
        stop.set()


def watch(folder: Path, topics: list[catalogue.Topic], once: bool = False) -> int:
    """`course watch`: check once, then re-check each topic whose file is saved, showing the
    progress table and that topic's first failures. Ctrl-C exits 0; with ``once``, exit after
    the first re-check (0 when that topic passes, 1 otherwise)."""
    import watchfiles

    from autograder.driver.slot import Slot

    folder = folder.resolve()
    wanted = {t.filename for t in topics} | {f"{t.module}.ipynb" for t in topics}

    def only_topics(change, path: str) -> bool:
        return Path(path).name in wanted

    def stop(signum, frame):  # `kill`, a closed terminal: stop as on Ctrl-C, workers reaped
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, stop)
        except ValueError:  # not the main thread: leave signals alone
            pass
    try:
        with Slot(0) as slot:
            console.print(f"Checking {len(topics)} topic(s) in {folder} …")
            warn_shadowed("watch", folder, topics)
            results = check_public(slot, folder, topics).results
            console.print(progress_table(progress(folder, topics, results),
                                         exercises=len(topics) == 1))
            console.print(f"Watching {folder} for saved changes; Ctrl-C to quit.", soft_wrap=True)
            for changes in _saves(watchfiles, folder, only_topics):
                changed = _changed_topics(changes, folder, topics)
                if not changed:
                    continue
                if console.is_terminal:
                    console.clear()
                stamp = time.strftime("%H:%M:%S")
                console.print(f"[{stamp}] re-checking {', '.join(t.filename for t in changed)}",
                              highlight=False, markup=False)
                warn_shadowed("watch", folder, changed)  # a saved notebook the .py hides
                run = check_public(slot, folder, changed)
                results.update(run.results)
                table = progress(folder, topics, results)
                console.print(progress_table(table, exercises={t.module for t in changed}))
                for top in changed:
                    rs = results[top.module]
                    if rs and all(r.passed for r in rs):
                        console.print(f"[bold green]✓ {top.module}: all {len(rs)} public tests "
                                      "pass.[/]")
                    _failures(rs, run.notes, folder=folder)
                print_output(run.output)
                console.print(summary_line(table))
                if once:
                    ok = all(r.passed for t in changed for r in results[t.module])
                    return 0 if ok else 1
                console.print(f"Watching {folder}; Ctrl-C to quit.", soft_wrap=True)
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print("Stopped watching.")
    return 0
