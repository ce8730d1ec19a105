"""A test that cannot run here (a GPU test without CUDA) is skipped, not failed.

A tester's 100/100 submission saw five "failed" GPU tests in results.json and under "Failed:"
in its feedback. Skipped tests now carry no status at all: they are left out of Gradescope's
``tests`` and counted in a note instead, whether or not their topic could run.
"""

from __future__ import annotations

import json

import pytest

from autograder.grading import loop, runner
from autograder.results import model
from autograder.results import writers as outputs


def _spec(name: str, gpu: bool, points: float = 1.0) -> runner.TestSpec:
    return runner.TestSpec(name=f"ex05_attention.causal_mask: {name}", topic="ex05_attention",
                    exercise="causal_mask", description=name, visibility="hidden",
                    points=0.0 if gpu else points, advisory=False, gpu=gpu, fn=lambda *a: None)


def _graded(results: list[runner.TestResult], notes: dict[str, str] | None = None,
            kinds: dict[str, str] | None = None) -> model.Result:
    return model.Result.of("alice", "0" * 64, [loop.record(r) for r in results],
                           topic_notes=notes, topic_kinds=kinds)


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(runner, "cuda_available", lambda: False)


def test_a_gpu_test_without_cuda_is_skipped_even_when_its_topic_cannot_run(no_cuda):
    specs = [_spec("upper triangle", gpu=False), _spec("on CUDA", gpu=True)]
    results, why = runner.run_topic(None, "ex05_attention", specs, "ex05_attention.py not found")
    assert why == "ex05_attention.py not found"
    assert [(r.passed, r.skipped) for r in results] == [(False, False), (False, True)]


def test_skipped_tests_are_neither_passed_nor_failed_in_the_outputs(no_cuda):
    ok, gpu = _spec("upper triangle", gpu=False), _spec("on CUDA", gpu=True)
    g = _graded([runner.TestResult(ok, True), runner.run_test(None, gpu, None)])
    doc = json.loads(outputs.results_json(g))
    assert [t["name"] for t in doc["tests"]] == [ok.name]
    assert "1 test(s) that need a CUDA device were skipped" in doc["output"]
    feedback = outputs.feedback_md(g)
    assert "Failed:" not in feedback and gpu.name not in feedback
    assert "1 test(s) that need a CUDA device were skipped" in feedback
    assert "All tests passed." in feedback


def test_the_skip_note_is_not_read_as_a_topics_reason(no_cuda):
    """report.html lists a topic that did not run apart; the note must not join its reason."""
    from autograder.results import report

    ok, gpu = _spec("upper triangle", gpu=False), _spec("on CUDA", gpu=True)
    g = _graded([runner.TestResult(ok, False, "ex05_attention.py not found", not_run="missing"),
                 runner.run_test(None, gpu, None)],
                {"ex05_attention": "ex05_attention.py not found"}, {"ex05_attention": "missing"})
    doc = json.loads(outputs.results_json(g))
    assert report._reasons(doc) == {"ex05_attention": "ex05_attention.py not found"}


class _Slot:
    def __init__(self, triton_interpret: bool) -> None:
        self.triton_interpret = triton_interpret


class _Session:
    """Enough of a Session for run_test to decide a skip (the test's body must not run)."""

    def __init__(self, triton_interpret: bool) -> None:
        self.slot = _Slot(triton_interpret)
        self.returned = self.raised = 0  # replies counted (run.TestResult.raised_only)

    def out_of_time(self) -> bool:
        return False


def _ran(*a):
    raise AssertionError("the test body ran")


@pytest.mark.parametrize("interpret", [True, False])
def test_a_triton_topics_gpu_test_is_skipped_only_in_interpreting_workers(monkeypatch, interpret):
    """With CUDA present, topic 8's gpu tests would otherwise run CUDA-sized kernels in
    Triton's interpreter (minutes on the host, the submission's budget spent); a compiling
    slot runs them, and no other topic's gpu test is skipped for it."""
    monkeypatch.setattr(runner, "cuda_available", lambda: True)
    flash = runner.TestSpec(name="ex08_flash_attention.softmax_rows: on CUDA",
                            topic="ex08_flash_attention", exercise="softmax_rows",
                            description="on CUDA", visibility="hidden", points=0.0,
                            advisory=False, gpu=True, fn=_ran)
    attention = _spec("on CUDA", gpu=True)
    attention = runner.TestSpec(**{**attention.__dict__, "fn": _ran})
    session = _Session(interpret)
    got = runner.run_test(session, flash, None)
    assert got.skipped is interpret and ("interpreter" in got.message) is interpret
    assert runner.run_test(session, attention, None).skipped is False
