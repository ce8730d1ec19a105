"""Hypothesis tests in a batch plan: their examples recorded on the reference, replayed after.

A derandomised Hypothesis test (docs/design/interface.md, determinism) generates the same
examples for every submission for as long as they pass. Recording keeps each example's arguments
and draws (:func:`recording_examples`); replaying runs the test body on them in order, without the
engine (:func:`replayer`), and stops where Hypothesis would: at the first that fails. Leaving the
recording raises :class:`Diverged`, and the test then runs under Hypothesis for real.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Iterator

from autograder.grading import runner
from autograder.driver.session import Session


@dataclass
class Example:
    """The arguments Hypothesis gave one run of a test, and what ``data.draw`` returned."""

    kwargs: dict[str, Any]
    draws: list[Any] | None  # None: the test takes no ``data``
    valid: bool  # False: ``assume`` rejected it
    aborted: bool = False  # Hypothesis ended it inside a draw (out of data): not a test run


Diverged = runner.ReplayDiverged  # the replay left the recorded examples: run Hypothesis


class _Aborted(Exception):
    """Replaying an example Hypothesis ended inside a draw: it ends there too."""


class _RecordingData:
    def __init__(self, data: Any, example: Example) -> None:
        self._data, self._example = data, example

    def draw(self, strategy: Any, label: Any = None) -> Any:
        try:
            value = self._data.draw(strategy, label)
        except BaseException:
            self._example.aborted = True  # Hypothesis's own control flow (out of data)
            raise
        self._example.draws.append(copy.deepcopy(value))
        return value


class _ReplayData:
    def __init__(self, example: Example) -> None:
        self._draws = iter(copy.deepcopy(example.draws))
        self._aborted = example.aborted

    def draw(self, strategy: Any, label: Any = None) -> Any:
        try:
            return next(self._draws)
        except StopIteration:
            if self._aborted:
                raise _Aborted from None
            raise Diverged("more draws than recorded") from None


@contextlib.contextmanager
def recording_examples(fn: Any) -> Iterator[list[Example] | None]:
    """Record every run Hypothesis makes of ``fn`` (its documented, reassignable
    ``fn.hypothesis.inner_test``; ``functools.wraps`` keeps the digest that seeds it)."""
    handle = getattr(fn, "hypothesis", None)
    original = getattr(handle, "inner_test", None)
    if original is None:
        yield None
        return
    from hypothesis.errors import UnsatisfiedAssumption

    examples: list[Example] = []
    # A suite test is ``test(sub, ref, **drawn)``: the rest of its parameters are drawn.
    drawn = list(inspect.signature(original).parameters)[2:]

    @functools.wraps(original)
    def recording(*args: Any, **kwargs: Any) -> Any:
        draws = [] if "data" in kwargs else None
        example = Example({k: copy.deepcopy(kwargs[k]) for k in drawn if k != "data"},
                          draws, True)
        examples.append(example)
        if draws is not None:
            kwargs["data"] = _RecordingData(kwargs["data"], example)
        try:
            return original(*args, **kwargs)
        except UnsatisfiedAssumption:
            example.valid = False
            raise

    handle.inner_test = recording
    try:
        yield examples
    finally:
        handle.inner_test = original


def replayer(fn: Any, examples: list[Example], session: Session) -> Any:
    """A stand-in for a Hypothesis test that runs its recorded examples in order."""
    import warnings

    from hypothesis.errors import HypothesisException, HypothesisWarning, UnsatisfiedAssumption

    inner = fn.hypothesis.inner_test

    def run(example: Example, sub: Any, ref: Any) -> None:
        kwargs = copy.deepcopy(example.kwargs)
        if example.draws is not None:
            kwargs["data"] = _ReplayData(example)
        try:
            with warnings.catch_warnings():
                # ``assume`` outside the engine warns (and still rejects the example).
                warnings.simplefilter("ignore", HypothesisWarning)
                inner(sub, ref, **kwargs)
        except _Aborted:
            return  # as Hypothesis did: the example was never a test run
        except UnsatisfiedAssumption:
            if example.valid:
                raise Diverged("an example the reference ran was rejected") from None
        except HypothesisException as exc:  # anything else of Hypothesis's: let it run
            raise Diverged(f"Hypothesis objected ({type(exc).__name__})") from None

    def replay(sub: Any, ref: Any) -> None:
        for example in examples:
            position = session.pipeline.feed_position()
            try:
                run(example, sub, ref)
            except (Diverged, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as first:  # noqa: BLE001 - the test failed on this example
                # Hypothesis runs a failing example once more and reports that run (a timed
                # out function, say, is then "not run again"): so does the replay, asking the
                # same calls, whose replies the worker already gave.
                session.pipeline.rewind(position)
                try:
                    run(example, sub, ref)
                except (Diverged, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as again:  # noqa: BLE001
                    raise again from None
                raise first from None  # Hypothesis: flaky, reporting the first failure

    return replay


