"""What a submission's misbehaviour looks like to the grader: :class:`SubmissionFault` and its
family, and what a hidden test may say of it.

``str(fault)`` is a message a student can act on; it reaches the feedback. While a hidden test
runs (:data:`HIDDEN`), messages omit inputs and expected values, and the names the submission
chose (its exceptions' classes and messages) are replaced by fixed text: the class of an
exception made by ``type(secret, …)`` would otherwise spell a hidden input
(docs/design/threat-model.md).
"""

from __future__ import annotations

import builtins
import contextvars
import re

from autograder.wire import codec

#: True while a hidden test runs: messages then omit inputs and expected values. Set by the
#: grading loop around each hidden test; read here (:class:`StudentException`) and by the
#: session and reply interpreter (:func:`autograder.driver.protocol.interpret_reply`).
HIDDEN: contextvars.ContextVar[bool] = contextvars.ContextVar("HIDDEN", default=False)

#: True where the student asked for the whole traceback of their side (`course check -v`): a
#: public test's message then shows every frame the worker described (the libraries' too), not
#: only the submission's own. Never consulted while :data:`HIDDEN` is set.
FULL_TRACEBACK: contextvars.ContextVar[bool] = contextvars.ContextVar("FULL_TRACEBACK",
                                                                     default=False)

#: The builtin exception classes' names: the only exception names a hidden test may show.
BUILTIN_EXCEPTIONS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))

#: What a hidden test says of an exception of a class the submission made.
OWN_EXCEPTION = "an exception of the submission's own class"

#: What every test says once the submission's hard deadline has passed.
BUDGET_SPENT = "submission time budget spent"

#: The worker's exception for a name the submission's module does not define (a string: the
#: trusted side never imports the worker).
MISSING_NAME = "autograder.sandbox.worker.MissingName"


class SubmissionFault(Exception):
    """The submission misbehaved; ``str(exc)`` is a message a student can act on."""


def shown_exception(remote: codec.RemoteException) -> str:
    """The name of a remote exception as a hidden test may show it: a builtin's name, or
    :data:`OWN_EXCEPTION` with the first builtin class it derives from.

    The class names come from student code, and a class made by ``type(secret, …)`` would
    spell a hidden input: only names of the closed set :data:`BUILTIN_EXCEPTIONS` pass.
    """
    if remote.name in BUILTIN_EXCEPTIONS:
        return remote.name
    base = next((c for c in remote.classes if c in BUILTIN_EXCEPTIONS), None)
    return f"{OWN_EXCEPTION}, a subclass of {base}" if base else OWN_EXCEPTION


#: One frame of a worker's traceback text (autograder.sandbox.worker.describe_exception):
#: Python's own layout, the line's text on the next line when the source was readable.
_FRAME = re.compile(r'  File "(?P<file>[^"\n]*)", line (?P<line>\d+), in (?P<name>[^\n]*)\n'
                    r'(?:    (?P<text>[^\n]*)\n)?')

#: Where a submission's own files are, as the worker names them (its folder is random).
SUBMISSION = "<submission>/"


def own_frames(traceback: str) -> str:
    """The frames of ``traceback`` (a :class:`codec.RemoteException`'s, in Python's layout)
    that are the submission's own files' (``<submission>/…``): file, line and the line's text,
    outermost first; nothing of the grader's or of a library beyond the last call into it.
    "" when there is none (a builtin raised at once, or the worker described no frame)."""
    return "".join(m.group(0) for m in _FRAME.finditer(traceback)
                   if m.group("file").startswith(SUBMISSION))


def without_frames(message: str) -> str:
    """``message`` without the traceback lines a public test's message may carry (for
    grouping one mistake across submissions, whose lines differ: :func:`own_frames`)."""
    return re.sub(r'\n  File "[^"\n]*", line \d+, in [^\n]*(\n    [^\n]*)?', "", message)


class StudentException(SubmissionFault):
    """Student code raised an exception (it arrives as MRO names, a message and a traceback).

    ``str(exc)`` says where it was called, the exception's class and message and, below, the
    submission's own frames (:func:`own_frames`; every frame of the worker's side under
    :data:`FULL_TRACEBACK`); in a hidden test only the class, no message and no line number:
    a line number can encode a branch taken on a hidden input (docs/design/threat-model.md §4).

    Args:
        remote: the exception as the worker described it (decoded, capped).
        where: ``"module.name"`` of the call that raised, as the feedback names it.
    """

    def __init__(self, remote: codec.RemoteException, where: str) -> None:
        self.remote = remote
        self.where = where
        if remote.is_a(MISSING_NAME):
            module, _, name = where.partition(".")
            super().__init__(f"{name.split(' ')[0]} is not defined in your {module}.py")
        else:
            super().__init__(f"{where} raised {remote.name}: {remote.message}")

    def __str__(self) -> str:
        # The message is the student's own text, and it can print the arguments: during a
        # hidden test only the exception's class is shown, or the hidden inputs would leak.
        # Its class's name too is the student's (shown_exception).
        if self.remote.is_a(MISSING_NAME):
            return super().__str__()
        if HIDDEN.get():
            return (f"{self.where} raised {shown_exception(self.remote)} "
                    "(message hidden in a hidden test)")
        frames = (self.remote.traceback if FULL_TRACEBACK.get()
                  else own_frames(self.remote.traceback))
        return super().__str__() + ("\n" + frames.rstrip("\n") if frames else "")


class CallTimeout(SubmissionFault):
    """A call did not return within its time limit; the function is not called again."""


class WorkerDied(SubmissionFault):
    """The worker process died during a call (``sys.exit``, ``os._exit``, a crash)."""


class BudgetExhausted(SubmissionFault):
    """The submission's time is up: the call (or test) was not run."""


def budget_spent(where: str, seconds: float) -> BudgetExhausted:
    """The refusal of ``where`` once the submission used up its ``seconds`` (its budget)."""
    return BudgetExhausted(f"{where}: not run, {BUDGET_SPENT} (the submission used up its "
                           f"{seconds:g} s)")


class ImportFailed(SubmissionFault):
    """A topic module of the submission could not be imported (the reason is cached)."""


class BadResult(SubmissionFault):
    """A result that could not cross (too large, malformed)."""
