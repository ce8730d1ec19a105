"""`make test` relies on `--dist loadgroup` keeping a group on one pytest-xdist worker.

A module that grades a whole class (test_hostile, test_report, test_bad_uploads…) marks itself
``xdist_group`` so that one worker builds the class while the other runs the rest; a bank
variant's two tests share a group so that the plan check reuses the call-by-call grading.
pytest 9.2 with pytest-xdist 3.8 dropped the groups without a word (both workers then built
every class, one waiting on the other's lock: +11 minutes), hence this check of the real thing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

MODULE = textwrap.dedent("""
    import os
    import pytest

    pytestmark = pytest.mark.xdist_group("whole-module")

    @pytest.mark.parametrize("i", range(6))
    def test_member(i):
        with open(os.path.join(os.environ["GROUP_OUT"], f"member-{i}"), "w") as f:
            f.write(os.environ["PYTEST_XDIST_WORKER"])
""")
OTHERS = textwrap.dedent("""
    import pytest

    @pytest.mark.parametrize("i", range(12))
    def test_other(i):
        pass
""")


@pytest.mark.skipif(sys.platform != "linux", reason="the course's test run is Linux-only")
def test_an_xdist_group_runs_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(MODULE)
    (tmp_path / "test_others.py").write_text(OTHERS)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
         "--no-loadscope-reorder", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "GROUP_OUT": str(out)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    members = list(out.glob("member-*"))
    assert len(members) == 6
    workers = {p.read_text() for p in members}
    assert len(workers) == 1, (
        f"the group ran on {sorted(workers)}: `--dist loadgroup` no longer groups (check the "
        "pytest / pytest-xdist pair in pyproject.toml)")
