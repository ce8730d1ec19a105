"""A hidden test's message holds no number the returned value chose.

A submission can shape what it returns from a hidden test's inputs: an empty array of shape
(0, 7301), a list of 7301 items, an error of exactly 7301, the first wrong entry at index 7301.
Any of these, quoted in a hidden test's feedback, spells the input. In a hidden test the checks
therefore say only what kind of mistake it was, from closed sets (dtype, device, type), beside
the grader's own words (what was checked, on an input of which shape); a suite's own message,
which may quote a value, is replaced by a fixed line (autograder.grading.runner).
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from autograder.authoring import checks
from autograder.wire import codec
from autograder.grading import runner
from autograder.authoring.suite import describe
from autograder.driver.errors import HIDDEN

SECRET = 7301


@pytest.fixture
def hidden():
    token = HIDDEN.set(True)
    yield
    HIDDEN.reset(token)


def _message(fn) -> str:
    try:
        fn()
    except AssertionError as exc:
        return runner._message(exc)
    raise AssertionError("the check passed")


def _cases():
    ref = np.zeros((3, 4))
    wrong = ref.copy()
    wrong[1, 2] = SECRET
    many = np.full((3, 4), float(SECRET))
    tensor = codec.TensorData(values=np.zeros((0, SECRET), np.float32), dtype="float32",
                              device="cpu", shape=(0, SECRET), requires_grad=False)
    return {
        "returned shape": lambda: checks.expect_array(np.zeros((0, SECRET)), ref),
        "error size and index": lambda: checks.expect_array(wrong, ref),
        "count of bad entries": lambda: checks.expect_array(many[:, :2], ref[:, :2]),
        "boolean entries": lambda: checks.expect_array(np.eye(SECRET % 90, dtype=bool)[:3, :4],
                                                       np.zeros((3, 4), bool)),
        "float error": lambda: checks.expect_float(float(SECRET), 0.0),
        "list length": lambda: checks.expect_array([0] * SECRET, ref),
        "tensor shape": lambda: checks.expect_tensor(tensor, np.zeros((3, 4)), dtype="float32"),
        "suite's own message": lambda: checks.fail(f"got {SECRET} rows"),
        "plain assert in a suite": lambda: exec(f"assert False, 'got {SECRET}'"),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_hidden_messages_hold_no_chosen_number(hidden, case):
    text = _message(_cases()[case])
    assert str(SECRET) not in text, text
    assert text.strip()


@pytest.mark.parametrize("case", ["returned shape", "error size and index", "float error",
                                  "list length", "suite's own message"])
def test_public_messages_keep_the_detail(case):
    """The same checks in a public test say the numbers: the hidden rule is what removes them
    (and the test above could not pass for another reason)."""
    assert str(SECRET) in _message(_cases()[case])


def test_hidden_messages_still_say_what_kind_of_mistake(hidden):
    assert "another shape" in _message(_cases()["returned shape"])
    assert "beyond the tolerance" in _message(_cases()["error size and index"])
    nan = np.zeros((2, 2))
    nan[0, 0] = np.nan
    assert "NaN" in _message(lambda: checks.expect_array(nan, np.zeros((2, 2))))
    assert _message(_cases()["suite's own message"]) == runner.HIDDEN_FAILURE


def test_describe_drops_shapes_and_lengths_in_hidden_tests(hidden):
    assert describe(np.zeros((0, SECRET))) == "ndarray of dtype float64"
    assert describe([1] * SECRET) == "list"


@pytest.mark.parametrize(("message", "needle"), [
    ("q (2, 3, 4) and k (2, 5, 6) differ", "(2, 3, 4)"),
    ("q torch.Size([2, 3, 4]) and k torch.Size([2, 5, 6])", "(2, 3, 4)"),
    ("got a 2x3x4 array", "(2, 3, 4)"),
    ("shape [5]", "(5,)"),
    ("x of shape torch.Size([])", "()"),
    ("rotary_dim = 7.0 is odd", "7"),
])
def test_a_shape_may_be_spelled_any_way_that_lists_its_sizes(message, needle):
    # docs/design/exercise-api.md asks a message to name the offending shapes, not a format: torch's own
    # torch.Size([2, 3, 4]) names (2, 3, 4) as well as str(tuple) does.
    assert checks.names(message, needle)


@pytest.mark.parametrize(("message", "needle"), [
    ("q (2, 3) is too short", "(2, 3, 4)"),  # a prefix of the sizes is not the shape
    ("shape (12, 3)", "(2, 3)"),  # 12 is not 2
    ("x is 0-dimensional", "()"),
    ("sizes differ", "(5,)"),
])
def test_a_message_without_the_sizes_in_order_does_not_name_the_shape(message, needle):
    assert not checks.names(message, needle)


def test_a_rule_stated_as_a_value_may_be_named_by_the_value_or_by_the_shape():
    # docs/design/exercise-api.md: "the offending shapes or values"; softmax_rows states N > 2¹⁶ as a value
    def raised(message: str):
        return types.SimpleNamespace(remote=types.SimpleNamespace(message=message))

    for message in ("N must lie in [1, 65536], got 65537", "x (1, 65537): row too long"):
        checks.expect_message_names(raised(message), ("(1, 65537)", "65537"))
    with pytest.raises(checks.Failure, match=r"name \(1, 65537\) or 65537"):
        checks.expect_message_names(raised("row too long"), ("(1, 65537)", "65537"))
    with pytest.raises(checks.Failure, match=r"name \(2, 3\); it says"):
        checks.expect_message_names(raised("N = 3 is fine, but"), "(2, 3)", ("(4,)", "3"))
