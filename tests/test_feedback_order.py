"""Feedback shows the mistake first (issue 15): what the code printed, written exercises'
failures before the stubs (one line each), a topic that did not import as one line, and hints
that belong to the failing test — in `course check`, `course watch` and feedback.md alike."""

from __future__ import annotations

import pytest

from autograder import catalogue
from autograder.authoring.suite import graded
from autograder import console
from autograder.grading import loop
from autograder.grading import runner
from autograder.results import failures, writers
from autograder.results.model import Result
from autograder.student import reset, watch
from tests.helpers import course, stub_source, write_stubs

EX03 = "ex03_softmax"
EX01 = "ex01_vectors"
MARKER = "MARKER_PUBLIC_7319"
#: softmax written wrongly (no max subtraction, sums over every entry), printing a marker.
WRONG_SOFTMAX = f'''def softmax(z, axis=-1, temperature=1.0):
    import numpy as np
    print("{MARKER}", np.shape(z))
    z = np.asarray(z, dtype=float)
    return np.exp(z) / np.exp(z).sum()
'''


def _stub_message(qualname: str) -> str:
    """What a public test's failure says when the stub of ``qualname`` was called."""
    return f"{qualname} raised NotImplementedError: {qualname}: not implemented yet"


def _results(wrong: set[str], messages: dict[str, str] | None = None) -> list:
    """Public + hidden results of topic 3: exercises in ``wrong`` failed with a real message,
    the others with their stub's NotImplementedError (hidden tests: its hidden form)."""
    out = []
    for spec in runner.collect(EX03):
        q = f"{EX03}.{spec.exercise}"
        if spec.exercise in wrong:
            msg = (messages or {}).get(spec.exercise, "result: 3 of 3 entries off")
        elif spec.visibility == "hidden":
            msg = f"{q} raised NotImplementedError (message hidden in a hidden test)"
        else:
            msg = _stub_message(q)
        out.append(runner.TestResult(spec, False, msg))
    return out


def _rec(results) -> list:
    """``results`` as the records feedback and the failure list work on."""
    return [loop.record(r) for r in results]


def _graded(results) -> Result:
    """One submission's record of ``results`` (every topic ran)."""
    return Result.of("s", "0", _rec(results))


def _topic3_file() -> str:
    stub = stub_source(EX03)
    return stub.replace(reset.segment(stub, "softmax"), WRONG_SOFTMAX)


# ---------------------------------------------------------------- the shared order

def test_written_failures_come_first_and_each_stub_is_one_line():
    shown = failures.arrange(_rec(_results({"softmax"})))
    kinds = [s.kind for s in shown]
    n_softmax = sum(s.exercise == "softmax" for s in runner.collect(EX03))
    assert kinds[:n_softmax] == ["failed"] * n_softmax
    assert all(s.exercise == "softmax" for s in shown[:n_softmax])
    lines = shown[n_softmax:]
    others = [e.name for e in catalogue.get_topic(EX03).exercises if e.name != "softmax"]
    assert [s.kind for s in lines] == ["unwritten"] * len(others)
    assert [s.exercise for s in lines] == others
    n_lse = sum(s.exercise == "logsumexp" for s in runner.collect(EX03))
    assert lines[0].line() == f"{EX03}.logsumexp: not written yet ({n_lse} tests)"


def test_an_exercise_with_a_pass_or_its_own_error_is_written():
    results = _results(set())
    # A class half written: one test passes, the rest still meet the stub's error.
    first = next(i for i, r in enumerate(results) if r.spec.exercise == "logsumexp")
    results[first] = runner.TestResult(results[first].spec, True)
    # The student's own NotImplementedError (not the stub's message) is a real failure.
    jac = next(i for i, r in enumerate(results) if r.spec.exercise == "softmax_jacobian"
               and r.spec.visibility == "public")
    results[jac] = runner.TestResult(results[jac].spec, False,
                                     f"{EX03}.softmax_jacobian raised NotImplementedError: later")
    shown = failures.arrange(_rec(results))
    unwritten = {s.exercise for s in shown if s.kind == "unwritten"}
    assert "logsumexp" not in unwritten and "softmax_jacobian" not in unwritten
    assert "softmax" in unwritten
    # Only hidden failures, all in their hidden form: not enough to call it a stub.
    hidden_only = [r for r in _results(set()) if r.spec.visibility == "hidden"]
    assert not [s for s in failures.arrange(_rec(hidden_only)) if s.kind == "unwritten"]


def test_a_topic_that_did_not_import_is_one_line_with_its_reason():
    why = f"{EX03}.py could not be imported: line 3: SyntaxError: invalid syntax (x = )"
    results = [runner.TestResult(s, False, why, not_run="import_error")
               for s in runner.collect(EX03, hidden=False)]
    shown = failures.arrange(_rec(results), {EX03: why})
    assert len(shown) == 1 and shown[0].kind == "not_run"
    assert shown[0].line() == f"{EX03}: could not run ({len(results)} tests): {why}"


