"""The same verdicts under every BLAS kernel: no golden and no grade depends on the processor.

numpy's OpenBLAS chooses its kernels by the processor, and a kernel rounds a product, an
eigensolver or an SVD in its own way. A test whose input is ill-posed for some method then gives
that method's verdict by the last bit, and tests/golden/banks.json, made on one machine, fails
on another (it did: an AMD EPYC, SkylakeX kernels, against goldens made with Haswell ones).
Each variant below is graded (``python -m tests.kernels``, with the batch plan, as
tests/test_banks.py grades it) under two or three kernels forced by ``OPENBLAS_CORETYPE``, which
the grader's zygote keeps; each must give its stored verdicts under every one.
docs/design/measured-facts.md, "The same grades on every BLAS kernel", says which verdicts varied.

Cost: about 30 s of a core per kernel (a plan of two topics, then ~0.5 s a variant); the two
forced kernels run side by side (the processor's own kernel is tests/test_banks.py's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import banks, golden
from tests.helpers import ROOT, course_env

#: Kernels to force, in order of preference; the first two that this numpy's OpenBLAS runs as
#: kernels other than the processor's own and each other's are used (Zen runs as Haswell; a
#: kernel the processor cannot run falls back to one it can).
CORETYPES = ("Haswell", "SkylakeX", "Sandybridge", "Prescott")
#: Variants whose grades meet inputs where rounding could decide: singular or ill-conditioned
#: matrices (σ_min or an eigenvalue at or near zero), long sums that float32 misses by about the
#: tolerance, cosines that round past ±1. Every dot, angle_between, condition_number,
#: is_positive_definite and spectral_radius variant, wrong and correct, and every variant with
#: tests declared unsettled: the three verdicts seen to follow the kernel were a dot's, an
#: angle_between's and a condition_number's. ``python -m tests.kernels CORETYPE`` grades every
#: bank variant (4 to 6 minutes per kernel on 2 cores).
FUNCTIONS = {"dot", "angle_between", "condition_number", "is_positive_definite",
             "spectral_radius"}
KEYS = sorted(key for key, _, v in banks.all_variants()
              if v.function in FUNCTIONS or v.unsettled)


def _run(coretype: str, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.kernels", coretype, *args],
                            cwd=ROOT, env=course_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _corename(**env: str) -> str:
    """The kernel OpenBLAS runs in the tests' environment (with ``env`` on top)."""
    probe = [sys.executable, "-c", "from tests.kernels import corename; print(corename())"]
    return subprocess.run(probe, cwd=ROOT, env=course_env(**env), capture_output=True,
                          text=True, check=True).stdout.strip()


def _kernels() -> tuple[str, dict[str, str]]:
    """The kernel the other tests run (this processor's, unless OPENBLAS_CORETYPE is set), and
    coretype -> kernel for up to two others: tests/test_banks.py already holds the first one's
    verdicts to the golden, so three kernels are checked."""
    own = _corename()
    found: dict[str, str] = {}
    for coretype in CORETYPES:
        name = _corename(OPENBLAS_CORETYPE=coretype)
        if len(found) < 2 and name not in ("unknown", own, *found.values()):
            found[coretype] = name
    return own, found


def test_the_variants_are_chosen():
    """The selection holds the variants whose verdicts once followed the kernel."""
    assert {"wrong-ex07_matrix_properties-condition_number-12", "wrong-ex01_vectors-dot-13",
            "wrong-ex01_vectors-angle_between-21"} <= set(KEYS)
    assert {k.split("-")[0] for k in KEYS} == {"wrong", "correct"}


@pytest.mark.slow  # tens of seconds: `make test` runs it, `make test-quick` leaves it out
def test_every_kernel_gives_the_stored_verdicts():
    own, kernels = _kernels()
    if own == "unknown" or not kernels:
        pytest.skip(f"numpy's BLAS here ({own}) runs none of {CORETYPES} as another kernel")
    procs = {c: _run(c, KEYS) for c in kernels}
    stored = golden.load(golden.BANKS)
    for coretype, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{coretype}: {err[-3000:]}"
        got = json.loads(out)
        assert got["corename"] == kernels[coretype]
        differ = sorted(k for k, d in got["digests"].items() if stored.get(k) != d)
        assert not differ, (
            f"with OPENBLAS_CORETYPE={coretype} ({got['corename']} kernels, this processor's "
            f"own: {own}) these variants' verdicts differ from tests/golden/banks.json: {differ}")


def test_unsettled_tests_are_the_variants_own():
    """A variant's unsettled tests name tests of its own function (a misspelt name would leave
    the verdict it meant to set aside in the digest, and on some processor the golden red)."""
    from autograder.grading import runner

    for key, topic, v in banks.all_variants():
        if v.unsettled:
            own = {s.fn.__name__ for s in runner.collect(topic) if s.exercise == v.function}
            assert set(v.unsettled) <= own, f"{key}: {sorted(set(v.unsettled) - own)}"
