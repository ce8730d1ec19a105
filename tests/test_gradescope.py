"""`course gradescope`: the autograder zip, run as Gradescope would run it.

The zip is unpacked into a temporary folder standing in for ``/autograder`` (``source/`` holds
the zip, ``run_autograder`` sits beside it, the upload goes to ``submission/``), and
``run_autograder`` runs with ``COURSE_AUTOGRADER_ROOT`` pointing there and ``COURSE_PYTHON`` at
this interpreter (``setup.sh``, which installs the image's venv, is not run). ``results.json`` is
validated against Gradescope's results schema.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder import catalogue
from tests.helpers import ROOT, SOLUTIONS, stub_source

#: Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
RESULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number"},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "name_format": FORMAT,
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "output_format": FORMAT,
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": VISIBILITY,
                    "extra_data": {"type": "object"},
                },
                "required": ["name", "score", "max_score", "status"],
                "additionalProperties": False,
            },
        },
        "leaderboard": {"type": "array"},
    },
    "required": ["tests"],
    "anyOf": [{"required": ["score"]}, {"properties": {"tests": {"minItems": 1}}}],
    "additionalProperties": False,
}

PROBE = '''
import os

SECRETS = {secrets!r}


def dot(u, v):
    """Right only where the worker is unprivileged and the instructor's files are closed."""
    if os.geteuid() == 0:
        return -1.0
    for path in SECRETS:
        try:
            with open(path, "rb") as f:
                f.read(1)
            return -2.0
        except OSError:
            pass
    return _reference_dot(u, v)
