"""The suites' two shape helpers (autograder/authoring/checks.py): ``both``, the submission's and
the reference's answer to one call, and ``expect_rule``, an error rule's raise and message."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.authoring import checks
from autograder.wire import codec


def test_both_calls_the_submission_then_the_reference_with_the_same_arguments():
    calls = []

    class Side:
        def __init__(self, who):
            self.who = who

        def f(self, *args, **kwargs):
            calls.append((self.who, args, kwargs))
            return self.who

    assert checks.both(Side("sub"), Side("ref"), "f", 1, [2], eps=3) == ("sub", "ref")
    assert calls == [("sub", (1, [2]), {"eps": 3}), ("ref", (1, [2]), {"eps": 3})]


def test_an_error_rule_wants_the_error_and_a_message_naming_what_was_wrong():
    """``checks.expect_rule``: the expected class with a message naming each needle passes;
    another message, another class, or no error at all fails saying which."""
    from autograder.driver.errors import StudentException

    def raising(cls: str, message: str):
        def fn(*args, **kwargs):
            raise StudentException(codec.RemoteException([cls, "Exception"], message), "t.f")
        return fn

    exc = checks.expect_rule("ValueError", raising("ValueError", "x (2, 3) and W (4, 5)"),
                             np.ones((2, 3)), what="x", naming=("(2, 3)", ("(4, 5)", "4")))
    assert exc.remote.message == "x (2, 3) and W (4, 5)"
    checks.expect_rule("ValueError", raising("ValueError", "bad k"), 1)  # any message will do
    for fn, says in ((raising("ValueError", "shapes differ"), r"should name \(2, 3\)"),
                     (raising("ValueError", " "), "empty message"),
                     (raising("TypeError", "(2, 3)"), "expected ValueError for x, but"),
                     (lambda *a: 1.0, "expected ValueError for x, but it returned float")):
        with pytest.raises(checks.Failure, match=says):
            checks.expect_rule("ValueError", fn, what="x", naming=("(2, 3)",))
