"""No stale grades: the grader version changes when any file that takes part in grading does.

Red team: changing a tolerance in ``autograder/authoring/checks.py`` kept the version, and a re-run
"resumed" with grades made under the old rule. The version now digests every file of the
package and the solutions (and the libraries' versions); a re-run resumes only results made
under the same version (tests/test_resume.py).
"""

from __future__ import annotations

import shutil
import sys

import pytest

from autograder.results import version as outputs
from tests.helpers import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    base = tmp_path_factory.mktemp("version")
    shutil.copytree(ROOT / "autograder", base / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "solutions", base / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return base


def test_the_version_covers_the_code_that_judges(copy):
    names = {n for n, _ in outputs.grading_files(copy / "autograder", copy / "solutions")}
    for must in ("autograder/authoring/checks.py", "autograder/grading/runner.py", "autograder/driver/session.py",
                 "autograder/wire/codec.py", "autograder/catalogue.toml",
                 "autograder/suites/hidden/ex03_softmax.py", "solutions/ex03_softmax.py",
                 # Templates, whatever their suffix: the report page and Gradescope's scripts.
                 "autograder/results/templates/report.html.j2",
                 "autograder/results/templates/report.css",
                 "autograder/exports/templates/gradescope/run_autograder",
                 "autograder/exports/nbgrader/templates/nbgrader_config.py.tmpl"):
        assert must in names, must


def test_editing_any_grading_file_changes_the_version(copy):
    pkg, sol = copy / "autograder", copy / "solutions"
    base = outputs.compute_grader_version(pkg, sol)
    assert outputs.compute_grader_version(pkg, sol) == base  # deterministic
    files = outputs.grading_files(pkg, sol)
    assert len(files) > 40
    for name, f in files:
        original = f.read_bytes()
        f.write_bytes(original + b"\n")
        try:
            assert outputs.compute_grader_version(pkg, sol) != base, name
        finally:
            f.write_bytes(original)
    assert outputs.compute_grader_version(pkg, sol) == base


def test_moving_a_file_changes_the_version(copy):
    """Same bytes, another place (a public test made hidden): another version."""
    pkg, sol = copy / "autograder", copy / "solutions"
    base = outputs.compute_grader_version(pkg, sol)
    src = pkg / "suites" / "public" / "ex01_vectors.py"
    dst = pkg / "suites" / "public" / "ex01_vectors_moved.py"
    src.rename(dst)
    try:
        assert outputs.compute_grader_version(pkg, sol) != base
    finally:
        dst.rename(src)


def test_a_library_upgrade_changes_the_version(copy, monkeypatch):
    pkg, sol = copy / "autograder", copy / "solutions"
    base = outputs.compute_grader_version(pkg, sol)
    real = outputs._library_versions()
    monkeypatch.setattr(outputs, "_library_versions", lambda: {**real, "hypothesis": "0.0.1"})
    assert outputs.compute_grader_version(pkg, sol) != base


def test_every_template_is_package_data():
    """A non-editable install carries only the files pyproject's package-data names: every
    file of a ``templates/`` folder must match one of its globs (as setuptools expands them),
    or an installed grader could not write report.html or a Gradescope zip."""
    package = ROOT / "autograder"
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"][
        "package-data"]["autograder"]
    shipped = {p for g in globs for p in package.glob(g) if p.is_file()}
    templates = {p for p in package.rglob("*") if p.is_file() and "templates" in
                 p.relative_to(package).parts[:-1] and "__pycache__" not in p.parts}
    assert len(templates) >= 10
    assert templates <= shipped, sorted(str(p.relative_to(package)) for p in templates - shipped)
