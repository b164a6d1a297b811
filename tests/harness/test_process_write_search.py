"""The search's side of the process-state watch (docs/harness.md, "Process-wide state"): a step
found to change process state only when it ends is raced then with the earlier steps of other
threads, and the state search takes no fingerprint once an execution changed it (the
fingerprint reads no C state). Each test fails without the piece it names (session 44: the two
had been kept without one)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness.options import Options
from model_checks.harness.patch import patched
from model_checks.harness.stateful import StatefulResult, check_states
from tests.harness import process_write_search_programs as prog
from tests.harness.patched_runs import run_with_outcomes

pytestmark = pytest.mark.timeout(240)

BOTH = {prog.ORIGINAL_CTYPE, prog.OTHER_CTYPE}


def _states(module: object, main: Callable[[], object]) -> StatefulResult:
    with patched(module):  # type: ignore[arg-type]
        result = check_states(lambda rt: (lambda value: lambda: value)(main()), Options(minimize=False))
    assert isinstance(result, StatefulResult)
    return result


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "states"])
def test_a_change_seen_when_its_step_ends_is_raced_with_the_read_run_before_it(strategy: str) -> None:
    """Without the analysis at the step's end (``SearchChooser.after_step``: ``_races_of`` of the
    step as a global one), dpor-ipb ran one execution and proved the one value."""
    if strategy == "states":
        result: object = _states(prog, prog.reader_started_first)
    else:
        result = run_with_outcomes(prog, prog.reader_started_first, strategy=strategy)
    assert result.verdict == "exhaustive", result.report()  # type: ignore[attr-defined]
    assert set(result.outcomes) == BOTH  # type: ignore[attr-defined]


def test_states_that_differ_only_in_process_state_are_not_taken_for_one() -> None:
    """Without "no fingerprint after a change" (``StatefulChooser.choose``), the second order of
    the writers met the first's state (equal objects and positions, another locale) and was cut
    there: one value, "exhaustive"."""
    result = _states(prog, prog.last_writer_read_later)
    assert result.verdict == "exhaustive", result.report()
    assert set(result.outcomes) == BOTH
    assert result.unhashed > 0  # (the states after a change, not fingerprinted)
