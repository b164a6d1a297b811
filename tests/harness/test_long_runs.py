"""A long run with no operation is a livelock only where the thread cannot make progress (review
13's A7, session 46; ``busy_wait.BusyWait.long_run``, ``endless_loops``): a long local computation
is proved, or bounded by the time limit, and an endless loop or a spin nothing ends is still a
livelock."""

from __future__ import annotations

import pytest

from model_checks.harness import busy_wait, step_deadline
from tests.harness import long_run_programs as prog
from tests.harness.patched_runs import assert_fails, assert_proved_returning, run_with_outcomes


@pytest.mark.timeout(120)
def test_a_local_computation_longer_than_the_livelock_mark_is_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    """p176 made short: one long run (about 2M opcodes) is the mark here; before session 46 each
    thread's sum was a "livelock" (``ENDLESS`` long runs with no operation)."""
    monkeypatch.setattr(busy_wait, "ENDLESS", 1)
    result = run_with_outcomes(prog, prog.local_sums(600_000))
    assert_proved_returning(result, 2 * sum(i & 7 for i in range(600_000)), 3)


@pytest.mark.timeout(120)
def test_a_local_computation_past_the_time_limit_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """p176 with 20,000,000 turns: before, a "livelock" at the mark (one long run here); now the
    time limit ends it inside the step, and the verdict says so."""
    monkeypatch.setattr(busy_wait, "ENDLESS", 1)
    result = run_with_outcomes(prog, prog.local_sums(20_000_000), time_limit=3)
    assert result.verdict == "bounded", result.report()
    assert any(step_deadline.STOPPED in reason for reason in result.bounded_by), result.bounded_by


@pytest.mark.timeout(120)
def test_a_long_loop_that_exits_is_not_proved_endless(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(busy_wait, "ENDLESS", 1)
    result = run_with_outcomes(prog, prog.long_count, time_limit=2)
    assert result.verdict == "bounded" and result.failure is None, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", [prog.endless_count, prog.endless_mixed], ids=lambda p: p.__name__)
def test_an_endless_local_loop_is_a_livelock(program: object) -> None:
    result = run_with_outcomes(prog, program, time_limit=30)  # type: ignore[arg-type]
    assert_fails(result, "livelock", "is in an endless loop at long_run_programs.py:")
    assert result.elapsed < 20, result.elapsed  # proved at the first long run, not at the limit


@pytest.mark.timeout(120)
def test_a_spin_nothing_ends_is_still_a_livelock_past_max_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """With steps to spare, the spin's long runs (re-reads, no write, no operation) are the mark
    (one here: a spin's turn calls the detector, about 0.5M opcodes a second)."""
    monkeypatch.setattr(busy_wait, "ENDLESS", 1)
    result = run_with_outcomes(prog, prog.spin_nobody_ends, max_steps=1_000_000, time_limit=60)
    assert_fails(result, "livelock", "nothing it reads can change")
