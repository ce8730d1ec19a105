"""The same verdicts on every BLAS kernel: the goldens and a correct answer's grade are the
processor's no more than they are the clock's.

numpy's OpenBLAS chooses its kernels by the processor, and a kernel rounds a product, an
eigensolver or an SVD in its own way. A test whose input is ill-posed for some method then gives
that method's verdict by the last bit, and tests/golden/banks.json, made on one machine, fails
on another (it did: an AMD EPYC, SkylakeX kernels, against goldens made with Haswell ones).
Each variant below is graded (``python -m tests.kernels``, with the batch plan, as
tests/test_banks.py grades it) under two or three kernels forced by ``OPENBLAS_CORETYPE``, which
the grader's zygote keeps; each must give its stored verdicts under every one.
docs/design/measured-facts.md, "The same grades on every BLAS kernel", says which verdicts varied.

Cost: about 10 s per kernel (a plan of two topics, then ~0.5 s a variant), the kernels side by
side.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import banks, golden
from tests.helpers import ROOT, course_env

#: Kernels to force, in order of preference; those this numpy's OpenBLAS runs as the same
#: kernel (Zen is Haswell's; a kernel the processor cannot run falls back) count once.
CORETYPES = ("Haswell", "SkylakeX", "Sandybridge", "Prescott")
#: Variants whose grades meet ill-conditioned or exactly singular inputs (σ_min or an eigenvalue
#: at or near zero, where rounding decides): every condition_number, is_positive_definite and
#: spectral_radius variant, wrong and correct, and every variant with tests declared unsettled.
#: ``python -m tests.kernels CORETYPE`` grades every bank variant (a few minutes per kernel).
FUNCTIONS = {"condition_number", "is_positive_definite", "spectral_radius"}
KEYS = sorted(key for key, _, v in banks.all_variants()
              if v.function in FUNCTIONS or v.unsettled)


def _run(coretype: str, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.kernels", coretype, *args],
                            cwd=ROOT, env=course_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _kernels() -> dict[str, str]:
    """Coretype -> the kernel OpenBLAS ran it as, one coretype per distinct kernel."""
    probe = [sys.executable, "-c", "from tests.kernels import corename; print(corename())"]
    found: dict[str, str] = {}
    for coretype in CORETYPES:
        name = subprocess.run(probe, cwd=ROOT, env=course_env(OPENBLAS_CORETYPE=coretype),
                              capture_output=True, text=True, check=True).stdout.strip()
        if name != "unknown" and name not in found.values():
            found[coretype] = name
    return found


def test_the_variants_are_chosen():
    """The selection holds the variant whose verdict once followed the kernel, and exists."""
    assert "wrong-ex07_matrix_properties-condition_number-12" in KEYS
    assert {k.split("-")[0] for k in KEYS} == {"wrong", "correct"}


def test_every_kernel_gives_the_stored_verdicts():
    kernels = _kernels()
    if len(kernels) < 2:
        pytest.skip(f"numpy's BLAS runs fewer than two of {CORETYPES} here ({kernels})")
    procs = {c: _run(c, KEYS) for c in list(kernels)[:3]}
    stored = golden.load(golden.BANKS)
    for coretype, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{coretype}: {err[-3000:]}"
        got = json.loads(out)
        assert got["corename"] == kernels[coretype]
        differ = sorted(k for k, d in got["digests"].items() if stored.get(k) != d)
        assert not differ, (
            f"with OPENBLAS_CORETYPE={coretype} ({got['corename']} kernels) these variants' "
            f"verdicts differ from tests/golden/banks.json: {differ}")
