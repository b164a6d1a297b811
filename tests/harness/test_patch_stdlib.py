"""Patch mode beyond locks and conditions: ``Queue.join``/``task_done``, daemon threads, the
clocks, ``Timer``, ``PriorityQueue``, ``threading.local``, ``Barrier``, ``ThreadPoolExecutor`` and
``Thread`` subclasses defined before patching (tests/harness/stdlib_programs.py). Each correct
program is proved (exhaustive), each ``*_bug`` one is caught with the failure it has, and patching
leaves the standard library as it found it."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import Result, check
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies.search import DAEMON_CUT
from tests.harness import stdlib_programs as prog
from tests.harness.patched_runs import run_patched

pytestmark = pytest.mark.timeout(120)


_check = partial(run_patched, prog)


def _proved(program: Callable[[], None], **options: object) -> Result:
    result = _check(program, **options)
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive", result.report()
    return result


def _caught(program: Callable[[], None], kind: str, says: str = "", **options: object) -> Result:
    result = _check(program, **options)
    assert result.failure is not None, f"{program.__name__}: {result.report()}"
    assert result.failure.kind == kind, result.report()
    assert says in result.failure.message + result.failure.details, result.report()
    return result


@pytest.mark.parametrize(
    "program",
    [
        prog.daemon_is_inherited,
        prog.zero_timeout_tries,
        prog.clock_moves_with_sleep,
        prog.deadline_loop,
        prog.priority_queue_orders,
        prog.timer_fires,
        prog.local_per_thread,
        prog.local_made_at_import,
        prog.local_subclass_made_while_patched,
        prog.barrier_meets,
        prog.executor_two_submitters,
        prog.join_current_thread,
        prog.misuse_raises_as_threading_does,
    ],
    ids=lambda p: p.__name__,
)
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_correct_programs_are_proved(program: Callable[[], None], backend: str) -> None:
    _proved(program, backend=backend)


@pytest.mark.parametrize(
    "program", [prog.queue_join_daemon_workers, prog.thread_subclass_workers], ids=lambda p: p.__name__
)
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_daemon_workers_are_proved_by_dfs_and_bound_dpor(program: Callable[[], None], backend: str) -> None:
    # A daemon worker may not have reached its ``get`` when the main thread ends: DPOR never sees
    # what it does next, so its verdict is bounded by that, named; depth-first search runs each
    # daemon step by step in every order and proves the program.
    result = _check(program, backend=backend)
    assert result.failure is None and result.verdict == "bounded", result.report()
    assert result.bounded_by == [DAEMON_CUT], result.report()
    _proved(program, backend=backend, strategy="dfs")


def test_join_returning_before_the_work_is_recorded_is_caught() -> None:
    _caught(prog.queue_join_bug, "assertion")


def test_join_on_an_item_never_marked_done_is_a_deadlock_that_says_so() -> None:
    _caught(prog.queue_join_nobody_works, "deadlock", "1 item(s) not yet marked done")


def test_task_done_called_too_often_raises_as_the_real_queue_does() -> None:
    _caught(prog.task_done_too_often, "exception", "task_done() called too many times")


def test_a_non_daemon_thread_waiting_for_ever_is_still_a_deadlock() -> None:
    _caught(prog.non_daemon_waits_for_ever_bug, "deadlock")


def test_a_daemon_thread_able_to_run_at_exit_bounds_dpor_by_name() -> None:
    # No livelock at max_steps: once the main thread is done, the spinning daemon is left. But
    # what it does next is never seen, so DPOR cannot say where it should have run earlier: the
    # verdict is bounded, by that name, and never "exhaustive" (the next test's bug hides there).
    result = _check(prog.daemon_left_spinning)
    assert result.failure is None and result.executions == 1, result.report()
    assert result.verdict == "bounded" and result.bounded_by == [DAEMON_CUT], result.report()


@pytest.mark.parametrize("strategy", ["dpor", "dpor-ipb"])
def test_a_daemon_racing_the_main_thread_is_no_proof_for_dpor_and_is_caught_by_dfs(strategy: str) -> None:
    # Measured before the bound: "exhaustive" after 1 execution, the daemon never run.
    result = _check(prog.daemon_races_main_bug, strategy=strategy)
    assert result.verdict == "bounded" and DAEMON_CUT in result.bounded_by, result.report()
    _caught(prog.daemon_races_main_bug, "assertion", strategy="dfs")


def test_a_timer_that_fires_too_early_for_the_program_is_caught() -> None:
    _caught(prog.timer_race_bug, "assertion")


def test_a_cancelled_timer_may_fire_first_unless_timeouts_wait_for_idleness() -> None:
    # with virtual timeouts a timed wait may end at any point: the call can come before the
    # cancel, as a main thread delayed for 5 s would see; without them it ends only when nothing
    # else can run, by which time the cancel has run
    _caught(prog.timer_cancelled, "assertion")
    _proved(prog.timer_cancelled, virtual_timeouts=False)


def test_a_barrier_short_of_parties_deadlocks() -> None:
    _caught(prog.barrier_short_of_parties_bug, "deadlock")


def test_a_lost_update_in_executor_tasks_is_a_data_race() -> None:
    _caught(prog.executor_lost_update_bug, "data_race", "Tally.count")


def test_a_local_subclass_defined_before_patching_has_a_namespace_per_thread() -> None:
    # (it was refused, "define it while patched", which ``lanecheck explore`` cannot do: review 8,
    # r033; its object made in a controlled thread is now one namespace per controlled thread)
    _proved(prog.local_subclass_from_import)


def test_executor_callbacks_told_their_execution_is_gone_report_nothing() -> None:
    # a worker's weakref callback puts to a controlled queue after its execution ended: the
    # harness's own Abort, not the program's error, so it reaches no unraisable hook
    seen: list[BaseException | None] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda info: seen.append(info.exc_value)
    try:
        _check(prog.executor_maps, max_executions=30)
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert seen == []


def test_patching_restores_what_it_changed() -> None:
    real = (threading.Thread, threading.Timer, threading.local, prog.Worker.__bases__)
    _proved(prog.thread_subclass_workers, strategy="dfs")
    _proved(prog.local_subclass_from_import)  # (its objects made while patched: per thread)
    assert (threading.Thread, threading.Timer, threading.local, prog.Worker.__bases__) == real
    assert "__new__" not in vars(prog.ImportedCounter)
    assert "__getattribute__" not in vars(prog.ImportedCounter)  # (their hooks are gone too)
    prog.ImportedCounter()  # outside patching the real class works again
    futures_thread = sys.modules["concurrent.futures.thread"]
    assert not any(type(t).__module__.startswith("model_checks") for t in futures_thread._threads_queues)
    assert type(prog.TLS).__module__ == "_thread" and prog.TLS.where == "set at import"


def test_a_daemon_thread_of_the_runtime_api_is_left_where_it_waits() -> None:
    def program(rt: ControlledRuntime) -> None:
        never = rt.event()

        def waiter() -> None:
            never.wait()

        rt.start_thread(waiter, "waiter", daemon=True)

    # Not yet started when the main thread ends: DPOR cannot tell what it would do (bounded, by
    # name); depth-first search runs it to its wait and proves the program.
    bounded = check(program)
    assert bounded.failure is None and bounded.bounded_by == [DAEMON_CUT], bounded.report()
    result = check(program, strategy="dfs")
    assert result.failure is None and result.verdict == "exhaustive", result.report()


def test_threads_are_named_as_threading_names_them_in_a_report() -> None:
    # the deadlock's message names each thread; they all read one name before
    _caught(
        prog.philosophers_bug, "deadlock", "blocked: main, Thread-1 (eat), Thread-2 (eat), Thread-3 (eat)"
    )
