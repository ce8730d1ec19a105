"""The catalogue is the one source of truth, and the suites agree with it."""

from __future__ import annotations

import ast

import pytest

from autograder import catalogue
from autograder.grading import runner
from tests.helpers import EXERCISES, ROOT, SOLUTIONS

TOPICS = catalogue.topic_modules()


def test_points_follow_interface_md():
    points = {t.module: t.points for t in catalogue.topics()}
    assert sum(points.values()) == 100
    assert [points[m] for m in TOPICS] == [12, 12, 12, 13, 13, 12, 12, 14]
    for t in catalogue.topics():
        assert sum(e.points for e in t.exercises) == t.points
        assert all(isinstance(e.points, int) and e.points > 0 for e in t.exercises)


def test_topic_aliases_resolve():
    assert catalogue.get_topic("ex03_softmax").module == "ex03_softmax"
    for alias in ("ex03", "3", "03", "softmax"):
        assert catalogue.get_topic(alias).module == "ex03_softmax"
    assert catalogue.get_topic("svd-lora").module == "ex04_svd_lora"
    with pytest.raises(KeyError, match="unknown topic"):
        catalogue.get_topic("eigen")


def test_helpers_resolve_to_their_exercise():
    """A Triton kernel is written with the exercise that launches it (authoring/stubs.py)."""
    top = catalogue.get_topic("ex08_flash_attention")
    assert top.owner("_flash_forward_kernel").name == "flash_attention_forward"
    assert top.owner("_softmax_rows_kernel").name == "softmax_rows"
    assert top.owner("softmax_rows").name == "softmax_rows"
    with pytest.raises(KeyError, match="no exercise"):
        top.owner("_backward_kernel")
    helpers = [h for e in catalogue.all_exercises() for h in e.helpers]
    assert len(helpers) == len(set(helpers)), "a helper belongs to one exercise"


def test_every_exercise_has_two_hint_tiers_and_a_lesson_anchor():
    for ex in catalogue.all_exercises():
        assert len(ex.hints) >= 2, ex.qualname
        assert ex.anchor.startswith("#"), ex.qualname


@pytest.mark.parametrize("topic", TOPICS)
def test_solution_and_stub_define_exactly_the_catalogue(topic):
    names = {e.name for e in catalogue.get_topic(topic).exercises}
    for folder in (SOLUTIONS, EXERCISES):
        tree = ast.parse((folder / f"{topic}.py").read_text("utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assert names <= defined, f"{folder.name}/{topic}.py lacks {sorted(names - defined)}"


@pytest.mark.parametrize("topic", TOPICS)
def test_suites_name_points_and_share_them(topic):
    specs = runner.collect(topic)
    assert specs, f"{topic} has no graded tests"
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), "test names must be unique"
    top = catalogue.get_topic(topic)
    for s in specs:
        prefix, _, rest = s.name.partition(": ")
        assert prefix == f"{topic}.{s.exercise}" and rest
    for ex in top.exercises:
        mine = [s for s in specs if s.exercise == ex.name and not s.gpu]
        assert len(mine) >= 3, f"{ex.qualname} has only {len(mine)} tests"
        assert any(s.visibility == "public" for s in mine), f"{ex.qualname}: no public test"
        assert any(s.visibility == "hidden" for s in mine), f"{ex.qualname}: no hidden test"
        assert sum(s.points for s in mine) == pytest.approx(ex.points)
    assert sum(s.points for s in specs) == pytest.approx(top.points)


@pytest.mark.parametrize("topic", TOPICS)
def test_advisory_checks_stay_under_ten_percent(topic):
    """docs/design/threat-model.md: forgeable checks are worth at most 10 % of a topic."""
    specs = runner.collect(topic)
    advisory = sum(s.points for s in specs if s.advisory)
    assert advisory <= 0.1 * catalogue.get_topic(topic).points + 1e-9


def test_gpu_tests_carry_no_points():
    for topic in TOPICS:
        assert all(s.points == 0 for s in runner.collect(topic) if s.gpu)


def test_course_root_can_be_overridden(tmp_path):
    """COURSE_ROOT points the tool at a course kept apart from the package (autograder.paths)."""
    import subprocess
    import sys

    code = "from autograder import paths; print(paths.ROOT); print(paths.SOLUTIONS)"
    env = {"PYTHONPATH": str(ROOT), "COURSE_ROOT": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(tmp_path.resolve()), str(tmp_path.resolve() / "solutions")]
    env.pop("COURSE_ROOT")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == str(ROOT)


def _content_words(text: str) -> set[str]:
    """Words of three or more letters (formulas and variable names aside), case folded."""
    import re

    return set(re.findall(r"[^\W\d_]{3,}", text.casefold()))


def test_first_hints_say_more_than_the_stub():
    """`course hint X` and a failure's hint must tell the student something the stub does not
    (issue 15): the first hint brings words that the exercise's stub (signature, docstring,
    other TODO lines: everything but the hint's own TODO line) does not already hold. A hint
    that only restates the docstring ("Counter-clockwise rotation of a column vector by θ.")
    fails."""
    from autograder.authoring import stubs
    from autograder.student import reset

    weak = []
    for t in catalogue.topics():
        stub = stubs.make_stub((SOLUTIONS / t.filename).read_text("utf-8"), t)
        for ex in t.exercises:
            own = "\n".join(reset.segment(stub, n) or "" for n in (ex.name, *ex.helpers))
            assert f"# TODO: {ex.hints[0]}" in own, ex.qualname
            rest = "\n".join(line for line in own.splitlines()
                             if line.strip() != f"# TODO: {ex.hints[0]}")
            if not _content_words(ex.hints[0]) - _content_words(rest):
                weak.append(f"{ex.qualname}: {ex.hints[0]}")
    assert not weak, "first hints that only restate the stub:\n" + "\n".join(weak)
