"""An error in student code names its line in public tests, and never in hidden ones (issue 38,
item 1; docs/design/threat-model.md §4: a line number can encode a branch taken on a hidden
input).

The worker describes the traceback of the student's side (autograder.sandbox.worker); the
grader shows the submission's own frames in a public test's message, every frame with
``course check -v`` (errors.FULL_TRACEBACK), and none in a hidden test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from autograder.grading import loop
from autograder.grading import runner
from autograder.driver import errors
from autograder.wire.codec import RemoteException
from tests.helpers import ROOT, course, with_replacement

#: softmax_jacobian calling a helper that calls numpy wrongly (a library's Python frames below).
BUGGY = textwrap.dedent("""\
    def softmax_jacobian(p):
        return _helper(p)


    def _helper(p):
        q = np.asarray(p)
        return np.linalg.inv(q)  # the student's mistake: q is 1-D
    """)
FRAME = re.compile(r'File "<submission>/ex03_softmax\.py", line (\d+), in (\w+)')


def _grade(slot, source: str) -> dict[str, runner.TestResult]:
    specs = {"ex03_softmax": [s for s in runner.collect("ex03_softmax")
                              if s.exercise == "softmax_jacobian"]}
    outcome = loop.grade(slot, {"ex03_softmax": source.encode()}, specs)
    return {r.spec.name: r for r in outcome.flat()}


@pytest.fixture(scope="module")
def graded(slot):
    source = with_replacement("ex03_softmax", BUGGY)
    return source, _grade(slot, source)


def test_a_public_failure_names_the_students_lines_and_nothing_else(graded):
    source, results = graded
    public = [r for r in results.values() if r.spec.visibility == "public" and not r.passed]
    assert public
    lines = source.splitlines()
    for r in public:
        frames = FRAME.findall(r.message)
        assert [name for _, name in frames] == ["softmax_jacobian", "_helper"], r.message
        # the line named is the one that raised, and its text is quoted under it
        assert lines[int(frames[-1][0]) - 1].strip() in r.message
        assert "np.linalg.inv(q)" in r.message
        # nothing of the grader's, nor of numpy's beyond the call into it
        assert "site-packages" not in r.message and "autograder" not in r.message
        assert r.message.count('File "') == 2


def test_a_hidden_failure_shows_no_line_number(graded):
    _, results = graded
    hidden = [r for r in results.values() if r.spec.visibility == "hidden" and not r.passed]
    assert hidden
    for r in hidden:
        assert "<submission>" not in r.message and 'File "' not in r.message, r.message
        assert not re.search(r"\bline \d+", r.message), r.message
        assert "np.linalg" not in r.message


def test_the_full_traceback_shows_the_library_frames_in_public_tests_only():
    tb = ('  File "<submission>/ex03_softmax.py", line 7, in _helper\n'
          "    return np.linalg.inv(q)\n"
          '  File "<site-packages>/numpy/linalg/_linalg.py", line 641, in inv\n'
          "    _assert_stacked_square(a)\n")
    exc = errors.StudentException(RemoteException(["ValueError"], "bad", tb), "ex03_softmax.f")
    assert "numpy" not in str(exc) and "line 7, in _helper" in str(exc)
    token = errors.FULL_TRACEBACK.set(True)
    try:
        assert "numpy/linalg/_linalg.py" in str(exc)
        hidden = errors.HIDDEN.set(True)
        try:
            assert str(exc) == ("ex03_softmax.f raised ValueError (message hidden in a hidden "
                                "test)")
        finally:
            errors.HIDDEN.reset(hidden)
    finally:
        errors.FULL_TRACEBACK.reset(token)
    assert errors.without_frames(str(exc)) == "ex03_softmax.f raised ValueError: bad"


def test_messages_are_the_same_bytes_run_to_run(slot, graded):
    # The worker's folder has a random name: it must never reach a message.
    source, results = graded
    again = _grade(slot, source)
    assert {k: r.message for k, r in again.items()} == {k: r.message for k, r in results.items()}


def test_course_check_names_the_file_in_the_students_folder_and_v_shows_numpy(tmp_path):
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "ex03_softmax.py").write_text(with_replacement("ex03_softmax", BUGGY))
    plain = course("check", "ex03_softmax.softmax_jacobian", "--dir", str(folder))
    assert plain.returncode == 1
    assert f'File "{folder / "ex03_softmax.py"}", line' in plain.stdout
    assert "np.linalg.inv(q)" in plain.stdout and "_linalg.py" not in plain.stdout
    verbose = course("check", "ex03_softmax.softmax_jacobian", "-v", "--dir", str(folder))
    assert "numpy/linalg/_linalg.py" in verbose.stdout


KERNEL = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _kernel(x_ptr, n):
        offs = tl.arange(0, n)  # n is not a tl.constexpr: Triton refuses it
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))


    def launch():
        x = torch.zeros(4)
        _kernel[(1,)](x, 4)
    """)

