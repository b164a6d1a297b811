"""What session 45 stopped doing at every execution stays right when it matters: the ``random``
module's generator put back only when an execution moved it (``patch_state.Snapshot.restore``),
and ``ThreadPoolExecutor``'s counter one object for the whole ``patched`` block that counts from
0 in each execution and is the process's outside them (``patch_exit_calls._PoolCounter``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from model_checks.harness import check, patched
from tests.harness import session45_cost_programs as programs
from tests.harness.patched_runs import run_with_outcomes


@pytest.mark.timeout(120)
def test_an_execution_that_moved_the_module_generator_is_followed_by_one_that_starts_alike() -> None:
    result = run_with_outcomes(
        programs, programs.draws_from_the_module_generator_itself, races=False, strategy="dfs"
    )
    assert result.executions > 1, result.report()
    assert result.verdict == "exhaustive", result.report()
    assert len(result.outcomes) == 1, result.outcomes


def _prefix_number(pool: ThreadPoolExecutor) -> int:
    prefix = pool._thread_name_prefix
    assert prefix is not None
    return int(prefix.rsplit("-", 1)[1])


@pytest.mark.timeout(120)
def test_the_pool_counter_is_the_processs_outside_executions_and_after_the_block() -> None:
    process_counter = ThreadPoolExecutor.__dict__["_counter"]
    first = _prefix_number(ThreadPoolExecutor(1))
    _prefix_number(ThreadPoolExecutor(1))
    with patched(programs):
        result = check(lambda rt: programs.pool_name() and None, races=False)
        between = _prefix_number(ThreadPoolExecutor(1))  # (no execution runs: the process's count)
    assert result.verdict == "exhaustive", result.report()
    assert between == first + 2, (first, between)
    assert ThreadPoolExecutor.__dict__["_counter"] is process_counter
    assert _prefix_number(ThreadPoolExecutor(1)) == first + 3