def test_caps_count_real_failures_and_say_how_to_see_the_rest(capsys):
    results = [r for r in _results({"softmax"}) if r.spec.visibility == "public"]
    n_softmax = sum(r.spec.exercise == "softmax" for r in results)
    assert n_softmax > 2
    watch._failures(results, limit=2)
    out = capsys.readouterr().out
    assert out.count("✗ ex03_softmax.softmax:") == 2
    assert f"… and {n_softmax - 2} more failures: see them with `course check {EX03}`" in out
    # Every exercise not written yet is still listed, after the failures, one line each.
    assert out.count("not written yet") == len(catalogue.get_topic(EX03).exercises) - 1
    assert out.index("✗ ex03_softmax.softmax:") < out.index("not written yet")
    assert "raised NotImplementedError" not in out


# ---------------------------------------------------------------- hints of a test

def test_a_test_may_carry_its_own_hint():
    axis_tests = [s for s in runner.collect(EX03) if "axis=0" in s.description]
    assert axis_tests and all(s.hint and "axis" in s.hint for s in axis_tests)
    first = catalogue.get_exercise(f"{EX03}.softmax").hints[0]
    assert all(s.hint != first for s in axis_tests)
    masked = [s for s in runner.collect("ex08_flash_attention")
              if s.exercise == "softmax_rows" and "-inf" in s.description]
    assert len(masked) == 3 and all("NaN" in s.hint for s in masked)
    with pytest.raises(ValueError, match="hint"):
        graded("softmax", "x", hint="   ")


def test_check_and_feedback_show_the_tests_own_hint(capsys):
    results = [r for r in _results({"softmax"}) if r.spec.visibility == "public"]
    axis = next(r for r in results if "axis=0" in r.spec.description)
    other = next(r for r in results if r.spec.exercise == "softmax" and not r.spec.hint)
    console.print_failures([axis, other], None)
    out = " ".join(capsys.readouterr().out.split())
    assert " ".join(axis.spec.hint.split()) in out
    assert catalogue.get_exercise(f"{EX03}.softmax").hints[0].split(":")[0] in out

    # feedback.md shows the hint of each mistake's first failed test: here softmax passed all
    # but its hidden "other axes" test, whose own hint is shown with it
    hidden_axis = next(s for s in runner.collect(EX03)
                       if s.visibility == "hidden" and "other axes" in s.description)
    g = _graded([r if r.spec.name == hidden_axis.name or r.spec.exercise != "softmax"
                 else runner.TestResult(r.spec, True) for r in _results({"softmax"})])
    md = writers.feedback_md(g)
    block = md[md.index(hidden_axis.name):]
    assert block.split("\n")[2].strip() == f"Hint: {hidden_axis.hint}"


@pytest.mark.parametrize(("message", "expected"), [
    ("softmax_jacobian of a generated float32 vector: expected (7, 7) float32, got (7, 7) "
     "float64", failures.DTYPE_HINT),
    ("softmax of generated logits: expected tensor (2, 3) float16 on cpu, got tensor (2, 3) "
     "float32 on cpu", failures.DTYPE_HINT),
    ("expected ValueError for temperature = 0, but it returned ndarray of dtype float64",
     failures.RAISE_HINT.format(exc="ValueError")),
    ("expected ValueError for axis 3, but: IndexError", failures.RAISE_HINT.format(exc="ValueError")),
    # not of those kinds: the exercise's first hint, as before
    ("softmax: expected (7, 7) float32, got another shape float32", None),
    ("expected tensor (2, 3) float32 on cpu, got tensor (2, 3) float32 on meta", None),
    ("wrong value: largest error 0.5 at [0, 1]", None),
])
def test_a_failure_of_a_known_kind_gets_that_kinds_hint(message, expected):
    """A new user's walk-through: a float64 softmax_jacobian was told how to split the
    Jacobian into a diagonal and an outer product. Without a hint of its own, a wrong dtype and
    an error not raised get a hint about dtype rules and Raises sections; other failures keep
    the exercise's first hint; a test's own hint still wins."""
    spec = next(s for s in runner.collect(EX03)
                if s.exercise == "softmax_jacobian" and not s.hint)
    got = failures.hint(loop.record(runner.TestResult(spec, False, message)))
    assert got == (expected or catalogue.get_exercise(f"{EX03}.softmax_jacobian").hints[0])
    own = next(s for s in runner.collect(EX03) if s.hint)
    assert failures.hint(loop.record(runner.TestResult(own, False, message))) == own.hint


# ---------------------------------------------------------------- feedback.md

def test_feedback_lists_written_failures_first_and_stubs_once():
    g = _graded(_results({"softmax"}))
    md = writers.feedback_md(g)
    section = md[md.index(f"## {EX03}"):md.index("## ex04")]
    first_failure = section.index(f"**{EX03}.softmax:")
    assert first_failure < section.index("not written yet")
    n_lse = sum(s.exercise == "logsumexp" for s in runner.collect(EX03))
    assert f"- {EX03}.logsumexp: not written yet ({n_lse} tests)" in section
    assert "raised NotImplementedError" not in section
    assert section.count("not written yet") == len(catalogue.get_topic(EX03).exercises) - 1


