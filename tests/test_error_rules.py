"""An exercise's error rules, and its tests that a constant or empty answer passes, count once
it computes something right.

Red team, second round: a file whose every function raised ``ValueError`` with a message
naming common shapes scored 10.79 / 100, status ``ok``, from the tests of error rules alone.
A test that passed with every call of the submission raising (``TestResult.raised_only``) now
keeps its points only beside a passed test of the same exercise that got a value back
(:func:`autograder.grading.runner.gate_error_rules`), call by call and with a batch plan alike.
"""

from __future__ import annotations

import pytest

from autograder.grading import runner
from tests.helpers import grade_sources, with_replacement

EX01 = "ex01_vectors"
#: one_hot that validates as the exercise asks and raises for everything else too
RAISING_ONE_HOT = '''
def one_hot(ids, vocab_size):
    raise ValueError(f"bad ids: shapes (2, 3) (3,) (4, 3) [] -1 3 {np.shape(ids)} {vocab_size}")
'''
#: one_hot with the exercise's checks, right for 1-D ids only (a batch of ids gives a wrong
#: shape): some value tests pass, so its error rules count
ONE_D_ONLY = '''
_one_hot = one_hot

def one_hot(ids, vocab_size):
    out = _one_hot(ids, vocab_size)
    return out.reshape(-1, vocab_size) if np.ndim(ids) > 1 else out
'''


#: one_hot that answers the degenerate case (no ids) and raises, naming shapes, for the rest:
#: the red team's third-round key to the error rules
EMPTY_ONLY_ONE_HOT = '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.size == 0 and ids.dtype.kind in "iu":
        return np.zeros(ids.shape + (vocab_size,))
    raise ValueError(f"bad ids: shapes (2, 3) (3,) (4, 3) [] -1 3 {ids.shape} {vocab_size}")
'''
#: is_positive_definite that checks the shape and answers False: passes every one-sided test
ALWAYS_FALSE_PD = '''
def is_positive_definite(A):
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {A.shape}")
    return False
'''


#: one_hot right on the public example only (the release ships its ids and answer), zeros of
#: the right shape elsewhere, after the exercise's own checks: the sixth red team's lookup
PUBLIC_ONLY_ONE_HOT = '''
_checked_one_hot = one_hot

def one_hot(ids, vocab_size):
    out = _checked_one_hot(ids, vocab_size)  # raises where the exercise says it must
    if np.array_equal(np.asarray(ids), [2, 0]) and vocab_size == 3:
        return out
    return np.zeros_like(out)
