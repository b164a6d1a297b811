"""Patch mode on what CPython keys by the OS thread, which the greenlet back end's controlled
threads share (seventh review, session 40): sqlite3's thread check, asyncio's current loop per
thread, ``redirect_stdout`` (process-wide), a signal handler (run in the main thread), a blocking
read of a socket or a pipe (it hung the check), and ``--json``'s stdout."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.thread_idents import MAIN_IDENT
from tests.harness import review7_one_thread_programs as prog
from tests.harness.explore_runs import explore_command
from tests.harness.patched_runs import assert_proved_race_free

pytestmark = pytest.mark.timeout(60)


def _run(program: Callable[[], None], **options: object) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=30, **options))  # type: ignore[arg-type]


def _fails_with(result: Result, words: str, kind: str | None = None) -> None:
    assert result.verdict == "failed" and result.failure is not None, result.report()
    if kind is not None:
        assert result.failure.kind == kind, result.report()
    assert words in result.report(), result.report()


# --------------------------------------------------------------------------------- sqlite3
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_a_connection_used_by_another_thread_fails_as_in_cpython(backend: str) -> None:
    _fails_with(
        _run(prog.sqlite_connection_used_by_a_worker, backend=backend),
        "ProgrammingError: SQLite objects created in a thread can only be used in that same thread. "
        # (the main thread's ident is the real main thread's since the eighth review: r114)
        f"The object was created in thread id {MAIN_IDENT} and this is thread id 1000001.",
    )


def test_a_cursor_used_by_another_thread_fails_as_in_cpython() -> None:
    _fails_with(
        _run(prog.sqlite_cursor_used_by_a_worker), "ProgrammingError: SQLite objects created in a thread"
    )


@pytest.mark.parametrize("program", [prog.sqlite_shared_without_the_check, prog.sqlite_connection_per_thread])
def test_connections_used_as_cpython_allows_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


# --------------------------------------------------------------------------------- asyncio
def test_a_workers_get_event_loop_fails_as_in_cpython() -> None:
    _fails_with(
        _run(prog.asyncio_loop_asked_for_in_a_worker),
        "RuntimeError: There is no current event loop in thread 'Thread-1 (w)'.",
    )


def test_each_thread_has_its_own_current_loop() -> None:
    assert_proved_race_free(_run(prog.asyncio_loop_of_each_thread))


# ------------------------------------------------------------------------- redirect_stdout
def test_a_print_inside_another_threads_redirect_is_found() -> None:
    _fails_with(_run(prog.print_inside_another_threads_redirect), "AssertionError: {'a': 'A\\nB\\n'}")


def test_a_print_locked_against_the_redirect_is_proved() -> None:
    assert_proved_race_free(_run(prog.print_locked_against_the_redirect))


# --------------------------------------------------------------------------------- signals
@pytest.mark.parametrize(
    "program",
    [
        prog.handler_records_its_thread,
        prog.pthread_kill_of_the_main_thread,
        prog.two_signals_while_main_waits,
    ],
)
def test_a_signal_handler_runs_in_the_main_thread(program: Callable[[], None]) -> None:
    before = signal.getsignal(signal.SIGUSR1)
    assert_proved_race_free(_run(program))
    assert signal.getsignal(signal.SIGUSR1) == before


def test_both_orders_of_two_signals_are_explored() -> None:
    # (with the check on, a bug in one order only: a program that assumes SIGUSR2's handler first)
    result = _run(prog.two_signals_while_main_waits)
    assert result.executions > 1, result.report()


def test_a_handler_interrupts_the_main_threads_wait_and_races_with_the_worker() -> None:
    _fails_with(_run(prog.handler_and_worker_update_a_counter), "data race on dict['n']", "data_race")


def test_a_handlers_steps_are_the_main_threads() -> None:
    result = _run(prog.handler_takes_the_lock_main_holds)
    _fails_with(result, "no thread can run; blocked: main", "deadlock")


# ------------------------------------------------------------------------- blocking reads
@pytest.mark.timeout(30)  # before session 40 each hung until killed
@pytest.mark.parametrize(
    "program",
    [prog.socket_reader_first, prog.pipe_reader_first, prog.local_server_and_client, prog.select_then_read],
)
def test_a_blocking_read_waits_for_the_writer(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


@pytest.mark.timeout(30)
def test_a_read_no_thread_will_satisfy_is_a_deadlock_naming_the_call() -> None:
    result = _run(prog.reader_waits_for_a_second_byte)
    _fails_with(result, "readable (recv)", "deadlock")


@pytest.mark.timeout(30)
def test_a_sockets_timeout_is_a_timed_wait() -> None:
    _fails_with(_run(prog.reader_with_a_timeout), "AssertionError: [None]")


@pytest.mark.timeout(30)
def test_a_selects_timeout_is_a_timed_wait() -> None:
    _fails_with(_run(prog.select_times_out), "AssertionError: [False]")


# ------------------------------------------------------------------------------- --json
@pytest.mark.timeout(120)
def test_json_output_is_the_json_only(tmp_path: Path) -> None:
    program = tmp_path / "printer.py"
    program.write_text(Path(prog.__file__).read_text())
    found = explore_command(f"{program}:prints_and_fails", "--json", cwd=Path.cwd(), timeout=100)
    assert found.returncode == 1, found.stderr
    facts = json.loads(found.stdout)  # the program's prints are not in it
    assert facts["failure"]["kind"] == "assertion"
    assert "CLOCK 1.0\n{not json\n" in found.stderr
