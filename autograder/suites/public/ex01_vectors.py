"""Public tests of topic 1 (vectors, embeddings, the dot product), on the lesson's numbers.

These are the checks `course check 1` runs. The graded suite holds many more (random shapes,
dtypes, edge cases) that are not shown; passing these is a start, not a guarantee.
"""

from __future__ import annotations

import numpy as np

from autograder.authoring.checks import both, expect_array, expect_float, expect_raises
from autograder.authoring.docexamples import add_docstring_tests
from autograder.authoring.suite import graded

TOPIC = "ex01_vectors"
CAT = np.array([0.8, 0.3])
DOG = np.array([0.6, 0.7])
W_E = np.array([[0.8, 0.3],    # id 0: "cat"
                [0.6, 0.7]])   # id 1: "dog"


@graded("one_hot", "ids [2, 0] with vocab_size 3 give two one-hot rows")
def test_one_hot_small(sub, ref):
    ids = np.array([2, 0])
    expect_array(sub.one_hot(ids, 3), np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))


@graded("one_hot", "a negative id raises ValueError (no wrap-around)")
def test_one_hot_negative(sub, ref):
    expect_raises("ValueError", sub.one_hot, np.array([-1]), 3, what="ids [-1]")


@graded("embedding_lookup", "ids [1, 0, 1] pick the rows dog, cat, dog of W_E")
def test_embedding_lookup_cat_dog(sub, ref):
    ids = np.array([1, 0, 1])
    expect_array(sub.embedding_lookup(ids, W_E), np.stack([DOG, CAT, DOG]))


@graded("dot", "cat·dog is 0.69")
def test_dot_cat_dog(sub, ref):
    expect_float(sub.dot(CAT, DOG), 0.69)


@graded("dot", "cat·cat is 0.73 and dog·dog is 0.85")
def test_dot_self(sub, ref):
    expect_float(sub.dot(CAT, CAT), 0.73, what="cat·cat")
    expect_float(sub.dot(DOG, DOG), 0.85, what="dog·dog")


@graded("cosine_similarity", "cat and dog have cosine similarity 0.876")
def test_cosine_cat_dog(sub, ref):
    expect_float(*both(sub, ref, "cosine_similarity", CAT, DOG))


@graded("cosine_similarity", "a zero vector gives 0.0, not NaN", trivial=True)
def test_cosine_zero(sub, ref):
    expect_float(sub.cosine_similarity(CAT, np.zeros(2)), 0.0)


@graded("angle_between", "cat and dog are 28.8 degrees apart")
def test_angle_cat_dog(sub, ref):
    expect_float(*both(sub, ref, "angle_between", CAT, DOG))


@graded("angle_between", "u vs 3u is 0, an orthogonal pair 90 and u vs -2u 180 degrees (±1e-5°)")
def test_angle_landmarks(sub, ref):
    # Eighths: every product and sum of u·3u and u·(-2u) is exact whatever the BLAS kernel's
    # order, so the cosine's rounding (to 1 + 2⁻⁵² and -1 - 2⁻⁵² here: arccos gives NaN unless
    # clipped) is the same on every processor. [0.8, 0.3, -0.5] rounded past ±1 under some
    # kernels only (docs/design/measured-facts.md, "The same grades on every BLAS kernel").
    u = np.array([0.25, 0.375, -0.5])
    expect_float(sub.angle_between(u, 3 * u), 0.0, atol=1e-5, what="u vs 3u")
    expect_float(sub.angle_between(np.array([1.0, 0.0]), np.array([0.0, 2.0])), 90.0,
                 atol=1e-5, what="[1, 0] vs [0, 2]")
    expect_float(sub.angle_between(u, -2 * u), 180.0, atol=1e-5, what="u vs -2u")


@graded("pairwise_dot", "the 2×2 score grid of cat and dog")
def test_pairwise_cat_dog(sub, ref):
    expect_array(sub.pairwise_dot(W_E, W_E), np.array([[0.73, 0.69], [0.69, 0.85]]))


@graded("pairwise_dot", "2 query rows (2, 3) against 4 key rows (4, 3) give the (2, 4) grid "
        "A Bᵀ, not B Aᵀ")
def test_pairwise_queries_keys(sub, ref):
    Q = np.array([[0.8, 0.3, -0.5],    # two queries, d = 3
                  [0.6, 0.7, 0.2]])
    K = np.array([[1.0, 0.0, 0.5],     # four keys, d = 3
                  [0.2, -0.4, 0.9],
                  [0.0, 1.0, -1.0],
                  [0.5, 0.5, 0.5]])
    expect_array(*both(sub, ref, "pairwise_dot", Q, K), what="pairwise_dot(Q (2, 3), K (4, 3))")


@graded("normalize_rows", "cat and dog become [0.936, 0.351] and [0.651, 0.759]")
def test_normalize_cat_dog(sub, ref):
    expect_array(*both(sub, ref, "normalize_rows", W_E))


@graded("normalize_rows", "a zero row stays zero (no NaN)")
def test_normalize_zero_row(sub, ref):
    X = np.array([[0.8, 0.3], [0.0, 0.0]])
    expect_array(*both(sub, ref, "normalize_rows", X))


add_docstring_tests(globals())