'''


def _spec(exercise: str, n: int, trivial: bool = False,
          visibility: str = "hidden") -> runner.TestSpec:
    return runner.TestSpec(name=f"{EX01}.{exercise}: test {n}", topic=EX01, exercise=exercise,
                           description=f"test {n}",
                           visibility=visibility, points=1.0, advisory=False, gpu=False,
                           fn=lambda sub, ref: None, trivial=trivial)


def test_a_trivial_pass_counts_and_opens_nothing_alone():
    # a constant or empty answer passed 1 and 2; 3 was an error rule
    alone = [runner.TestResult(_spec("one_hot", 1, trivial=True), True),
             runner.TestResult(_spec("one_hot", 2, trivial=True), True),
             runner.TestResult(_spec("one_hot", 3), True, raised_only=True)]
    gated = runner.gate_error_rules(alone)
    assert [r.passed for r in gated] == [False, False, False]
    assert gated[0].message.startswith("passed, but a constant or empty answer passes this")
    assert gated[2].message.startswith("passed by raising alone")
    # beside a pass that computed something, all three count
    works = runner.TestResult(_spec("one_hot", 4), True)
    assert all(r.passed for r in runner.gate_error_rules([*alone, works]))


def test_a_pass_on_raising_alone_counts_only_beside_a_pass_on_a_value():
    raising = [runner.TestResult(_spec("one_hot", 1), True, raised_only=True),
               runner.TestResult(_spec("one_hot", 2), False, "wrong")]
    working = [runner.TestResult(_spec("dot", 1), True, raised_only=True),
               runner.TestResult(_spec("dot", 2), True)]
    gated = runner.gate_error_rules(raising + working)
    assert [r.passed for r in gated] == [False, False, True, True]
    assert gated[0].message.startswith("passed by raising alone: one_hot's error rules count")
    assert gated[1].message == "wrong" and gated[2] is working[0]
    # a skipped test (no CUDA) is no value
    skipped = runner.TestResult(_spec("one_hot", 3), False, "no CUDA", skipped=True)
    assert not runner.gate_error_rules([raising[0], skipped])[0].passed


def test_a_public_pass_opens_public_gates_only():
    """The public examples' inputs and answers ship with the release: passing them opens the
    public error rules (``course check`` grades those alone), not the hidden ones."""
    public = runner.TestResult(_spec("one_hot", 1, visibility="public"), True)
    gated = [runner.TestResult(_spec("one_hot", 2, visibility="public"), True, raised_only=True),
             runner.TestResult(_spec("one_hot", 3), True, raised_only=True),
             runner.TestResult(_spec("one_hot", 4, trivial=True), True)]
    got = runner.gate_error_rules([public, *gated])
    assert [r.passed for r in got] == [True, True, False, False]
    assert "no hidden test of one_hot that gets a result back passed" in got[2].message
    assert "no other hidden test of one_hot" in got[3].message
    # a hidden pass opens them all
    hidden = runner.TestResult(_spec("one_hot", 5), True)
    assert all(r.passed for r in runner.gate_error_rules([public, *gated, hidden]))


@pytest.mark.parametrize("planned", [False, True], ids=["call by call", "with the plan"])
def test_answers_looked_up_from_the_public_examples_open_no_hidden_gate(slot, plans, planned):
    """Red team, sixth round: right on the public examples, zeros elsewhere, the reference's
    own checks raising where they should. Every hidden error rule had counted."""
    results = grade_sources(slot, {EX01: with_replacement(EX01, PUBLIC_ONLY_ONE_HOT)}, [EX01],
                            hidden=True, plans=plans if planned else None)
    mine = {n: r for n, r in results.items() if n.startswith(f"{EX01}.one_hot:")}
    # the public example and the public error rule it opens keep their points; no hidden test
    assert {r.spec.visibility for r in mine.values() if r.passed} == {"public"}
    voided = [r for r in mine.values() if "no hidden test of one_hot" in r.message]
    assert len(voided) >= 4  # the hidden error rules it met, now failures saying why


@pytest.mark.parametrize("planned", [False, True], ids=["call by call", "with the plan"])
def test_a_function_that_always_raises_earns_nothing(slot, plans, planned):
    results = grade_sources(slot, {EX01: with_replacement(EX01, RAISING_ONE_HOT)}, [EX01],
                            plans=plans if planned else None)
    mine = {n: r for n, r in results.items() if n.startswith(f"{EX01}.one_hot:")}
    assert mine and not any(r.passed for r in mine.values())
    voided = [r for r in mine.values() if r.message.startswith("passed by raising alone")]
    assert len(voided) >= 2  # the error rules it met, now failures saying why
    others = [r for n, r in results.items() if n not in mine]
    assert all(r.passed for r in others), [r.spec.name for r in others if not r.passed]


def test_error_rules_count_for_a_function_that_works_somewhere(slot):
    results = grade_sources(slot, {EX01: with_replacement(EX01, ONE_D_ONLY)}, [EX01])
    mine = [r for n, r in results.items() if n.startswith(f"{EX01}.one_hot:")]
    assert any(not r.passed for r in mine)  # batched ids: wrong
    assert any(r.passed and r.raised_only for r in mine)  # its error rules: kept
    assert not any(r.message.startswith("passed by raising alone") for r in mine)


@pytest.mark.parametrize(("topic", "exercise", "code"), [
    (EX01, "one_hot", EMPTY_ONLY_ONE_HOT),
    ("ex07_matrix_properties", "is_positive_definite", ALWAYS_FALSE_PD)],
    ids=["degenerate case as the key", "a constant answer"])
def test_no_computation_earns_nothing(slot, topic, exercise, code):
    """Red team, third round: 7.27 / 100 from degenerate cases plus error rules, 3.56 from
    constant answers; with the tests such answers pass marked trivial, each scores 0."""
    results = grade_sources(slot, {topic: with_replacement(topic, code)}, [topic])
    mine = [r for n, r in results.items() if n.startswith(f"{topic}.{exercise}:")]
    assert mine and not any(r.passed for r in mine), [r.spec.name for r in mine if r.passed]
    assert any(r.message.startswith("passed, but a constant or empty answer") for r in mine)
