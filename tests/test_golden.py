"""The example class grades byte for byte as tests/golden/example_class.json says.

The fingerprint was taken before the package was restructured (issue "One architecture"), so
this test is the check that moving code changed no grade, no result file and no feedback file
(only the volatile fields tests/golden names are left out). A change meant to change grades
regenerates it: ``python -m tests.golden example --update``.
"""

from __future__ import annotations

import pytest

from tests import golden

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("example-class")


def test_example_class_outputs_match_the_stored_fingerprint(example_class):
    _, out, _ = example_class
    now = golden.outputs_fingerprint(out)
    stored = golden.load(golden.EXAMPLE)
    changed = sorted(k for k in now.keys() | stored.keys() if now.get(k) != stored.get(k))
    assert not changed, f"outputs differ from tests/golden/example_class.json: {changed}"
