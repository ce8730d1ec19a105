"""The suites inside a notebook kernel: what the test cells of the nbgrader export call.

An autograded cell of an exported notebook (see :mod:`autograder.exports.nbgrader.export`) reads::

    from autograder.exports.nbgrader.adapter import Tests
    tests = Tests("ex01_vectors", "dot", globals())
    tests.run("cat·dog is 0.69")              # a public test, by its description
    ### BEGIN HIDDEN TESTS
    tests.run("random vectors of any length")  # a hidden test (instructor's copy only)
    ### END HIDDEN TESTS
    tests.result()

``run`` looks the test up in the very suites `course grade` runs (``autograder/suites``) and
runs that function with ``sub`` = the functions the notebook defined and ``ref`` = the reference
(:func:`autograder.grading.runner.reference`). This is nbgrader's model, not the sandbox's: the student's
code runs **in this kernel, in this process**, so a determined student can tamper with the
verdict. Grading the collected notebooks with `course grade` is the tamper-proof path.

Values still cross the codec both ways (:class:`NotebookSession` drives the worker's own request
handler), so a test sees exactly the plain data it sees under `course grade`: tensors as
``TensorData``, tuples as lists, exceptions as MRO names. While hidden tests run, messages omit
inputs and expected values, and whatever the student's code prints is dropped (it could print
the hidden inputs into the feedback).

``result()``: with hidden tests run (autograding), the cell's value is the points earned, which
nbgrader reads as partial credit, so nbgrader and `course grade` score the same tests alike.
With public tests only (the student's released notebook), it raises if one failed (nbgrader's
"Validate" then flags the cell) and is silent otherwise.
"""

from __future__ import annotations

import contextlib
import functools
import io
import signal
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from autograder import catalogue
from autograder.driver import protocol
from autograder.driver.errors import CallTimeout, SubmissionFault
from autograder.grading import runner

# The worker's own request handler: the student's code runs in this kernel (nbgrader's model),
# so the adapter is the worker here. It imports nothing that starts or confines a process
# (slot, session, zygote, isolation): a notebook kernel is not the grader's host.
from autograder.sandbox import worker
from autograder.wire import codec, frames

#: What a notebook may print during one public test before the rest is cut.
OUTPUT_CAP = 4000


def _private_hypothesis_dir() -> None:
    """Keep Hypothesis's files out of the kernel's folder.

    Hypothesis caches the literal constants of every local module it sees (the hidden suites and
    the solutions included) under ``.hypothesis/`` in the working directory; nbgrader's kernel
    runs in ``autograded/<student>/<assignment>/``, which `generate_feedback` copies to the
    student. A private temporary folder, removed at exit, takes them instead.
    """
    import atexit
    import shutil
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="course-hypothesis-")
    set_hypothesis_home_dir(home)
    atexit.register(shutil.rmtree, home, True)


_private_hypothesis_dir()


class TestsOutOfDate(LookupError):
    """A test cell names a test the suites no longer hold: re-export the notebooks."""


class _Pipe:
    """Stands in for the worker's socket: keeps the frames the request handler sends."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.frames.append(bytes(data))


class _CallTimedOut(BaseException):
    """Raised in student code by the per-call alarm."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Interrupt student code after ``seconds`` (main thread only: signals need it)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise _CallTimedOut()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class NotebookSession:
    """In-process stand-in for :class:`autograder.driver.session.Session` (what ``sub`` calls).

    The topic module is the notebook's namespace, registered under the topic's name while a
    call runs. Requests and replies are encoded and decoded exactly as across the sandbox's
    socket, and the worker's own :class:`autograder.sandbox.worker.Server` dispatches them.
    """

    generation = 1  # objects never outlive a worker here: there is no worker to restart
    source_generation = 1
    refusals = 0
    #: replies counted by a real session for run.TestResult.raised_only; nbgrader runs one
    #: test per cell, not through loop.grade, so no error rule is gated here
    returned = raised = 0

    @staticmethod
    def out_of_time() -> bool:
        """No submission deadline here: nbgrader times the notebook's cells itself."""
        return False

    def __init__(self, topic: str, namespace: dict[str, Any], call_seconds: float = 10.0) -> None:
        self.topic = topic
        self.module = ModuleType(topic)
        self.module.__dict__.update(namespace)
        self.module.__dict__["__name__"] = topic
        self.call_seconds = call_seconds
        self.pipe = _Pipe()
        self.server = worker.Server(self.pipe, ".")  # type: ignore[arg-type]
        self.output = io.StringIO()
        self.timed_out: dict[str, str] = {}

    def load(self, module: str) -> None:
        """Nothing to import: the notebook's cells already ran (the Session's API)."""
        return None

    @contextlib.contextmanager
    def _as_module(self) -> Iterator[None]:
        old = sys.modules.get(self.topic)
        sys.modules[self.topic] = self.module
        try:
            yield
        finally:
            if old is None:
                sys.modules.pop(self.topic, None)
            else:
                sys.modules[self.topic] = old

    def call(self, module: str, name: str, args: tuple = (), kwargs: dict | None = None, *,
             keep: bool = False, op: str = "call", handle: Any = None,
             timeout: float | None = None) -> Any:
        """Call ``module.name(*args, **kwargs)`` in this kernel (or a method/probe, by ``op``),
        its request and reply through the codec as across the sandbox's socket.

        Raises:
            CallTimeout: the call ran past ``timeout`` (default ``call_seconds``) seconds, or
                an earlier call of the same function did.
            StudentException, BadResult: as :func:`autograder.driver.protocol.interpret_reply`,
                the one reply interpreter the grader's session uses too.
        """
        where = protocol.where_of(module, name, op)
        key = f"{module}.{name}"
        if key in self.timed_out:
            raise CallTimeout(self.timed_out[key])
        req = protocol.request(module, name, args, kwargs, keep=keep, op=op, handle=handle)
        inside = codec.decode(frames.unframe(codec.encode(req), codec.MAX_FRAME),
                              tensors=self.server._tensor, handles=self.server._lookup)
        seconds = timeout or self.call_seconds
        self.pipe.frames.clear()
        with self._as_module(), contextlib.redirect_stdout(self.output), \
                contextlib.redirect_stderr(self.output):
            try:
                with _alarm(seconds):
                    value = self.server.dispatch(inside)
            except _CallTimedOut:
                fault = protocol.call_timeout(where, seconds)
                self.timed_out[key] = protocol.barred(where, fault)
                raise fault from None
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - sys.exit in student code is a result
                self.pipe.sendall(codec.encode({"exc": worker.describe_exception(exc)}))
            else:
                self.server.respond(value, keep=bool(inside.get("keep")))
        try:
            body = frames.unframe(self.pipe.frames[-1], codec.MAX_FRAME + 1024)
        except frames.FrameError as exc:
            raise protocol.unreadable(where, exc) from None
        return protocol.interpret_reply(body, where)

    def take_output(self) -> str:
        """What the notebook's code printed since the last call of this (then forgotten)."""
        text = self.output.getvalue()
        self.output = io.StringIO()
        return text


