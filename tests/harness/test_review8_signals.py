"""Review 8's signal rows in patch mode (session 41): r091, a handler run in the main thread by
interrupting its ``Condition.wait`` (the wait went on unnotified: a false deadlock), and r085,
``pthread_sigmask`` and the ``sigwait`` family (``pthread_kill`` of a worker in ``sigwait`` was
SIGUSR2's default action: a false ``ProcessExit``), with buggy twins the check must still catch.
Each program's real outcome (CPython 3.11, Linux) is in its docstring."""

from __future__ import annotations

import re
import signal
from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review8_signal_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_reported

pytestmark = pytest.mark.timeout(60)


def _run(program: Callable[[], None]) -> Result:
    before = signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2)
    with patched(prog):
        result = check(lambda rt: program(), Options(time_limit=30))
    # (the model's masks and handlers never reach the real process)
    assert (signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2)) == before
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()
    return result


# ------------------------------------------------------------------ a handler during Condition.wait
@pytest.mark.parametrize(
    "program",
    [
        prog.handler_notifies_the_waiting_main,
        prog.notify_before_the_handler_runs,  # the wait returns; the handler runs after it
        prog.handler_raises_in_mains_condition_wait,  # the wait reacquires, leaves the wait set
    ],
)
def test_a_handler_during_mains_condition_wait_runs_as_in_cpython(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


def test_r091_as_written_loses_the_notify_when_the_handler_runs_before_the_wait() -> None:
    result = _run(prog.handler_may_run_before_mains_wait)
    assert_reported(result, "deadlock", "blocked: main", "waiting for a notify")
    # the handler ran (its notify is in the trace) before main's wait put it in the wait set
    report = result.report()
    assert report.index("notify_all() condition") < report.rindex("wait() condition"), report
    # main's stack in the report is the program's (its wait announced again after the handler)
    assert re.search(r"in handler_may_run_before_mains_wait\n +c\.wait\(\)", report), report


@pytest.mark.parametrize(
    "program",
    [
        prog.handler_sets_the_flag_without_a_notify,  # the interrupted wait goes on
        prog.handler_takes_a_lock_main_holds_while_waiting,  # the handler's steps are main's
        prog.a_workers_raise_signal_leaves_mains_wait_asleep,  # a worker's signal wakes no wait
    ],
)
def test_a_handler_that_cannot_end_the_wait_is_a_deadlock(program: Callable[[], None]) -> None:
    assert_reported(_run(program), "deadlock", "blocked: main")


# ----------------------------------------------------------------------- masks and sigwait
@pytest.mark.parametrize(
    "program",
    [
        prog.sigwait_for_a_signal_pthread_kill_sends,
        prog.sigwaitinfo_for_a_signal_sent_to_the_process,
        prog.a_blocked_signal_waits_for_its_unblocking,
        prog.sigtimedwait_times_out,
    ],
)
def test_masks_and_sigwait_as_in_cpython_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


def test_a_sigwait_for_a_signal_never_sent_is_a_deadlock_naming_it() -> None:
    result = _run(prog.sigwait_for_a_signal_never_sent)
    # (the thread is named after its target as CPython names it: ``sigwait``)
    assert_reported(
        result, "deadlock", "blocked: main, Thread-1 (sigwait)", "signal SIGUSR2 (signal.sigwait)"
    )


def test_a_mask_set_after_a_thread_started_is_not_its_mask() -> None:
    assert_reported(
        _run(prog.mask_set_after_the_worker_started),
        "exception",
        "ProcessExit: SIGUSR2's default action ends the process",
    )


def test_a_handler_a_workers_unblocking_delivers_runs_at_any_step_of_main() -> None:
    # (the unblocking is dependent with main's steps, as a send is: DPOR moves it inside main's
    # ``with lk``)
    assert_reported(_run(prog.worker_unblocks_while_main_holds_the_lock), "deadlock", "blocked: main")


def test_a_signal_two_kinds_of_thread_could_take_is_refused_by_name() -> None:
    with pytest.raises(UsageError, match=r"os\.kill\(os\.getpid\(\), 12\) while threads .* sigwait"):
        _run(prog.a_sigwaiter_and_an_unblocked_worker_could_each_take_it)


def test_a_handler_gets_the_senders_frame() -> None:
    assert_proved_race_free(_run(prog.handlers_frame_is_the_senders))


@pytest.mark.parametrize(
    ("program", "words"),
    [
        (prog.pause_in_a_worker, r"signal\.pause\(\) in a controlled thread"),
    ],
)
def test_what_is_not_modelled_is_refused_by_name(program: Callable[[], None], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        _run(program)
