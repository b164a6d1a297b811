"""Patch mode does what a real run does (session 37's outside review; each was "exhaustive", or no
verdict at all, before): the functions' mutable defaults and closures start each execution as the
module made them, an object's finalizer runs when its last reference goes (the race detector keeps
only its fields alive), a ``KeyboardInterrupt`` raised by the program in a thread is that thread's
exception (not the user's Ctrl-C, which ended lanecheck with status 130 and no verdict), and an
endless loop over local variables is a livelock (it ran past the time limit)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from tests.harness import real_run_programs as prog
from tests.harness.patched_runs import run_patched

run = partial(run_patched, prog)


@pytest.mark.timeout(60)
def test_multiprocessings_thread_pool_is_refused_not_hung_on() -> None:
    from model_checks.harness.rt.scheduler import UsageError

    with pytest.raises(UsageError, match=r"multiprocessing\.pool's pools wait on real pipes"):
        run(prog.multiprocessing_thread_pool, time_limit=10)


@pytest.mark.timeout(60)
def test_a_real_ctrl_c_still_stops_the_check() -> None:
    """The program's own ``KeyboardInterrupt`` is its thread's exception; the user's Ctrl-C (a
    SIGINT) is not a finding about the program: it stops the check, as before."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(prog.ctrl_c_pressed)
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["dfs", "dpor-ipb"])
@pytest.mark.parametrize("program", [prog.cached_property_built_once, prog.cached_property_made_inside])
def test_a_cached_propertys_lock_is_controlled(program: Callable[[], object], strategy: str) -> None:
    """Plain DFS runs the schedule where the second thread reads the property while the first
    computes it: the real lock let it in (two clients built, a false alarm)."""
    result = run(program, strategy=strategy, time_limit=60)
    assert result.verdict == "exhaustive", result.report()
