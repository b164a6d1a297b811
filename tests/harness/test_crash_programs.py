"""Patch mode on the seventh review's crashes and refusals: a settings proxy whose ``__getattr__``
raises, a signal handler installed in a worker, ``pthread_kill`` of a controlled thread, a trace or
profile function the program sets, ``os._exit``."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import crash_programs as prog
from tests.harness.patched_runs import assert_proved_race_free


def _run(program: Callable[[], None]) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=60))


@pytest.mark.timeout(120)
def test_a_module_global_whose_getattr_raises_is_no_crash() -> None:
    assert_proved_race_free(_run(prog.settings_read_under_a_lock))


@pytest.mark.timeout(120)
def test_a_signal_handler_installed_in_a_worker_fails_as_in_cpython() -> None:
    result = _run(prog.handler_installed_in_a_worker)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert "ValueError: signal only works in main thread of the main interpreter" in result.report()


@pytest.mark.timeout(120)
def test_a_signal_handler_installed_in_main_is_proved() -> None:
    before = signal.getsignal(signal.SIGUSR1)
    assert_proved_race_free(_run(prog.handler_installed_in_main))
    assert signal.getsignal(signal.SIGUSR1) == before


@pytest.mark.timeout(120)
def test_pthread_kill_of_a_controlled_thread_is_delivered_as_in_cpython() -> None:
    # (refused by name until session 40, which models the delivery: ``patch_signals``) SIGUSR1
    # with no handler: its default action ends the process, as the real run's does
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    result = _run(prog.signal_sent_to_the_main_thread)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert "ProcessExit: SIGUSR1's default action ends the process here" in result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("program", "name"),
    [
        (prog.trace_function_set_in_a_worker, "sys.settrace"),
        (prog.profile_hook_for_new_threads, "threading.setprofile"),
    ],
)
def test_a_trace_or_profile_function_of_the_program_is_refused(
    program: Callable[[], None], name: str
) -> None:
    before = sys.gettrace(), threading.getprofile()
    with pytest.raises(UsageError, match=rf"{name}\(\) in the explored code"):
        _run(program)
    assert (sys.gettrace(), threading.getprofile()) == before  # the process's own are untouched


@pytest.mark.timeout(120)
def test_os_exit_in_explored_code_is_the_threads_failure() -> None:
    result = _run(prog.watchdog_exits_the_process)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert "ProcessExit: os._exit(3): a real run ends the process here" in result.report()
