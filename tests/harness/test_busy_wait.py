"""A thread spinning on plain data gets scheduling points (``busy_wait.py``): the spin's data race
is reported, a spin nothing ends is a livelock, and a long loop over new locations is left alone.
Each spinning program hung the explorer before session 36."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from tests.harness import busy_programs as prog


def _run(program: Callable[[], object], max_steps: int = 2_000) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=30, max_steps=max_steps))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program", [prog.spin_on_a_flag, prog.spin_after_a_race], ids=lambda p: p.__name__)
def test_a_spin_on_plain_data_is_its_data_race(program: Callable[[], object]) -> None:
    result = _run(program)
    assert result.failure is not None and result.failure.kind == "data_race", result.report()
    assert "data race on Flag.done" in result.failure.message


@pytest.mark.timeout(60)
def test_a_spin_nothing_ends_is_a_livelock() -> None:
    result = _run(prog.spin_for_ever, max_steps=200)
    assert result.failure is not None and result.failure.kind == "livelock", result.report()
    assert "sleeping in them" in result.failure.message or "alone" in result.failure.message


@pytest.mark.timeout(120)
def test_a_long_loop_over_new_locations_is_work_not_a_spin() -> None:
    result = _run(prog.long_loop_then_publish)
    assert result.verdict == "exhaustive", result.report()
    assert result.steps < 40 * result.executions, (result.steps, result.executions)
