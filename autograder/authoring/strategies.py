"""What the suites share: Hypothesis strategies and the helpers that build inputs and read results.

One home for them (as MiniTorch's ``tests/strategies.py`` is), so every suite draws seeds the same
way and builds tensors the same way. Everything here runs in the trusted process: inputs are built
as plain data (:func:`tensor` specs) that the worker turns into tensors, and results are checked
as plain data before any test computes with them (:func:`float64_array`).

A trap when adopting these in an existing suite: a derandomised Hypothesis test draws examples
seeded from its own source text, so renaming a helper inside a ``@given`` test changes the
inputs it is graded on. Import under the suite's old names instead (``seeded as _rng``) and
leave the test bodies as they were; ``python -m tests.golden banks`` catches a slip.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from autograder.authoring.checks import fail
from autograder.authoring.suite import describe
from autograder.wire import codec

#: A seed for :func:`seeded`: any 32-bit value.
seeds = st.integers(0, 2**32 - 1)


def seeded(seed: int) -> np.random.Generator:
    """numpy's default generator for ``seed`` (PCG64): the suites' one source of random inputs."""
    return np.random.default_rng(seed)


def tensor(a, dtype: str = "float64", device: str = "cpu") -> codec.Spec:
    """An input the worker builds as a torch tensor of ``dtype`` on ``device`` from ``a``'s values
    (any array-like; booleans for ``dtype="bool"``)."""
    return codec.tensor_spec(np.asarray(a), dtype=dtype, device=device)


def as_torch(a) -> torch.Tensor:
    """``a`` as a trusted float64 torch tensor (a bool array stays bool), for the reference."""
    a = np.asarray(a)
    return torch.from_numpy(a.copy() if a.dtype == bool else a.astype(np.float64))


def rounded(a, dtype: str) -> np.ndarray:
    """The float64 values a tensor of ``dtype`` built from ``a`` holds (a bool array as bool):
    what the submission really received, for a float64 reference of the same inputs."""
    a = np.asarray(a)
    if dtype == "bool":
        return a.astype(bool)
    return torch.from_numpy(a.astype(np.float64)).to(getattr(torch, dtype)).double().numpy()


def float64_array(got: object, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``got`` when it is a float64 ndarray of ``shape``; else the test fails saying what it was.

    Raises:
        AssertionError: (a check failure) ``got`` is not such an array.
    """
    if not isinstance(got, np.ndarray) or got.shape != shape or got.dtype != np.float64:
        fail(f"{what}: expected {shape} float64, got {describe(got)}")
    return got
