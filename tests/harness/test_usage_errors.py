"""Misuse found when a controlled thread's body ends is the test's ``UsageError``, on both back
ends: the thread is recorded as over before the misuse is reported, so teardown never resumes a
body that has returned (which masked the error with an AssertionError from the greenlet back
end's reusable greenlet, and left the threads back end waiting for ever)."""

from __future__ import annotations

import re

import pytest

from model_checks.harness.api import check
from model_checks.harness.options import Options
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime

BACKENDS = ["greenlet", "threads"]
RETURN_RULE = re.escape("a test may return None, a final check (callable) or a list of them")


def _returns_a_number(rt: ControlledRuntime) -> object:
    return 42


def _returns_a_list_with_a_number(rt: ControlledRuntime) -> object:
    return [lambda: None, 42]


def _starts_a_thread_then_returns_a_number(rt: ControlledRuntime) -> object:
    rt.start_thread(lambda: None, "worker")
    return "done"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "program", [_returns_a_number, _returns_a_list_with_a_number, _starts_a_thread_then_returns_a_number]
)
def test_a_test_returning_a_non_callable_is_a_usage_error(backend: str, program: object) -> None:
    with pytest.raises(UsageError, match=RETURN_RULE):
        check(program, Options(backend=backend))  # type: ignore[arg-type]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", BACKENDS)
def test_misuse_raised_in_a_thread_body_reaches_the_caller(backend: str) -> None:
    def program(rt: ControlledRuntime) -> None:
        def worker() -> None:
            raise UsageError("the worker misused the harness")

        rt.start_thread(worker, "worker")

    with pytest.raises(UsageError, match="the worker misused the harness"):
        check(program, Options(backend=backend))  # type: ignore[arg-type]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", BACKENDS)
def test_what_a_test_may_return_still_passes(backend: str) -> None:
    def program(rt: ControlledRuntime) -> object:
        rt.start_thread(lambda: None, "worker")
        return [lambda: None, (lambda: 1,)]

    result = check(program, Options(backend=backend))  # type: ignore[arg-type]
    assert result.ok, result.report()
    assert result.outcomes == {1}