PROBE = textwrap.dedent("""\
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from autograder.sandbox import worker
    import kern
    try:
        kern.launch()
    except Exception as exc:
        r = worker.describe_exception(exc, sys.argv[1])
        print(json.dumps({"classes": r.classes, "traceback": r.traceback}))
    """)


def test_a_triton_interpreter_error_names_the_kernels_line(tmp_path):
    pytest.importorskip("triton")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "kern.py").write_text(KERNEL)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE, str(sub)], capture_output=True, check=False,
                         text=True, env=env, timeout=300, cwd=tmp_path)
    described = json.loads(out.stdout.strip().splitlines()[-1])
    assert "InterpreterError" in described["classes"][0]
    own = errors.own_frames(described["traceback"])
    assert 'File "<submission>/kern.py", line 14, in launch' in own
    assert 'File "<submission>/kern.py", line 8, in _kernel' in own
    assert "tl.arange(0, n)" in own



def test_a_warning_a_library_raises_names_the_submissions_line(slot):
    # numpy warns "Mean of empty slice" from its own fromnumeric.py (a path in the grader's
    # venv): the student is shown the line of theirs that called it.
    code = textwrap.dedent("""\
        def softmax_jacobian(p):
            np.mean(np.array([]))  # warns inside numpy
            p = np.asarray(p, dtype=float)
            return np.diag(p) - np.outer(p, p)
        """)
    source = with_replacement("ex03_softmax", code)
    specs = {"ex03_softmax": [s for s in runner.collect("ex03_softmax", hidden=False)
                              if s.exercise == "softmax_jacobian"]}
    outcome = loop.grade(slot, {"ex03_softmax": source.encode()}, specs)
    line = source.splitlines().index("    np.mean(np.array([]))  # warns inside numpy") + 1
    assert f"<submission>/ex03_softmax.py:{line}: RuntimeWarning: Mean of empty slice" \
        in outcome.output
    assert "site-packages" not in outcome.output and ".venv" not in outcome.output


def test_the_report_reads_a_stub_failure_and_groups_a_mistake_without_its_lines():
    from types import SimpleNamespace

    from autograder.results import report

    stub = ("ex03_softmax.softmax raised NotImplementedError: ex03_softmax.softmax: not "
            'implemented yet\n  File "<submission>/ex03_softmax.py", line 40, in softmax\n'
            '    raise NotImplementedError("ex03_softmax.softmax: not implemented yet")')
    assert report.is_stub_failure(SimpleNamespace(kind="failed", message=stub))
    mistake = "ex03_softmax.softmax raised ValueError: bad"
    tests = [SimpleNamespace(kind="failed", passed=False, name="t", topic="ex03_softmax",
                             exercise="softmax", visibility="public",
                             message=f'{mistake}\n  File "<submission>/ex03_softmax.py", '
                                     f"line {n}, in softmax\n    x.reshape(3)")
             for n in (12, 57)]
    results = [SimpleNamespace(id=i, graded_tests=lambda t=t: [t]) for i, t in zip("ab", tests)]
    common, _ = report.common_mistakes(results)
    assert common == [report.Mistake("ex03_softmax.softmax", "t", "public", mistake, ["a", "b"],
                                     0, [])]