'''


def _reference_dot() -> str:
    """The solution's ``dot``, renamed ``_reference_dot`` (what the probe returns when safe)."""
    source = (SOLUTIONS / "ex01_vectors.py").read_text("utf-8")
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "dot")
    return ast.get_source_segment(source, node).replace("def dot(", "def _reference_dot(", 1)


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope", "--out",
                           str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


#: Where `gradescope prepare` (setup.sh) keeps the plan, relative to /autograder/source.
PLAN = Path("autograder", "suites", ".grading-plan.pickle")


@pytest.fixture(scope="module")
def prepared_source(autograder_zip, tmp_path_factory) -> Path:
    """The zip unpacked as /autograder/source, with the plan setup.sh records in it."""
    source = tmp_path_factory.mktemp("gradescope-prepared") / "source"
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "autograder.exports.gradescope", "prepare"],
                          cwd=source, env={**env, "PYTHONPATH": str(source)},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "8 topics recorded" in proc.stdout, proc.stdout
    assert (source / PLAN).stat().st_mode & 0o077 == 0  # hidden inputs: the grader's alone
    return source


def run_autograder(zip_path: Path, root: Path, files: dict[str, str],
                   source_from: Path | None = None) -> tuple[dict, str]:
    """Stand ``root`` in for /autograder, upload ``files``, run run_autograder (on a copy of
    ``source_from``, a prepared source, if given; else on the zip freshly unpacked)."""
    source = root / "source"
    if source_from is not None:
        shutil.copytree(source_from, source)
    else:
        source.mkdir(parents=True)
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(source)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(COURSE_AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(root / "run_autograder")], env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    doc = json.loads((root / "results" / "results.json").read_text("utf-8"))
    jsonschema.validate(doc, RESULTS_SCHEMA)
    return doc, proc.stdout + proc.stderr


def test_zip_layout(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        names = set(infos)
        for script in ("setup.sh", "run_autograder"):
            assert script in names
            assert (infos[script].external_attr >> 16) & stat.S_IXUSR, script
        run = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
    assert "${COURSE_AUTOGRADER_ROOT:-/autograder}" in run
    assert "python" in run and "autograder.exports.gradescope" in run
    assert "torch==2.13.0" in setup and "pip install -q -e /autograder/source" in setup
    # The grader byte-compiled once in the image, not in every run (PYTHONDONTWRITEBYTECODE).
    assert "compileall -q /autograder/source/autograder" in setup
    for t in catalogue.topics():
        assert f"solutions/{t.filename}" in names
        assert f"autograder/suites/public/{t.filename}" in names
        assert f"autograder/suites/hidden/{t.filename}" in names
    assert "pyproject.toml" in names and "autograder/catalogue.toml" in names
    # The templates the grader fills inside Gradescope (report.html after every grading).
    for tpl in ("results/templates/report.html.j2", "results/templates/report.css"):
        assert f"autograder/{tpl}" in names, tpl
    assert "@{" not in run + setup  # every placeholder filled
    assert not any(n.startswith(("exercises/", "tests/", "examples/", "docs/")) for n in names)
    assert not any("__pycache__" in n for n in names)


@pytest.mark.slow
def test_complete_submission_gets_full_marks(autograder_zip, prepared_source, tmp_path):
    """Graded as Gradescope grades it once setup.sh has run: replaying the recorded plan."""
    files = {t.filename: (SOLUTIONS / t.filename).read_text("utf-8") for t in catalogue.topics()}
    doc, log = run_autograder(autograder_zip, tmp_path / "autograder", files, prepared_source)
    assert "plan file" not in log  # the plan was current, and used
    assert "no recorded grading plan" not in log
    # The seconds by phase go to run_autograder's log (the instructor's), never to the student.
    table = log[log.index("seconds by phase"):].splitlines()
    assert any(line.split()[:2] == ["the", "public"] for line in table), table
    total = next(float(line.split()[-1]) for line in table if line.split()[:1] == ["total"])
    assert 0 < total < 900
    assert "seconds by phase" not in json.dumps(doc)
    assert doc["score"] == doc["max_score"] == 100.0
    # GPU-only checks carry no points and fail as "skipped" without CUDA
    assert all(t["status"] == "passed" for t in doc["tests"] if t["max_score"] > 0)
    vis = {t["visibility"] for t in doc["tests"]}
    assert vis == {"visible", "after_published"}


@pytest.mark.slow
def test_stubs_score_zero_and_the_worker_is_unprivileged(autograder_zip, prepared_source,
                                                          tmp_path):
    """The stubs earn nothing; as root, the worker runs as another user and cannot read the
    instructor's files, the recorded plan (hidden inputs) among them (its `dot` is right only
    then)."""
    root = tmp_path / "autograder"
    secrets = [str(root / "source" / "solutions" / "ex01_vectors.py"),
               str(root / "source" / "autograder" / "suites" / "hidden" / "ex01_vectors.py"),
               str(root / "source" / PLAN)]
    files = {t.filename: stub_source(t.module) for t in catalogue.topics()}
    files["ex01_vectors.py"] += "\n\n" + _reference_dot() + "\n" + PROBE.format(secrets=secrets)
    doc, _ = run_autograder(autograder_zip, root, files, prepared_source)
    assert doc["max_score"] == 100.0
    dot = [t for t in doc["tests"] if t["name"].startswith("ex01_vectors.dot: ")]
    others = [t for t in doc["tests"] if not t["name"].startswith("ex01_vectors.dot: ")]
    assert dot and others
    assert all(t["status"] == "failed" and t["score"] == 0 for t in others)
    assert all(t["status"] == "passed" or t["score"] == 0 for t in dot)
    if os.geteuid() == 0:
        assert all(t["status"] == "passed" for t in dot), [t["output"] for t in dot]
        dot_points = catalogue.get_exercise("ex01_vectors.dot").points
        assert doc["score"] == dot_points
        for closed in (root / "source" / "solutions", root / "source" / "autograder" / "suites"):
            assert closed.stat().st_mode & 0o077 == 0, closed
    else:
        assert doc["score"] <= catalogue.get_exercise("ex01_vectors.dot").points


def _wrong_topics() -> dict[str, str]:
    """The solutions with one plausible mistake (tests/banks) in each of three topics, and
    those three topics only: some tests pass on the reference's replies, others run live from
    where a reply differs. The other five, complete, would only add minutes of identical
    replays to a test that runs twice (make test's critical path); missing, they still go
    through both paths (a topic not handed in)."""
    import importlib

    files = {}
    for topic in ("ex02_projections", "ex03_softmax", "ex08_flash_attention"):
        variant = importlib.import_module(f"tests.banks.wrong_{topic}").BANK[0]
        files[f"{topic}.py"] = ((SOLUTIONS / f"{topic}.py").read_text("utf-8")
                                + "\n\n" + variant.code + "\n")
    return files


@pytest.mark.slow
def test_the_recorded_plan_gives_the_grades_of_grading_call_by_call(
        autograder_zip, prepared_source, tmp_path):
    """The plan only saves time: a submission with mistakes gets the same results.json from a
    prepared image as from one whose plan is missing (graded call by call); a stale plan
    (another grader version) is not used, and says so."""
    files = _wrong_topics()
    planned, log = run_autograder(autograder_zip, tmp_path / "planned", files, prepared_source)
    assert "plan file" not in log
    unplanned, log = run_autograder(autograder_zip, tmp_path / "unplanned", files)
    assert not (tmp_path / "unplanned" / "source" / PLAN).exists()
    assert "no recorded grading plan" in log  # the slow path says so in the log
    for doc in (planned, unplanned):
        doc.pop("execution_time")
    assert 0 < planned["score"] < planned["max_score"]
    assert planned == unplanned

    stale = tmp_path / "stale"
    shutil.copytree(prepared_source, stale / "source")
    with open(stale / "source" / "solutions" / "ex01_vectors.py", "a") as f:
        f.write("\n# an edit after setup.sh: another grader version\n")
    shutil.move(stale / "source", tmp_path / "stale-source")
    doc, log = run_autograder(autograder_zip, stale, {"ex01_vectors.py": (
        SOLUTIONS / "ex01_vectors.py").read_text("utf-8")}, tmp_path / "stale-source")
    assert "made by grader" in log and "grading call by call" in log
    assert doc["score"] == catalogue.get_topic("ex01_vectors").points
