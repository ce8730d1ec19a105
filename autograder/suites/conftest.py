"""Run a suite with plain pytest against one submission (instructors' and authors' view).

    pytest autograder/suites/hidden/ex03_softmax.py --submission path/to/student_folder
    pytest autograder/suites/*/ex0*.py -m "ex03_softmax and public"   # one topic, one half

``sub`` is the submission's topic module behind the sandbox, ``ref`` the reference solution; the
test names, hints and verdicts are the ones `course grade` produces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import catalogue
from autograder.authoring.suite import SubmissionModule
from autograder.grading import loop, uploads
from autograder.grading import runner
from autograder.driver.errors import ImportFailed
from autograder.driver.session import Session
from autograder.driver.slot import Slot


def pytest_configure(config: pytest.Config) -> None:
    # One marker per topic, and one per visibility: `pytest autograder/suites -m ex03_softmax`.
    for topic in catalogue.topic_modules():
        config.addinivalue_line("markers", f"{topic}: the graded tests of {topic}")
    for visibility in ("public", "hidden"):
        config.addinivalue_line("markers", f"{visibility}: the {visibility} graded tests")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        topic = getattr(module, "TOPIC", None)
        if topic is not None:
            item.add_marker(topic)
            item.add_marker(runner.suite_visibility(module))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--submission", default=None,
                     help="submission folder or .zip to test (default: exercises/)")


@pytest.fixture(scope="session")
def _session(request: pytest.FixtureRequest):
    path = request.config.getoption("--submission")
    folder = Path(path) if path else Path(__file__).resolve().parents[2] / "exercises"
    loaded = uploads.load(folder, named=False)  # its name names no output file
    with Slot(0) as slot, loop.open_session(slot, loaded.sources) as session:
        yield session


@pytest.fixture
def sub(request: pytest.FixtureRequest, _session: Session) -> SubmissionModule:
    topic = request.module.TOPIC
    meta = getattr(request.function, "__graded__", None)
    if meta is not None and meta.gpu and not runner.cuda_available():
        pytest.skip("needs a CUDA device")
    if meta is not None and meta.gpu and runner.interpreted_gpu_test(topic, _session):
        pytest.skip(runner.TRITON_GPU_SKIP.removeprefix("skipped: "))
    if _session is None:
        pytest.fail(f"{topic}.py not found in the submission", pytrace=False)
    try:
        _session.load(topic)
    except ImportFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    scope = runner.judging(runner.suite_visibility(request.module))
    scope.__enter__()
    request.addfinalizer(lambda: scope.__exit__(None, None, None))
    return SubmissionModule(_session, topic)


@pytest.fixture
def ref(request: pytest.FixtureRequest):
    return runner.reference(request.module.TOPIC)
