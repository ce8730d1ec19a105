"""Helpers for the repository's own tests: grade source text through the real sandbox."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from autograder import catalogue
from autograder.grading import loop, uploads
from autograder.grading import runner
from autograder.grading.runner import TestResult
from autograder.driver.slot import Slot

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"


def solution_source(topic: str) -> str:
    return (SOLUTIONS / f"{topic}.py").read_text(encoding="utf-8")


def stub_source(topic: str) -> str:
    """The stub of ``topic`` as `course stubs` makes it from the solution: never the working
    copy's exercises/, which a student (or `course reset`'s backups) may have changed."""
    from autograder.authoring import stubs

    return stubs.make_stub(solution_source(topic), catalogue.get_topic(topic))


def write_stubs(folder: Path) -> Path:
    """Every topic's generated stub (:func:`stub_source`) written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for t in catalogue.topics():
        (folder / t.filename).write_text(stub_source(t.module), encoding="utf-8")
    return folder


def grade_sources(slot: Slot, sources: dict[str, str | bytes], topics: list[str] | None = None,
                  hidden: bool = True, plans: dict | None = None) -> dict[str, TestResult]:
    """Grade in-memory topic files (topic -> source) on ``slot``: test name -> result.

    ``plans`` (``autograder.grading.plan.record``'s) grades as a batch does; without, call by call.
    """
    raw = {k: v.encode() if isinstance(v, str) else v for k, v in sources.items()}
    specs = {t: runner.collect(t, hidden=hidden) for t in topics or list(raw)}
    problems = {t: f"{t}.py not found" for t in specs if t not in raw}
    outcome = loop.grade(slot, raw, specs, problems=problems, plans=plans)
    return {r.spec.name: r for r in outcome.flat()}


def grade_folder(slot: Slot, folder: Path, topics: list[str] | None = None,
                 hidden: bool = True) -> dict[str, TestResult]:
    loaded = uploads.load(folder)
    return grade_sources(slot, loaded.sources, topics or catalogue.topic_modules(), hidden)


def with_replacement(topic: str, code: str) -> str:
    """The reference solution of ``topic`` with ``code`` appended: definitions in ``code``
    replace the reference's (a later ``def``/``class`` of the same name wins)."""
    return solution_source(topic) + "\n\n# --- replacement under test ---\n" + code + "\n"


def failed_exercises(results: dict[str, TestResult]) -> set[str]:
    return {r.spec.exercise for r in results.values() if not r.passed}


# ------------------------------------------------------------------ the `course` command


def course_env(**extra: str) -> dict[str, str]:
    """The environment the tests run ``course`` in: this checkout first on the path, a wide
    terminal for the tables, unbuffered output."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160", "PYTHONUNBUFFERED": "1",
            **extra}


#: Python that runs ``course`` (sys.argv: its arguments) as a terminal starts it. A shell's
#: background job (`make test &`, a CI runner's) starts with SIGINT ignored and every child
#: inherits that, so `course` would rightly keep ignoring Ctrl-C: a test that sends SIGINT
#: must give the process Python's usual handler first (seen: `course watch` never stopped).
RUN_COURSE = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "import runpy; runpy.run_module('autograder.cli', run_name='__main__')")


def spawn(*args: str, cwd: Path = ROOT, env: dict | None = None,
          prelude: str = "") -> subprocess.Popen:
    """Start ``course ARGS`` in its own session (so that the whole of it can be killed);
    ``prelude`` is Python run in that process first (a test hook)."""
    code = prelude + "\n" + RUN_COURSE
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd,
                            env=env or course_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(proc: subprocess.Popen, timeout: float = 600) -> subprocess.CompletedProcess:
    """Wait for ``proc``; past ``timeout`` its whole session is killed (rc -9)."""
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return subprocess.CompletedProcess(proc.args, -9, stdout,
                                           stderr + f"\n[killed after {timeout} s]")
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def course(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 900,
           prelude: str = "") -> subprocess.CompletedProcess:
    """Run the real CLI, ``course ARGS``, in a subprocess: the one way the tests call it."""
    return finish(spawn(*args, cwd=cwd, env=env, prelude=prelude), timeout)


def shared_dir(tmp_path_factory, name: str) -> Path:
    """A folder all pytest-xdist workers of this run share (their base temps' parent)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


def graded_example_class(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """The example class (autograder.cli.demo), graded by ``course grade --jobs 2`` once per
    test run whatever the number of xdist workers: (class folder, out folder, the run)."""
    from autograder.cli import demo

    root = shared_dir(tmp_path_factory, "example-class")
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / "example-class.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = root / "run.json"
        if not record.exists():
            demo.assemble(root / "class")
            proc = course("grade", "--class", str(root / "class"), "--out", str(root / "out"),
                          "--jobs", "2")
            record.write_text(json.dumps([proc.returncode, proc.stdout, proc.stderr]))
        rc, stdout, stderr = json.loads(record.read_text())
    return root / "class", root / "out", subprocess.CompletedProcess(["course", "grade"], rc,
                                                                     stdout, stderr)
