"""Review 11, #16: ``fcntl.flock`` on separately opened descriptors of one lock file excludes the
threads of one process. The check hung for ever on the real call (a second controlled thread's
blocking ``flock`` blocked the one OS thread) or reported a false data race (no happens-before);
now it is a controlled lock of the file (``patch_flock``). ``lockf`` (the process's record locks)
still excludes no thread: a race."""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable

import pytest

from model_checks.harness import Options
from model_checks.harness.options import Strategy
from tests.harness import patched_runs as runs
from tests.harness import review11_flock_programs as prog

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
@pytest.mark.parametrize(
    "program",
    [prog.mutex_truncating, prog.mutex_appending, prog.released_by_close, prog.released_by_os_close],
)
def test_a_counter_under_flock_is_proved(program: Callable[[], int], strategy: Strategy) -> None:
    """u18 (``"w"``: two truncations of the empty lock file are no race), u18b, and the lock let go
    by closing the file (the end of ``with``; ``os.close``) rather than ``LOCK_UN``."""
    runs.assert_proved_returning(runs.run_with_outcomes(prog, program, strategy=strategy), 2, 2)


def test_two_holders_converting_shared_to_exclusive_do_not_deadlock() -> None:
    """f03: the model kept the shared lock while waiting for the exclusive one (a deadlock)."""
    runs.assert_proved_returning(runs.run_with_outcomes(prog, prog.two_upgrades), 2, 2)


def test_a_counter_under_flock_is_proved_with_interleaved_races() -> None:
    """u18b with ``--interleave-races``: it hung (no verdict after 200 s), holding the real lock."""
    runs.assert_proved_returning(
        runs.run_with_outcomes(prog, prog.mutex_appending, interleave_races=True), 2, 2
    )


def test_a_thread_that_skips_the_flock_still_races() -> None:
    result = runs.run_patched(prog, prog.one_side_unlocked, options=Options(time_limit=60))
    runs.assert_race(result, prog, "list[0]", "n[0] = v + 1")


def test_two_shared_holders_still_race() -> None:
    """Two ``LOCK_SH`` holders are ordered by nothing (their operations are reads of the lock)."""
    result = runs.run_patched(prog, prog.shared_holders_bump, options=Options(time_limit=60))
    runs.assert_race(result, prog, "list[0]", "n[0] = v + 1")


def test_lock_nb_while_held_raises_blocking_io_error() -> None:
    runs.assert_outcomes(runs.run_with_outcomes(prog, prog.try_lock), {(f"refused {errno.EAGAIN}",)})


def test_shared_locks_are_held_at_once_and_order_the_writer() -> None:
    runs.assert_proved_returning(runs.run_with_outcomes(prog, prog.shared_then_exclusive), 1, 3)
    runs.assert_outcomes(runs.run_with_outcomes(prog, prog.two_readers_hold_at_once), {"both"})


def test_two_flocks_taken_in_opposite_orders_deadlock() -> None:
    result = runs.run_patched(prog, prog.two_flocks_deadlock, options=Options(time_limit=60))
    runs.assert_reported(
        result, "deadlock", "blocked in wait() on flock of", "second.lck (LOCK_EX by descriptor"
    )


def test_lockf_excludes_no_thread_of_the_process() -> None:
    """u19: a blocking ``lockf`` is the real call (one thread's never waits for another's): the
    lost update is reported, and the check ends."""
    result = runs.run_patched(prog, prog.lockf_mutex, options=Options(time_limit=60))
    runs.assert_race(result, prog, "list[0]", "n[0] = v + 1")


def test_the_profile_function_is_gone_after_the_check() -> None:
    """A deadlock leaves both holders unwound unseen: the profile function that watches for a
    holder's close must not stay set after the check (it would slow every later call)."""
    runs.run_patched(prog, prog.two_flocks_deadlock, options=Options(time_limit=60))
    len([])  # (any call: the first event after the execution unsets it)
    assert sys.getprofile() is None


@pytest.mark.parametrize(("strategy", "by_raising"), [("dpor-ipb", False), ("dfs", False), ("dfs", True)])
def test_a_release_by_close_is_ordered_with_a_try(strategy: Strategy, by_raising: bool) -> None:
    """The close at a ``with`` block's end is an operation (in the profile function), so DPOR also
    runs the try between the holder's ``flock`` and its close. Left by an exception, the close is
    found after its step and frees the lock then (no operation: only dfs is sure to reach both)."""
    result = runs.run_with_outcomes(prog, lambda: prog.try_against_a_holder(by_raising), strategy=strategy)
    runs.assert_outcomes(result, {"taken", "refused"})
