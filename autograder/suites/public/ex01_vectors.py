"""Public tests of topic 1 (vectors, embeddings, the dot product), on the lesson's numbers."""

from __future__ import annotations

import numpy as np

from autograder.checks import expect_array, expect_float, expect_raises
from autograder.suite import graded

TOPIC = "ex01_vectors"
CAT = np.array([0.8, 0.3])
DOG = np.array([0.6, 0.7])


@graded("one_hot", "ids [2, 0] with vocab_size 3 give two one-hot rows")
def test_one_hot_small(sub, ref):
    ids = np.array([2, 0])
    expect_array(sub.one_hot(ids, 3), ref.one_hot(ids, 3))


@graded("dot", "cat·dog is 0.69")
def test_dot_cat_dog(sub, ref):
    expect_float(sub.dot(CAT, DOG), 0.69)


@graded("angle_between", "cat and dog are 28.8 degrees apart")
def test_angle_cat_dog(sub, ref):
    expect_float(sub.angle_between(CAT, DOG), ref.angle_between(CAT, DOG), rtol=1e-9)


@graded("one_hot", "a negative id raises ValueError (no wrap-around)")
def test_one_hot_negative(sub, ref):
    expect_raises("ValueError", sub.one_hot, np.array([-1]), 3, what="ids [-1]")
