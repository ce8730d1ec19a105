"""What a worker says of student code's exceptions and warnings (untrusted side: it runs in
the worker, autograder.sandbox.worker).

An exception crosses to the grader as a :class:`codec.RemoteException` whose traceback is the
student's side of the call (the submission's frames, and the libraries' it called), in Python's
own layout; the grader shows the submission's frames in public tests only
(:func:`autograder.driver.errors.own_frames`). A warning a library raises names the
submission's line that called it. Paths are written as ``<submission>/…`` and
``<site-packages>/…``: never a random folder's name (results are byte-identical run to run)
nor a path inside the grader's venv.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback

from autograder.wire import codec

#: The most frames a reply's traceback describes (a RecursionError has a thousand), and the
#: most characters of its text (the codec keeps 4,000 of it: codec.RemoteException).
TRACEBACK_FRAMES = 40
TRACEBACK_CHARS = 3000

#: The course's package: its frames in a worker (the dispatcher, the codec, the probes) are
#: the grader's side of a call, never shown to a student.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _is_grader_frame(filename: str) -> bool:
    return filename.startswith(_PACKAGE)


def exception_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    """The frames of ``exc``'s traceback as (file, line, function), outermost first, without
    the course package's (the worker's dispatcher, the codec); then, where a library re-raised
    another exception ``from`` it (Triton's interpreter wraps every error of a kernel in
    ``InterpreterError(repr(e)) from e``), the frames of that cause, which reach the line of
    the student's kernel. The last :data:`TRACEBACK_FRAMES` of them."""
    found: list[tuple[str, int, str]] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(seen) < 4:
        seen.add(id(exc))
        found += [(f.f_code.co_filename, lineno or 0, f.f_code.co_name)
                  for f, lineno in traceback.walk_tb(exc.__traceback__)
                  if not _is_grader_frame(f.f_code.co_filename)]
        exc = exc.__cause__
    return found[-TRACEBACK_FRAMES:]


def _shown_path(filename: str, sub_dir: str) -> str:
    """A frame's file as feedback names it: ``<submission>/…`` for the submission's own files
    (its folder has a random name: results must be byte-identical run to run), and
    ``<site-packages>/…`` for an installed library, never a path inside the grader's venv."""
    if sub_dir and filename.startswith(sub_dir + os.sep):
        return "<submission>/" + filename[len(sub_dir) + 1:]
    _, sep, tail = filename.rpartition(f"{os.sep}site-packages{os.sep}")
    return f"<site-packages>/{tail}" if sep else filename


def describe_exception(exc: BaseException, sub_dir: str = "") -> codec.RemoteException:
    """``exc`` as it crosses to the grader: its MRO's qualified names, its message (2,000
    characters at most) and its traceback on the student's side (:func:`exception_frames`:
    the submission's frames and the libraries' it called, never the course package's), in
    Python's own layout (``  File "<submission>/ex03_softmax.py", line 12, in softmax`` and
    the line's text), at most :data:`TRACEBACK_CHARS` characters: the libraries' outermost frames are
    dropped first, so the submission's own frames survive. ``sub_dir`` and its parent are
    written as fixed placeholders. The grader shows only the submission's frames, and only in
    public tests (:func:`autograder.driver.errors.own_frames`)."""
    mro = []
    for k in type(exc).__mro__:
        mod = k.__module__
        mro.append(k.__qualname__ if mod == "builtins" else f"{mod}.{k.__qualname__}")
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a student exception whose __str__ raises
        message = "<unprintable message>"
    # Written out here rather than by traceback.format_list, whose 3.11 carets re-parse every
    # line: a stub raising NotImplementedError thousands of times spent most of its time there.
    entries = []
    for filename, lineno, name in exception_frames(exc):
        shown = _shown_path(filename, sub_dir)
        line = linecache.getline(filename, lineno).strip()[:200]
        entries.append((shown.startswith("<submission>/"),
                        f'  File "{shown}", line {lineno}, in {name}\n'
                        + (f"    {line}\n" if line else "")))
    while sum(len(e) for _, e in entries) > TRACEBACK_CHARS and len(entries) > 1:
        # the outermost library frame, else the outermost frame: whole frames, never half one
        entries.remove(next((e for e in entries if not e[0]), entries[0]))
    text = "".join(e for _, e in entries)[-TRACEBACK_CHARS:]
    if sub_dir:
        # The grader scrubs these too; done here as well, the same mistake in two submissions
        # gives the same bytes (autograder.grading.replay compares replies byte for byte).
        workdir = os.path.dirname(sub_dir)
        message, text = (x.replace(sub_dir, "<submission>").replace(workdir, "<workdir>")
                         for x in (message, text))
    return codec.RemoteException(classes=mro, message=message[:2000], traceback=text)


def warnings_at_submission(sub_dir: str) -> None:
    """Have a warning that a library raised name the submission's line that called it.

    A warning's place is the frame its ``stacklevel`` picks, often a line inside numpy or
    torch (a path inside the grader's venv that tells the student nothing). Where that frame is
    not the submission's, the innermost frame of the submission's own files on the stack is
    named instead (the Session scrubs its folder to ``<submission>``); a warning raised with
    no submission frame on the stack keeps its place. Installed as
    :func:`warnings.showwarning`, so the filters (shown once per place, ignored, errors) still
    decide first.
    """
    import warnings

    shown = warnings.showwarning
    prefix = sub_dir + os.sep

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if not str(filename).startswith(prefix):
            f = sys._getframe(1)
            while f is not None and not f.f_code.co_filename.startswith(prefix):
                f = f.f_back
            if f is not None:
                filename, lineno, line = f.f_code.co_filename, f.f_lineno, None
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
