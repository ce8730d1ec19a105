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


PUBLIC_ONLY = r'''
import sys
sys.path.insert(0, sys.argv[1])
from hypothesis import HealthCheck, Phase, given, seed, settings, strategies as st
# the grading profile's public settings, without autograder.authoring.suite's patches
settings.register_profile("public", derandomize=True, database=None, deadline=None,
                          print_blob=False, phases=[Phase.explicit, Phase.generate],
                          suppress_health_check=list(HealthCheck), max_examples=200)
settings.load_profile("public")
if sys.argv[2] == "import-first":
    import solutions.ex03_softmax  # a local module full of literals
seen = []

@given(st.floats(allow_nan=False, width=64), st.integers())
def t(x, n):
    seen.append((x, n))

if sys.argv[3] == "seed":
    t = seed(0)(t)
t()
print(repr(seen))
'''


def test_the_public_api_alone_does_not_keep_the_draws(tmp_path):
    """Why the first patch is there (docs/design/grading-contract.md, 5): with only the public
    API (``derandomize=True``, ``database=None``, or ``@seed``), importing a local module first
    changes the examples drawn, and its literals are cached on disk under ``.hypothesis/``
    even with ``database=None``. The day a Hypothesis release makes this test fail, the public
    settings keep the draws and the patch can go."""
    for how in ("derandomize", "seed"):
        runs = [subprocess.run([sys.executable, "-c", PUBLIC_ONLY, str(ROOT), order, how],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120,
                               check=True).stdout for order in ("plain", "import-first")]
        assert runs[0].startswith("[(") and runs[0] != runs[1], how
    assert any((tmp_path / ".hypothesis" / "constants").iterdir())
