"""The tenth outside review's findings on the process's state (session 42,
``review10_state_programs.py``): a context's entered flag (t60), socket's default timeout (t78),
the C library's time zone (t97) and the warnings module's filters (t63) were changed and read in
C or library code, neither an operation nor a traced access, so DPOR ran one order and proved
programs that fail in most real runs."""

from __future__ import annotations

import contextvars
import datetime
import socket
import time
import warnings
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import patch_context
from tests.harness import review10_state_programs as prog
from tests.harness.patched_runs import assert_outcomes, run_with_outcomes

pytestmark = pytest.mark.timeout(180)

_run = partial(run_with_outcomes, prog)


def _state() -> tuple[object, ...]:
    return (
        socket.getdefaulttimeout(),
        time.tzname,
        time.timezone,
        list(warnings.filters),
        warnings.showwarning,
    )


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.context_shared, {0, 1}),
        (prog.default_timeout, {None, 0.5}),
        (prog.tz_localtime, {0, prog.TOKYO_HOUR}),
        (prog.tz_attribute, {0, -prog.TOKYO_HOUR * 3600}),
        (prog.tz_datetime, {0, prog.TOKYO_HOUR}),
        (prog.tz_naive_timestamp, {prog.TOKYO_HOUR * 3600.0, 0.0}),
        (prog.warnings_recorded, {True, False}),
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor"])
def test_the_process_state_c_code_keeps_is_an_operation(
    program: Callable[[], object], outcomes: set[object], strategy: str
) -> None:
    """BUGGY: every outcome a real run gives, the bad one among them (each was one order only)."""
    with warnings.catch_warnings(record=True):  # (a warning outside the program's blocks is shown)
        before = _state()
        result = _run(program, strategy=strategy)
        after = _state()
    assert_outcomes(result, outcomes)
    assert after == before  # and what the program changed does not outlive the check


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.context_shared_locked, 0),
        (prog.default_timeout_locked, None),
        (prog.tz_localtime_locked, 0),
        (prog.warnings_recorded_locked, True),
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_correct_twins_are_proved(program: Callable[[], object], outcome: object, strategy: str) -> None:
    result = _run(program, strategy=strategy)
    assert_outcomes(result, {outcome})


def test_context_run_is_cpythons_again_after_patching() -> None:
    """``Context.run`` is put in the C type's dict while patched and taken back after."""
    real = contextvars.Context.__dict__["run"]
    assert type(real).__name__ == "method_descriptor"
    _run(prog.context_shared_locked)
    assert contextvars.Context.__dict__["run"] is real
    assert contextvars.copy_context().run(lambda: 7) == 7
    assert patch_context.CONTEXT.run is real


def test_datetimes_local_conversions_are_cpythons_again_after_patching() -> None:
    reals = [vars(datetime.datetime)[n] for n in ("fromtimestamp", "now", "astimezone", "timestamp")]
    _run(prog.tz_localtime_locked)
    assert [vars(datetime.datetime)[n] for n in ("fromtimestamp", "now", "astimezone", "timestamp")] == reals
    assert type(vars(datetime.date)["fromtimestamp"]).__name__ == "classmethod_descriptor"


def test_each_execution_starts_from_the_warnings_and_zone_the_check_found() -> None:
    """A program that leaves warnings as errors and the zone moved: the next execution (and what
    runs after the check) starts from the state the check began in, not the one it left."""
    with warnings.catch_warnings(record=True), prog.in_utc():
        warnings.simplefilter("default")
        before = _state()
        result = _run(prog.leaves_state)
        after = _state()
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    assert all(isinstance(s, tuple) and s[0] == (0, False) for s in result.outcomes), result.outcomes
    assert after == before
