"""Every docstring example of the exercises is a public graded test, and holds on the reference.

Issue 36, item 2: a ``logsumexp`` reducing over axis 0 failed its own docstring example, yet
`course check` said all public tests passed. The examples now run through the worker as one
public test per exercise (autograder/authoring/docexamples.py); these tests check that each
example of ``solutions/`` is collected and passes there, that a wrong function fails with the
example's line in the message, and how shown outputs are read and compared.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch

from autograder import catalogue
from autograder.authoring import docexamples
from autograder.grading import runner
from tests.helpers import grade_sources, solution_source, stub_source, with_replacement

TOPICS = catalogue.topic_modules()


def _docstring_specs(topic: str) -> dict[str, runner.TestSpec]:
    return {s.exercise: s for s in runner.collect(topic, hidden=False)
            if s.description == docexamples.DESCRIPTION}


@pytest.mark.parametrize("topic", TOPICS)
def test_every_example_of_the_solutions_is_collected(topic):
    """Each exercise whose docstrings hold ``>>>`` lines has exactly one public test running
    them, and that test runs every one of those lines (counted with doctest's own parser)."""
    parser = doctest.DocTestParser()
    source = solution_source(topic)
    counted = sum(len(parser.get_examples(block)) for block in _docstrings(source, topic))
    blocks = docexamples.blocks_of(topic)
    assert counted and counted == sum(len(b.examples) for bs in blocks.values() for b in bs)
    specs = _docstring_specs(topic)
    assert set(specs) == set(blocks), f"{topic}: exercises with examples but no test"
    for spec in specs.values():
        assert spec.visibility == "public" and spec.points > 0


def test_every_ungraded_example_is_one_example_with_a_reason():
    """Each entry of UNGRADED matches exactly one example line and says why."""
    for (label, start), why in docexamples.UNGRADED.items():
        matches = [e for t in TOPICS for bs in docexamples.blocks_of(t).values() for b in bs
                   if b.label == label for e in b.examples if e.source.strip().startswith(start)]
        assert len(matches) == 1 and len(why) > 40, (label, start)


def _docstrings(source: str, topic: str) -> list[str]:
    import ast

    names = {e.name for e in catalogue.get_topic(topic).exercises}
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            out += [ast.get_docstring(n) or "" for n in ast.walk(node)
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return out


@pytest.mark.parametrize("topic", TOPICS)
def test_every_example_passes_on_the_reference(slot, topic):
    results = grade_sources(slot, {topic: solution_source(topic)}, [topic], hidden=False)
    mine = {n: r for n, r in results.items() if r.spec.description == docexamples.DESCRIPTION}
    assert len(mine) == len(_docstring_specs(topic))
    failed = {n: r.message for n, r in mine.items() if not r.passed}
    assert not failed, failed


def test_the_stubs_carry_the_same_examples():
    """The stubs (what a release reads) hold the solutions' examples, line for line."""
    for topic in TOPICS:
        ours = docexamples.blocks_of(topic, solution_source(topic))
        theirs = docexamples.blocks_of(topic, stub_source(topic))
        assert {k: [(b.label, [(e.source, e.want) for e in b.examples]) for b in v]
                for k, v in ours.items()} == {
            k: [(b.label, [(e.source, e.want) for e in b.examples]) for b in v]
            for k, v in theirs.items()}


WRONG_AXIS_LOGSUMEXP = """
import numpy as np
def logsumexp(z, axis=-1, keepdims=False):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=0, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(z - m), axis=0, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=0)
"""


def test_a_wrong_axis_logsumexp_fails_its_example_with_the_line(slot):
    """The issue's case: reducing over axis 0 passed every other public test."""
    topic = "ex03_softmax"
    results = grade_sources(slot, {topic: with_replacement(topic, WRONG_AXIS_LOGSUMEXP)},
                            [topic], hidden=False)
    r = results[f"{topic}.logsumexp: {docexamples.DESCRIPTION}"]
    assert not r.passed
    assert ">>> np.round(logsumexp(np.array([[0.0, 0.0], [-np.inf, -np.inf]])), 4)" in r.message
    assert "expected array([0.6931,   -inf])" in r.message


def test_a_stub_fails_as_not_written_yet_naming_the_example(slot):
    topic = "ex03_softmax"
    results = grade_sources(slot, {topic: stub_source(topic)}, [topic], hidden=False)
    r = results[f"{topic}.softmax: {docexamples.DESCRIPTION}"]
    assert not r.passed
    assert "raised NotImplementedError" in r.message and ">>> " in r.message


# ------------------------------------------------------------------ reading and comparing


@pytest.mark.parametrize(("got", "want"), [
    (0.6900000000000001, "0.69"),                       # a value, not its text
    (np.array([0.09, 0.245, 0.665]), "array([0.09 , 0.245, 0.665])"),
    (np.array([0.6931, -np.inf]), "array([0.6931,   -inf])"),
    (torch.tensor([0.62245933, 0.37754067]), "tensor([0.6225, 0.3775])"),  # torch's 4 decimals
    (torch.tensor([[1, 0]], dtype=torch.int32), "tensor([[1, 0]], dtype=torch.int32)"),
    (torch.Size([2, 12, 10, 64]), "torch.Size([2, 12, 10, 64])"),
    (((3, 3), 2), "((3, 3), 2)"),
    (True, "True"),
    (torch.device("meta"), "device(type='meta')"),
])
def test_shown_outputs_that_match(got, want):
    assert docexamples.mismatch(got, docexamples.read_want(want)) is None


@pytest.mark.parametrize(("got", "want", "why"), [
    (0.7, "0.69", "entries off"),
    (np.array([0.09, 0.245, 0.665], np.float32), "array([0.09 , 0.245, 0.665])", "float32"),
    (np.array([0.0, 1.0]), "array([[0., 1.]])", "(1, 2)"),
    (torch.tensor([0.6227, 0.3775]), "tensor([0.6225, 0.3775])", "entries off"),
    (np.True_, "False", "expected False"),
    (1, "True", "expected True"),                      # an int is no bool
    (2.0, "2", "expected 2"),                          # a float is no int
    ([1, 2], "(1, 2, 3)", "length 3"),
])
def test_shown_outputs_that_do_not_match(got, want, why):
    problem = docexamples.mismatch(got, docexamples.read_want(want))
    assert problem is not None and why in problem
