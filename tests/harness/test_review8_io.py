"""Review 8: blocking calls that hung patch mode (no verdict, killed after 200 s). On the greenlet
back end the controlled threads share one OS thread, so a worker blocked for real in a call the
harness did not model blocked the thread that would have ended its wait: ``select.poll`` and
``select.epoll`` (r017, r020), ``recv(n, MSG_WAITALL)`` once some bytes were there (r021), a
``multiprocessing.Pipe`` between threads (r124), ``os.read`` of a pty (r122) are now controlled
waits; opening a FIFO (r084), which blocks in the kernel until its other end is opened, is refused
by name before it blocks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review8_io_programs as prog
from tests.harness.patched_runs import assert_proved_race_free

pytestmark = pytest.mark.timeout(60)


def _run(program: Callable[[], object], **options: object) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=30, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "program",
    [
        prog.poll_on_a_pipe,
        prog.epoll_on_a_socket,
        prog.recv_waitall_in_two_pieces,
        prog.recv_into_waitall_in_two_pieces,
        prog.multiprocessing_pipe_between_threads,
        prog.multiprocessing_pipe_poll,
        prog.pty_read,
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_blocking_wait_is_a_controlled_wait(program: Callable[[], None], strategy: str) -> None:
    result = _run(program, strategy=strategy)
    assert_proved_race_free(result)
    assert result.executions >= 2, result.report()  # the worker waited in some, not in others


def test_a_polls_timeout_is_a_timed_wait() -> None:
    assert_proved_race_free(_run(prog.poll_times_out))


def test_opening_a_fifo_in_a_controlled_thread_is_refused_by_name() -> None:
    with pytest.raises(UsageError, match=r"FIFO .*blocks .*until"):
        _run(prog.fifo_opened_by_a_worker)


# -------------------------------------------------------------- a signal from a worker (r030)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "dfs"])
def test_a_signal_sent_while_main_holds_the_handlers_lock_is_found(strategy: str) -> None:
    result = _run(prog.handler_takes_a_lock_main_takes_in_a_loop, strategy=strategy)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == "deadlock", result.report()


def test_dpor_sees_every_point_the_handler_can_run_at_as_dfs_does() -> None:
    by = {s: _run(prog.where_the_handler_ran, strategy=s) for s in ("dpor-ipb", "dpor", "dfs")}
    for strategy, result in by.items():
        assert_proved_race_free(result)
        assert result.outcomes == by["dfs"].outcomes, (strategy, result.outcomes, by["dfs"].outcomes)
    assert by["dfs"].outcomes == {0, 1, 2, 3}, by["dfs"].outcomes


# ------------------------------------------------- print(file=buf) where redirect_stdout is named
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor"])
def test_a_print_to_a_buffer_is_a_write_of_it_where_redirect_is_named(strategy: str) -> None:
    result = _run(prog.prints_to_one_buffer_where_redirect_is_named, strategy=strategy)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert "data race on StringIO" in result.report() and "print(StringIO)" in result.report(), (
        result.report()
    )
