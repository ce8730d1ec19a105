"""Stubs are generated from solutions, hold no solution code, and fail cleanly."""

from __future__ import annotations

import runpy
import shutil

import pytest

from autograder import catalogue
from autograder.authoring import stubs
from tests.helpers import EXERCISES, ROOT, SOLUTIONS

TOPICS = catalogue.topic_modules()


def test_exercises_folder_matches_the_generator():
    """Edit solutions/ and run `course stubs`; never edit exercises/ by hand."""
    generated = stubs.generate_all(ROOT)
    assert {p.name for p in generated} == {f"{t}.py" for t in TOPICS}
    for path, text in generated.items():
        assert path.exists(), f"{path.name} missing: run `course stubs`"
        assert path.read_text("utf-8") == text, f"{path.name} drifted: run `course stubs`"


@pytest.mark.parametrize("topic", TOPICS)
def test_no_solution_body_leaks_into_the_stub(topic):
    stub = (EXERCISES / f"{topic}.py").read_text("utf-8")
    assert stubs.BEGIN not in stub and stubs.END not in stub
    for body in stubs.solution_bodies((SOLUTIONS / f"{topic}.py").read_text("utf-8")):
        code = [ln.strip() for ln in body.splitlines()
                if ln.strip() and not ln.strip().startswith(("#", "raise ValueError", "return"))]
        leaked = [ln for ln in code if len(ln) > 30 and ln in stub]
        assert not leaked, f"solution lines in the stub: {leaked[:3]}"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_stub_body_names_its_exercise(topic):
    stub = (EXERCISES / f"{topic}.py").read_text("utf-8")
    for ex in catalogue.get_topic(topic).exercises:
        assert f'raise NotImplementedError("{topic}.{ex.name}' in stub
        assert f"# --8<-- [start:{ex.name}]" in stub and f"# --8<-- [end:{ex.name}]" in stub


def test_unbalanced_markers_are_refused():
    topic = catalogue.get_topic("ex01_vectors")
    src = 'def dot(u, v):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return 0\n'
    with pytest.raises(stubs.StubError, match="has no"):
        stubs.make_stub(src, topic)
    with pytest.raises(stubs.StubError, match="without"):
        stubs.make_stub('def dot(u, v):\n    ### END SOLUTION\n    return 0\n', topic)
    with pytest.raises(stubs.StubError, match="not in the catalogue"):
        stubs.make_stub("def helper():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION\n",
                        topic)


def test_a_helper_kernel_is_stubbed_in_the_name_of_its_exercise(tmp_path):
    """The catalogue lists a Triton kernel under the exercise that launches it."""
    topic = catalogue.get_topic("ex08_flash_attention")
    src = ('def _softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK):\n    """One row."""\n'
           '    ### BEGIN SOLUTION\n    row = 0\n    ### END SOLUTION\n\n\n'
           'def softmax_rows(x):\n    """Rows."""\n    ### BEGIN SOLUTION\n    return x\n'
           '    ### END SOLUTION\n')
    out = stubs.make_stub(src, topic)
    assert "row = 0" not in out and "return x" not in out
    assert "def _softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK):" in out
    (tmp_path / "helper_stub.py").write_text(out, encoding="utf-8")
    stub = runpy.run_path(str(tmp_path / "helper_stub.py"))  # the stub is valid Python
    with pytest.raises(NotImplementedError,
                       match="ex08_flash_attention.softmax_rows: _softmax_rows_kernel is not"):
        stub["_softmax_rows_kernel"](None, None, 1, 1)
    with pytest.raises(NotImplementedError, match="ex08_flash_attention.softmax_rows: not"):
        stub["softmax_rows"](None)


def test_stub_keeps_signature_docstring_and_imports():
    topic = catalogue.get_topic("ex01_vectors")
    src = ('import numpy as np\n\n\ndef dot(u: np.ndarray, v: np.ndarray) -> float:\n'
           '    """Dot product. Example: dot([1], [2]) == 2.0"""\n'
           '    ### BEGIN SOLUTION\n    return float(np.dot(u, v))\n    ### END SOLUTION\n')
    out = stubs.make_stub(src, topic)
    assert "import numpy as np" in out
    assert "def dot(u: np.ndarray, v: np.ndarray) -> float:" in out
    assert '"""Dot product. Example: dot([1], [2]) == 2.0"""' in out
    assert "np.dot(u, v)" not in out
    assert "# TODO:" in out
    ns: dict = {}
    exec(compile(out, "stub", "exec"), ns)  # the stub is valid Python
    with pytest.raises(NotImplementedError, match="ex01_vectors.dot"):
        ns["dot"]([1.0], [2.0])


def test_course_stubs_keeps_a_copy_of_work_it_replaces(tmp_path):
    """New-user review: `course release` advised `course stubs`, which overwrote a student's
    filled-in exercise without a copy. Now a file that differs from its stub is backed up
    into exercises/.backup/ first; one already equal to its stub is left alone."""
    (tmp_path / "solutions").mkdir()
    for name in ("ex01_vectors.py", "ex02_projections.py"):
        shutil.copy(ROOT / "solutions" / name, tmp_path / "solutions" / name)
    stubs.write_all(tmp_path)
    work = tmp_path / "exercises" / "ex01_vectors.py"
    mine = work.read_text("utf-8").replace("raise NotImplementedError", "return 42  #", 1)
    work.write_text(mine, "utf-8")
    written, backups = stubs.write_all(tmp_path)
    assert written == [work] and len(backups) == 1
    assert backups[0].parent == tmp_path / "exercises" / ".backup"
    assert backups[0].read_text("utf-8") == mine
    assert work.read_text("utf-8") != mine
    assert stubs.write_all(tmp_path) == ([], [])