def test_feedback_folds_each_exercises_failures_under_its_first():
    """One wrong function fails every case that calls it: feedback.md showed 20 blocks for one
    bug. Each exercise's first failed test is shown in full, the rest on one line."""
    many = {e.name for e in catalogue.get_topic(EX03).exercises}
    g = _graded(_results(many))
    section = writers.feedback_md(g).split(f"## {EX03}")[1].split("## ex04")[0]
    specs = runner.collect(EX03)
    assert section.count("- **") == len(many)  # one block per exercise
    assert section.count("  Why: ") == len(many)
    for e in catalogue.get_topic(EX03).exercises:
        n = sum(s.exercise == e.name for s in specs)
        first = next(s for s in specs if s.exercise == e.name)
        assert f"- **{first.name}** (public)" in section
        if n > 1:
            assert f"Also failed, probably from the same mistake ({n - 1}): " in section


def test_feedback_caps_count_mistakes(monkeypatch):
    monkeypatch.setattr(writers, "FEEDBACK_FAILURES", 2)
    many = {e.name for e in catalogue.get_topic(EX03).exercises}
    g = _graded(_results(many))
    section = writers.feedback_md(g).split(f"## {EX03}")[1].split("## ex04")[0]
    specs = runner.collect(EX03)
    shown = [e.name for e in catalogue.get_topic(EX03).exercises][:2]
    rest = sum(s.exercise not in shown for s in specs)
    assert section.count("- **") == 2
    assert (f"- … and {rest} more failed tests "
            f"(`course check {EX03}` lists the public ones)") in section


# ---------------------------------------------------------------- what the code printed

def test_print_output_shows_the_tail_and_says_it_was_cut(capsys):
    console.print_output("")
    console.print_output("  \n")
    assert capsys.readouterr().out == ""
    text = "".join(f"line {i}\n" for i in range(100)) + "\x1b[2Jend"
    console.print_output(text)
    out = capsys.readouterr().out
    assert "Your code printed" in out and "cut to the last 30 lines" in out
    assert "line 71" in out and "line 70\n" not in out and "\x1b" not in out
    assert "\\x1b[2Jend" in out


def test_check_shows_the_printed_marker_and_the_wrong_exercise_first(tmp_path):
    folder = write_stubs(tmp_path / "exercises")
    (folder / f"{EX03}.py").write_text(_topic3_file(), "utf-8")
    proc = course("check", "3", "--dir", str(folder), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Your code printed" in out and MARKER in out
    assert out.index("✗ ex03_softmax.softmax:") < out.index("not written yet")
    n_lse = sum(s.exercise == "logsumexp" for s in runner.collect(EX03, hidden=False))
    assert f"{EX03}.logsumexp: not written yet ({n_lse} test" in out
    assert "raised NotImplementedError" not in out  # no block per stub test


def test_the_hidden_phase_output_is_never_shown(slot, capsys):
    """Both phases graded: what the code printed in the hidden phase (shapes of the hidden
    inputs) is in hidden_output only, and `course check`'s report prints ``output`` alone."""
    specs = {EX03: [s for s in runner.collect(EX03) if s.exercise == "softmax"]}
    outcome = loop.grade(slot, {EX03: _topic3_file().encode()}, specs)
    hidden_lines = set(outcome.hidden_output.splitlines()) - set(outcome.output.splitlines())
    hidden_marks = [line for line in hidden_lines if MARKER in line]
    assert hidden_marks, "the hidden phase should have printed shapes of its own"
    public = [r for r in outcome.flat() if r.spec.visibility == "public"]
    console.check_report(public, [catalogue.get_topic(EX03)], outcome.notes, outcome.output)
    out = capsys.readouterr().out
    assert MARKER in out
    assert not [line for line in hidden_marks if line in out.splitlines()]


def test_feedback_of_a_graded_stub_folds_its_error_tests_too(slot):
    """New-user review: in a real grading, a stub's error-rule tests fail with "expected
    ValueError for …, but: … raised NotImplementedError (message hidden …)", and feedback.md
    listed each of them (25 entries for one_hot and embedding_lookup) while the function the
    student had written wrongly fell past the cap. Each unwritten exercise is one line."""
    wrong_pairwise = "def pairwise_dot(A, B):\n    return np.asarray(A).T @ np.asarray(B)\n"
    stub = stub_source(EX01)
    source = stub.replace(reset.segment(stub, "pairwise_dot"), wrong_pairwise)
    outcome = loop.grade(slot, {EX01: source.encode()}, {EX01: runner.collect(EX01)})
    g = Result.of("s", "0", outcome.tests())
    section = writers.feedback_md(g).split(f"## {EX01}")[1].split("## ex02")[0]
    for name in ("one_hot", "embedding_lookup", "dot", "normalize_rows"):
        assert f"- {EX01}.{name}: not written yet (" in section, name
    assert "raised NotImplementedError" not in section
    assert f"**{EX01}.pairwise_dot:" in section
