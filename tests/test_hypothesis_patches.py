"""The two Hypothesis internals autograder/authoring/suite.py patches are really patched.

Both patches keep grades reproducible byte for byte (docs/design/interface.md, determinism):
without the first, Hypothesis mixes literals of every imported local module (the solutions and
hidden suites included) into generated data, so inputs depend on what was imported first, and
it caches them on disk; the second only saves time. They reach into ``hypothesis.internal``,
which may change in any release: pyproject.toml pins the range tested, and these tests fail the
day a patch stops applying, rather than letting grades drift silently.
"""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT


def test_local_constants_are_switched_off():
    import autograder.authoring.suite  # noqa: F401 - applies the patches
    from hypothesis.internal.conjecture import providers

    assert providers._get_local_constants is providers.Constants
    assert len(providers._get_local_constants()) == 0


def test_the_function_digest_is_memoised():
    import autograder.authoring.suite  # noqa: F401
    from hypothesis import core

    assert getattr(core.function_digest, "__memoised__", False)

    def f(x):
        return x

    assert core.function_digest(f) == core.function_digest(f)


DRAW = r'''
import sys
sys.path.insert(0, sys.argv[1])
import autograder.authoring.suite  # the grading profile and patches
if sys.argv[2] == "import-first":
    import solutions.ex03_softmax  # a local module full of literals
from hypothesis import given, strategies as st
seen = []

@given(st.floats(allow_nan=False, width=64), st.integers())
def t(x, n):
    seen.append((x, n))

t()
print(repr(seen))
'''


def test_generated_inputs_do_not_depend_on_what_was_imported():
    """Two fresh interpreters, one importing a solution module first: the same examples."""
    runs = [subprocess.run([sys.executable, "-c", DRAW, str(ROOT), order], cwd=ROOT,
                           capture_output=True, text=True, timeout=120, check=True).stdout
            for order in ("plain", "import-first")]
    assert runs[0] == runs[1] and runs[0].startswith("[(")
