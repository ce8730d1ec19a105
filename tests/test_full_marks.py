"""The reference gets every point, the stubs none, and each topic needs only itself."""

from __future__ import annotations

import pytest

from autograder import catalogue
from autograder.grading import loop
from autograder.results import failures
from tests.helpers import grade_sources, solution_source, stub_source

TOPICS = catalogue.topic_modules()


@pytest.mark.parametrize("topic", TOPICS)
def test_solution_alone_gets_full_marks_for_its_topic(slot, topic):
    """Only this topic's file is present: no topic may depend on another being solved."""
    results = grade_sources(slot, {topic: solution_source(topic)}, [topic])
    failed = {n: r.message for n, r in results.items() if not r.passed and not r.spec.gpu}
    assert not failed
    total = sum(r.score for r in results.values())
    assert total == pytest.approx(catalogue.get_topic(topic).points)


@pytest.mark.parametrize("topic", TOPICS)
def test_stub_gets_zero_with_plain_failures(slot, topic):
    stub = stub_source(topic)
    results = grade_sources(slot, {topic: stub}, [topic])
    assert results
    passed = [n for n, r in results.items() if r.passed]
    assert not passed, f"stubs pass: {passed}"
    for r in results.values():
        # A grader error would read "could not check the result"; a stub's failure names
        # the NotImplementedError (or, for error-rule tests, that no ValueError came).
        assert "could not check the result" not in r.message, r.message
        assert "NotImplementedError" in r.message or r.spec.gpu, r.message
    # and feedback shows each exercise as one "not written yet" line, its tests folded, the
    # ones that measure it through a probe (count_ops, peak_memory …) too (new-user review)
    shown = failures.arrange(loop.record(r) for r in results.values() if not r.spec.gpu)
    assert {(s.kind, s.exercise) for s in shown} == {
        ("unwritten", e.name) for e in catalogue.get_topic(topic).exercises}
