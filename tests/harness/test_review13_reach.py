"""Review 13, F5, F6, F7, A5 and A8: what a controlled thread reaches of CPython's per-thread
machinery, and two paths to a location the race detector did not see.

F5: thread idents were never given again, so sessions kept by ``get_ident()`` and never removed
were proved apart (a real run's next thread takes the dead one's ident). F6: ``cell.cell_contents``
against ``nonlocal``, and a slot's descriptor called against ``c.n``, were no race. F7:
``sys.gettrace()`` in a worker was the race detector's tracer (a timeout turned off "under a
debugger" was off in every execution). A5: ``PyThreadState_SetAsyncExc`` of a controlled thread
found no thread; it is refused by name. A8: ``signal.getsignal(SIGINT)`` was lanecheck's Ctrl-C
watcher, not Python's default handler."""

from __future__ import annotations

import pytest

from model_checks.harness import Options
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review13_reach_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_proved_race_free,
    assert_proved_returning,
    assert_race,
    run_patched,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(120)


def test_a_session_kept_by_ident_is_found_by_the_next_thread() -> None:
    result = run_patched(prog, prog.sessions_kept, options=Options(time_limit=60))
    assert_fails(result, "exception", "got the session of a finished thread: 'Thread-1 (session)'")


def test_sessions_removed_at_the_threads_end_are_proved() -> None:
    assert_proved_race_free(run_patched(prog, prog.sessions_removed, options=Options(time_limit=60)))


def test_a_race_on_a_key_that_is_two_threads_ident_says_it_was_given_again() -> None:
    failure = assert_race(
        run_patched(prog, prog.buffers_by_ident), prog, "dict[1000001]", "buffers[threading.get_ident()]"
    )
    assert (
        "1000001 is threading.get_ident() of both: Thread-2 (worker) was started after Thread-1 (worker)"
        in failure.message
    ), failure.message


def test_a_race_on_a_number_no_thread_had_as_ident_says_nothing_of_idents() -> None:
    failure = assert_race(
        run_patched(prog, prog.buffers_by_number), prog, "dict[1000001]", "buffers[1_000_001] = word"
    )
    assert "get_ident" not in failure.message, failure.message


def test_idents_are_given_again_as_cpythons_are() -> None:
    result = run_with_outcomes(prog, prog.idents_given_again)
    # (session 46: where ``first`` ends before ``second`` is started, ``second`` takes its ident,
    # as in CPython; one execution, ``second`` started first, until the starts and ends were
    # ordered both ways)
    assert_outcomes(result, {(True, True, True, True), (True, False, True, True)})


def test_a_cells_contents_race_with_its_nonlocal() -> None:
    result = run_patched(prog, prog.cell_unlocked, options=Options(time_limit=60))
    assert_race(result, prog, "closure variable n", "cell.cell_contents = v", "v = n")


def test_a_cells_contents_under_the_lock_are_proved() -> None:
    assert_proved_race_free(run_patched(prog, prog.cell_locked, options=Options(time_limit=60)))


@pytest.mark.parametrize(
    ("how", "site"),
    [
        ("method", "lambda v: slot.__set__(c, v)"),
        ("bound", "lambda v: set_n(c, v)"),
        ("unbound", "lambda v: type(slot).__set__(slot, c, v)"),
    ],
)
def test_a_slots_descriptor_races_with_the_attribute(how: str, site: str) -> None:
    result = run_patched(prog, lambda: prog.slot_unlocked(how), options=Options(time_limit=60))
    assert_race(result, prog, "Slotted.n", site, "lambda: c.n")


def test_a_slots_descriptor_under_the_lock_is_proved() -> None:
    assert_proved_race_free(run_patched(prog, prog.slot_locked, options=Options(time_limit=60)))


def test_a_timeout_turned_off_under_a_debugger_times_out() -> None:
    result = run_patched(prog, prog.timeout_off_under_debugger, options=Options(time_limit=60))
    assert_fails(result, "assertion", "timed out")


def test_a_worker_sees_no_trace_function_and_pythons_sigint_handler() -> None:
    assert_proved_returning(run_with_outcomes(prog, prog.hooks_seen), (None, None, True), 1)


def test_an_exception_sent_to_a_controlled_thread_is_refused_by_name() -> None:
    with pytest.raises(
        UsageError, match=r"PyThreadState_SetAsyncExc\(1000001, \.\.\.\) of the explored code's"
    ):
        run_patched(prog, prog.async_exception, options=Options(time_limit=60))