@functools.cache
def _specs(topic: str) -> dict[str, runner.TestSpec]:
    return {s.name: s for s in runner.collect(topic, hidden=runner.hidden_available())}


class Tests:
    """The graded tests of one exercise, run in the notebook's kernel (see the module doc)."""

    def __init__(self, topic: str, exercise: str, namespace: dict[str, Any]) -> None:
        top = catalogue.get_topic(topic)
        self.topic = top.module
        self.exercise = top.exercise(exercise)
        self.session = NotebookSession(self.topic, namespace)
        self.results: list[runner.TestResult] = []

    def run(self, description: str) -> runner.TestResult:
        """Run the test ``<topic>.<exercise>: <description>`` and print its verdict."""
        name = f"{self.topic}.{self.exercise.name}: {description}"
        spec = _specs(self.topic).get(name)
        if spec is None:
            raise TestsOutOfDate(f"no test named {name!r} in this installation's suites: the "
                                 "notebook is older or newer than the course package")
        hidden = spec.visibility == "hidden"
        noise = io.StringIO()  # the trusted side's own output (a grader fault's traceback)
        with contextlib.redirect_stderr(noise), contextlib.redirect_stdout(noise):
            try:
                ref = runner.reference(self.topic)
            except (OSError, ImportError) as exc:
                ref = None
                noise.write(f"no reference available: {exc}\n")
            result = runner.run_test(self.session, spec, ref)
        self.results.append(result)
        printed = self.session.take_output()
        label = "hidden test" if hidden else "test"
        if result.passed:
            print(f"PASS {label}: {description}")
        elif result.message.startswith("skipped:"):
            print(f"SKIP {label}: {description} ({result.message})")
        else:
            print(f"FAIL {label}: {description}\n     {result.message}")
        if hidden:
            if printed.strip():
                print("     (what your code printed during hidden tests is not shown)")
        else:
            extra = (printed + noise.getvalue()).strip()
            if extra:
                cut = extra[:OUTPUT_CAP] + ("\n[... cut]" if len(extra) > OUTPUT_CAP else "")
                print("     your code printed:\n" + "\n".join("       " + line
                                                            for line in cut.splitlines()))
        return result

    def _failed(self) -> list[runner.TestResult]:
        return [r for r in self.results
                if not r.passed and not r.message.startswith("skipped:")]

    def score(self) -> float:
        """Points earned (each test's share of the exercise's catalogue points)."""
        if self.results and not self._failed():
            return float(self.exercise.points)
        earned = sum(r.score for r in self.results)
        return min(round(earned, 4), float(self.exercise.points))

    def result(self) -> float | None:
        """Close the cell: partial credit when hidden tests ran, else pass/fail (module doc)."""
        ex = self.exercise
        if any(r.spec.visibility == "hidden" for r in self.results):
            points = self.score()
            passed = len(self.results) - len(self._failed())
            print(f"{ex.qualname}: {points:g} / {ex.points} points "
                  f"({passed} of {len(self.results)} tests passed)")
            return points
        failed = self._failed()
        if not self.results:
            print(f"{ex.name} has no public tests: it is checked when your work is graded.")
            return None
        if failed:
            raise AssertionError(
                f"{len(failed)} of {len(self.results)} public tests of {ex.name} failed. "
                f"Hint: {ex.hints[0]} (more: `course hint {ex.qualname}`)")
        print(f"{ex.name}: the public tests pass; more tests run when your work is graded.")
        return None


__all__ = ["NotebookSession", "SubmissionFault", "Tests", "TestsOutOfDate"]
