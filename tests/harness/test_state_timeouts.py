"""The state search proves polling loops whose timeouts change nothing (session 48, review 14's
B7/C4: every ``timeout_limit`` answered "bounded by timeout_limit"), and still refuses where a
timeout changes the state (``strategies/stateful.TimeoutCuts``)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from model_checks.harness import check
from model_checks.harness.options import Options, Result
from model_checks.harness.patch import patched
from model_checks.harness.stateful import check_states
from tests.harness import polling_programs as prog
from tests.harness.explore_runs import explore_command

pytestmark = pytest.mark.timeout(240)


def _states(main: Callable[[], object], **options: object) -> Result:
    with patched(prog):
        return check_states(
            lambda rt: (lambda value: lambda: value)(main()),
            Options(minimize=False, time_limit=120).with_(**options),
        )


def test_a_poll_whose_timeouts_change_nothing_is_proved() -> None:
    """Review 14's p39b: it was "bounded by timeout_limit=2" (and 4, and 8)."""
    result = _states(prog.drain_after_stop)
    assert result.verdict == "exhaustive", result.report()
    assert set(result.outcomes) == {(0, 1, 2)}
    assert any(note.startswith("timeout_limit=2: each timeout") for note in result.notes), result.notes


@pytest.mark.parametrize("main", [prog.stop_checked_after_timeout, prog.stop_without_drain])
def test_the_buggy_twins_still_fail(main: Callable[[], object]) -> None:
    result = _states(main)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == "assertion"


def test_a_poll_that_counts_its_timeouts_stays_bounded() -> None:
    """No state comes back: the cut at the limit is a real bound."""
    result = _states(prog.count_misses)
    assert result.verdict == "bounded" and result.bounded_by == ["timeout_limit=2"], result.report()


def test_a_poll_that_reads_the_clock_stays_bounded() -> None:
    """A read shows the clock: states that differ in it are not merged (the search starts again
    with the clock in the state at the first read)."""
    result = _states(prog.reading_the_clock)
    assert result.verdict == "bounded" and result.bounded_by == ["timeout_limit=2"], result.report()


def test_without_virtual_timeouts_the_deadlines_stay_in_the_state() -> None:
    """Timeouts then end earliest deadline first: the deadlines decide the future."""
    result = _states(prog.drain_after_stop, virtual_timeouts=False)
    assert result.verdict == "exhaustive", result.report()
    assert not any(note.startswith("timeout_limit=") for note in result.notes), result.notes


def test_a_livelock_of_timeouts_is_still_found() -> None:
    """Main polls the join, the worker polls an event nobody sets: once both are at the limit
    their timeouts fire when nothing else can run, for ever (a state met again on the path with
    other counters is not pruned)."""
    result = _states(prog.polling_for_ever)
    assert result.failure is not None and result.failure.kind == "livelock", result.report()


def test_a_bounded_search_keeps_the_outcomes_of_the_counted_search() -> None:
    """A state is not cut where an explored arrival had taken more timeouts: the outcomes that
    need two timeouts at two places are still reached (they were lost without that rule)."""
    result = _states(prog.peeking_poll)
    with patched(prog):
        want = check(
            lambda rt: (lambda value: lambda: value)(prog.peeking_poll()),
            Options(minimize=False, time_limit=120),
        )
    assert set(result.outcomes) == set(want.outcomes), (result.outcomes, want.outcomes)
    assert frozenset({0, 1, 2}) in result.outcomes


def test_explore_proves_the_poll_with_the_state_strategy() -> None:
    done = explore_command(f"{prog.__file__}:drain_after_stop", "--strategy", "states", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "exhaustive" and report["bounded_by"] == [], report
