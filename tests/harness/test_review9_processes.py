"""Review 9: processes in patch mode (``review9_children_programs.py``). Forking in a controlled
thread (s08, s16, s07) ran the checker on in the child, printed its verdicts and hung the parent:
refused by name. A ``multiprocessing.Lock`` between threads (s25) and ``selectors`` (s10, s36)
blocked the one OS thread: controlled now. A child's pipe answering after 0.5 s was a "deadlock"
(s41) and ``subprocess.run(timeout=...)`` was "not deterministic" (s12): real-time waits for the
child now, bounded by the time limit."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review9_children_programs as prog
from tests.harness.patched_runs import assert_proved_race_free

pytestmark = pytest.mark.timeout(90)


def _run(program: Callable[[], object], **options: object) -> Result:
    options.setdefault("time_limit", 40)
    with patched(prog):
        return check(lambda rt: program(), Options(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("program", "refused"),
    [
        (
            prog.fork_in_a_worker,
            r"os\.fork\(\) in a controlled thread: the child would be a copy of the checker",
        ),
        (prog.fork_process_in_a_worker, r"multiprocessing's Process\.start\(\) in a controlled thread"),
        (prog.spawn_process_in_a_worker, r"multiprocessing's Process\.start\(\) in a controlled thread"),
        (prog.process_pool_in_a_worker, r"ProcessPoolExecutor in a controlled thread: .*ThreadPoolExecutor"),
        (
            prog.mp_lock_sent_to_another_process,
            r"multiprocessing Lock made in a controlled thread .*another process",
        ),
    ],
)
def test_forking_in_a_controlled_thread_is_refused_by_name(program: Callable[[], None], refused: str) -> None:
    with pytest.raises(UsageError, match=refused):
        _run(program)


@pytest.mark.parametrize(
    "program",
    [
        prog.subprocess_beside_a_lock,  # fork_exec is not a fork of the checker: not refused
        prog.mp_lock_with_a_sleep_inside,
        prog.mp_rlock_taken_twice_with_a_timeout,
        prog.mp_semaphore_lets_one_in,
        prog.mp_event_and_condition,
        prog.default_selector_on_a_socketpair,
        prog.socketserver_request,
        prog.subprocess_with_a_timeout,
    ],
)
def test_a_correct_program_is_proved(program: Callable[[], None]) -> None:
    result = _run(program)
    assert_proved_race_free(result)
    assert result.executions >= 2, result.report()  # the threads did interleave


def test_a_selector_wait_no_thread_can_end_is_a_deadlock() -> None:
    result = _run(prog.poll_selector_nobody_writes)
    assert result.failure is not None and result.failure.kind == "deadlock", result.report()
    assert "selector.select" in result.report(), result.report()


def test_a_childs_pipe_slower_than_the_grace_is_waited_for() -> None:
    result = _run(prog.read_a_slow_childs_pipe)
    assert_proved_race_free(result)


def test_a_wait_for_a_child_past_the_time_limit_bounds_the_verdict() -> None:
    result = _run(lambda: prog.read_a_slow_childs_pipe(delay=30), time_limit=1.5)
    assert result.verdict == "bounded" and result.failure is None, result.report()
    assert any("real-time wait for another process (os.read" in cut for cut in result.bounded_by), (
        result.bounded_by
    )
    assert result.elapsed < 10, result.elapsed


def test_a_pipe_only_this_process_can_write_is_still_a_deadlock() -> None:
    result = _run(prog.read_own_pipe_nobody_writes)
    assert result.failure is not None and result.failure.kind == "deadlock", result.report()


def test_subprocess_timeout_expires_in_real_time() -> None:
    assert_proved_race_free(_run(prog.subprocess_that_times_out))


def test_a_multiprocessing_values_lost_update_is_still_found() -> None:
    """Its own lock is a controlled one (session 42): each read and each write under it is a
    scheduling point, and the schedule losing an update is run (``test_review10_mp2.py``)."""
    result = _run(prog.mp_value_lost_update)
    assert result.failure is not None, result.report()
    assert result.failure.kind in ("data_race", "assertion"), result.report()
