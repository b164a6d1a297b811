"""``--time-limit`` after a failure is found (review 13's C2 leftovers, session 46): the replay of
a schedule and the shrinking of a failure stay within the limit (``step_deadline``)."""

from __future__ import annotations

import time

import pytest

from model_checks.harness import step_deadline
from tests.harness import long_run_programs as prog
from tests.harness.patched_runs import assert_fails, run_with_outcomes

pytestmark = pytest.mark.timeout(240)

PROGRAM = prog.split_update(1_000_000)


def test_a_replay_stopped_at_the_time_limit_is_bounded_not_a_divergence() -> None:
    """Before: the replay, stopped inside a step, was "diverged: ... the program's operations
    differ" (its operations were a prefix), an error."""
    found = run_with_outcomes(prog, PROGRAM, minimize=False)
    failure = assert_fails(found, "assertion")
    result = run_with_outcomes(prog, PROGRAM, replay=failure.schedule, time_limit=0.3)
    assert result.verdict == "bounded", result.report()
    assert any(step_deadline.STOPPED in reason for reason in result.bounded_by), result.bounded_by


def test_shrinking_a_failure_stays_within_the_time_limit() -> None:
    """Before: the shrinking (``minimize``) and the replay for source lines ran unbounded
    (measured: 23.9 s for a 12 s limit on this program with 2,000,000 turns)."""
    started = time.perf_counter()
    result = run_with_outcomes(prog, PROGRAM, time_limit=4)
    wall = time.perf_counter() - started
    assert result.verdict in ("failed", "bounded"), result.report()
    assert wall < 4 + 3, (wall, result.report())  # (the deadline is looked at every ~0.1 s of code)


def test_a_c_call_past_the_time_limit_is_said() -> None:
    """One C call cannot be stopped (it runs no Python, so nothing of lanecheck's runs until it
    returns): the verdict's notes say the limit was overrun and why (before: nothing said)."""
    result = run_with_outcomes(prog, prog.long_c_call, time_limit=0.3)
    assert any(step_deadline.OVERRUN in note and "C code" in note for note in result.notes), result.report()
