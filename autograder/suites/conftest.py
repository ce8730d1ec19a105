"""Run a suite with plain pytest against one submission (instructors' and authors' view).

    pytest autograder/suites/hidden/ex03_softmax.py --submission path/to/student_folder

``sub`` is the submission's topic module behind the sandbox, ``ref`` the reference solution; the
test names, hints and verdicts are the ones `course grade` produces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading import run as runner
from autograder.grading import submission
from autograder.sandbox.session import ImportFailed, Session, Slot
from autograder.authoring.suite import HIDDEN, SubmissionModule


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--submission", default=None,
                     help="submission folder or .zip to test (default: exercises/)")


@pytest.fixture(scope="session")
def _session(request: pytest.FixtureRequest):
    path = request.config.getoption("--submission")
    folder = Path(path) if path else Path(__file__).resolve().parents[2] / "exercises"
    loaded = submission.load(folder)
    with Slot(0) as slot:
        session = Session(slot, loaded.sources)
        yield session
        session.close()


@pytest.fixture
def sub(request: pytest.FixtureRequest, _session: Session) -> SubmissionModule:
    topic = request.module.TOPIC
    meta = getattr(request.function, "__graded__", None)
    if meta is not None and meta.gpu and not runner.cuda_available():
        pytest.skip("needs a CUDA device")
    try:
        _session.load(topic)
    except ImportFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    token = HIDDEN.set(".hidden." in request.module.__name__)
    request.addfinalizer(lambda: HIDDEN.reset(token))
    return SubmissionModule(_session, topic)


@pytest.fixture
def ref(request: pytest.FixtureRequest):
    return runner.reference(request.module.TOPIC)
