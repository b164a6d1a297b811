"""``multiprocessing``'s locks, semaphores, conditions, events, barriers, ``Value`` and ``Array``
made at import stand in for controlled twins (``harness/patch_mp_imported.py``; docs/harness.md,
"Refused, not hung on"). Before session 42 they stayed real: a switch inside a critical section
hung the check on the real lock (``review10_mp_programs.py``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import check, patched
from model_checks.harness.patch_imported import StandIn
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review10_mp_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_proved_returning,
    module_from_source,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(60)

run = partial(run_with_outcomes, prog, time_limit=30)


@pytest.fixture(autouse=True)
def _memory_at_zero() -> None:
    """Each check starts from the memory made at import as a fresh interpreter has it: a
    ``Value``'s memory is the real one (``test_review10_mp3.py``), and a check ends with its last
    execution's writes, as a ``RawValue``'s and a module's list do."""
    prog.COUNT.get_obj().value = 0
    prog.CELLS.get_obj()[:] = [0, 0]


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.lock_counter, 4),
        (prog.rlock_in_a_class_body, 2),
        (prog.lock_of_an_object_made_at_import, 2),
        (prog.semaphores, 2),
        (prog.condition_hand_off, 7),
        (prog.event_hand_off, 7),
        (prog.barrier_meeting, 3),
        (prog.value_under_its_lock, 4),
        (prog.array_under_its_lock, 2),
    ],
)
def test_a_correct_program_is_proved(program: Callable[[], int], outcome: int) -> None:
    assert_proved_returning(run(program), outcome, 2)


@pytest.mark.parametrize(
    ("program", "outcome"),
    [(prog.lock_counter, 4), (prog.rlock_in_a_class_body, 2), (prog.value_under_its_lock, 4)],
)
def test_a_switch_inside_the_critical_section_does_not_hang(program: Callable[[], int], outcome: int) -> None:
    """With the race detector off nothing stops the first execution before its switch inside the
    critical section: the next thread's acquire of the real lock blocked the OS thread (s25)."""
    result = run(program, races=False)
    assert result.verdict == "exhaustive" and result.failure is None, result.report()
    assert_outcomes(result, {outcome})


@pytest.mark.parametrize(
    ("program", "line"),
    [
        (prog.lock_in_one_thread_only, "seen = box[0]"),
        (prog.value_lost_update, "COUNT.value += 1"),  # (the value's own accesses: a race still)
        (prog.array_lost_update, "seen = CELLS[0]"),
    ],
)
def test_a_lost_update_is_found(program: Callable[[], int], line: str) -> None:
    result = run(program)
    assert_fails(result, "data_race")
    assert line in result.report(), result.report()


@pytest.mark.parametrize(
    "program", [prog.value_lost_update, prog.array_lost_update, prog.lock_in_one_thread_only]
)
def test_a_lost_update_is_found_by_the_schedules_alone(program: Callable[[], int]) -> None:
    """With the race detector off, the value's lock's operations are scheduling points: the
    interleaving that loses an update is run."""
    assert_fails(run(program, races=False), "assertion")


def test_a_lock_order_inversion_is_a_deadlock() -> None:
    result = run(prog.lock_order_inversion)
    assert_fails(result, "deadlock")


def test_the_real_objects_serve_outside_executions_and_come_back() -> None:
    real_lock, real_count = prog.LOCK, prog.COUNT
    with patched(prog):
        assert isinstance(prog.LOCK, StandIn) and isinstance(prog.GUARDED.lock, StandIn)
        assert isinstance(prog.Store.__dict__["_rlock"], StandIn) and isinstance(prog.COUNT, StandIn)
        with prog.LOCK:  # outside a controlled thread: the real lock
            assert not real_lock.acquire(False)
        assert real_lock.acquire(False)
        real_lock.release()
        check(lambda rt: prog.value_under_its_lock() and None)
        # (the executions wrote its one memory, each starting from 0: only its lock had twins)
        assert real_count.value == prog.COUNT.value == 4
    assert prog.LOCK is real_lock and prog.COUNT is real_count


_HELD = """
import multiprocessing
HELD = multiprocessing.{kind}
HELD.{call}()
"""


@pytest.mark.parametrize(
    ("kind", "call", "refused"),
    [
        ("Lock()", "acquire", r"HELD is a multiprocessing Lock held when patching began"),
        ("RLock()", "acquire", r"HELD is a multiprocessing RLock held when patching began"),
        ("BoundedSemaphore(2)", "acquire", r"BoundedSemaphore acquired at import \(1 of 2 left\)"),
        ("Barrier(2)", "abort", r"HELD is a multiprocessing Barrier broken or waited on at import"),
    ],
)
def test_what_no_fresh_object_can_start_as_is_refused_by_name(kind: str, call: str, refused: str) -> None:
    module = module_from_source(_HELD.format(kind=kind, call=call), "review10_held", "<review10>")
    with pytest.raises(UsageError, match=refused), patched(module):
        pass


def test_a_programs_subclass_made_at_import_is_refused_by_name() -> None:
    source = (
        "import multiprocessing\nfrom multiprocessing import synchronize\n"
        "class Flag(synchronize.Event):\n    pass\n"
        "FLAG = Flag(ctx=multiprocessing.get_context())\n"
    )
    module = module_from_source(source, "review10_subclass", "<review10>")
    with (
        pytest.raises(UsageError, match=r"FLAG is a Flag \(a subclass of multiprocessing's Event\)"),
        patched(module),
    ):
        pass
