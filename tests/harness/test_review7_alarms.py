"""The seventh outside review's false alarms (session 40): correct programs that patch mode
failed, each now explored to the outcomes a real run can give (``review7_alarms_programs.py``)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.heap_walk import _Canon
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import check_states
from model_checks.harness.sync import primitives
from tests.harness import review7_alarms_programs as prog

pytestmark = pytest.mark.timeout(120)


def _run(program: Callable[[], object], **options: object) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=60, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.daemon_after_start, {("cannot set daemon status of active thread", False, True)}),
        (prog.dummy_thread, {("Thread-1 (print)", "Dummy-2", True, True, True, True, True)}),
        (prog.current_frames, {(True, "current_frames", ("wait", "inner"), True, True)}),
        (prog.semaphore_count_reset, {(1,)}),
        (prog.bounded_in_use, {(1, 1), (1, 2)}),
        (prog.deep_recursion_worker, {True}),
        (prog.condition_owned, {(False, False, True)}),
        (prog.future_at_import, {42}),
    ],
)
def test_what_cpython_does(program: Callable[[], object], outcomes: set[object]) -> None:
    result = _run(program)
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == outcomes


def test_every_started_worker_has_a_frame_even_before_its_first_step() -> None:
    """The review's p134: in the schedules where a worker has not begun, it is there all the same
    (CPython's ``start`` returns once the thread runs)."""
    result = _run(prog.current_frames_of_every_worker)
    assert result.verdict == "exhaustive", result.report()
    assert result.executions > 1


def test_a_count_reset_without_notify_is_a_deadlock() -> None:
    """The semaphore whose ``_cond`` a program holds is CPython's code on controlled locks: the
    waiter, not notified, can sleep for ever, as in a real run."""
    result = _run(prog.semaphore_count_reset_unnotified)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == "deadlock", result.report()


def test_the_recursion_limit_is_unchanged_and_the_depth_repaid() -> None:
    """The depth lent to a controlled thread is given back when its body ends: the harness's own
    frames are counted as before once the check is over."""
    limit = sys.getrecursionlimit()
    before = _headroom()
    result = _run(prog.deep_recursion_worker)
    assert result.outcomes == {True}, result.report()
    assert sys.getrecursionlimit() == limit
    assert _headroom() == before


def _headroom() -> int:
    def down(n: int) -> int:
        try:
            return down(n + 1)
        except RecursionError:
            return n

    return down(0)


def _compiled(body: Callable[[ControlledRuntime], object]) -> object:
    seen: list[object] = []
    result = check(lambda rt: seen.append(body(rt)), Options(time_limit=60))
    assert result.verdict != "failed", result.report()
    return seen[0]


def test_the_compiled_bounded_semaphore_has_its_initial_value() -> None:
    """Outside this module's code (which names ``_cond``) a semaphore is the compiled one: its
    bound reads as ``_initial_value``; a plain semaphore has none, as in CPython."""

    def look(rt: ControlledRuntime) -> object:
        bounded = primitives.Semaphore(rt._ex, 3, bounded=True)
        plain = primitives.Semaphore(rt._ex, 2)
        try:
            plain._initial_value  # noqa: B018
        except AttributeError as e:
            return bounded._initial_value, str(e)
        return bounded._initial_value, None

    assert _compiled(look) == (3, "'Semaphore' object has no attribute '_initial_value'")


@pytest.mark.parametrize("field", ["sem_cond", "sem_value", "event_cond", "event_flag"])
def test_the_compiled_primitives_refuse_a_condition_by_name(field: str) -> None:
    """A look the scan did not see (``getattr``) meets a ``UsageError`` naming the field, never a
    stand-in that would not synchronise with the compiled object's steps."""

    def touch(rt: ControlledRuntime) -> object:
        sem = primitives.Semaphore(rt._ex, 1)
        ev = primitives.Event(rt._ex)
        try:
            if field == "sem_cond":
                getattr(sem, "_cond")  # noqa: B009
            elif field == "sem_value":
                setattr(sem, "_value", 2)  # noqa: B010
            elif field == "event_cond":
                getattr(ev, "_cond")  # noqa: B009
            else:
                setattr(ev, "_flag", True)  # noqa: B010
        except UsageError as e:
            return str(e)
        return None

    said = _compiled(touch)
    assert isinstance(said, str) and "single steps" in said, said


def test_a_module_that_names_no_condition_gets_the_compiled_semaphore() -> None:
    """Only the code that names ``_cond`` (or writes ``_value``) pays CPython's steps: a semaphore
    made here, in a module that does not, is the compiled one."""
    kinds: list[type] = []

    def make() -> None:
        kinds.append(type(threading.Semaphore(1)))
        kinds.append(type(threading.Event()))

    with patched(prog):
        check(lambda rt: make(), Options(time_limit=60))
    assert set(kinds) == {primitives.Semaphore, primitives.Event}


def test_the_fingerprint_runs_no_getattribute_of_the_program() -> None:
    """p095: the state fingerprint (``--strategy states``) read an object's ``__class__`` and
    ``__dict__`` through its class's ``__getattribute__``, the program's code: its lock was taken
    outside any controlled thread (a ``UsageError``). Now read as ``object.__getattribute__``."""
    with patched(prog):
        result = check_states(lambda rt: prog.getattribute_takes_a_lock(), races=False, time_limit=60)
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == {2}


def test_the_race_detector_runs_no_getattribute_of_the_program() -> None:
    # before: its isinstance() and getattr(obj, "__dict__") ran the program's __getattribute__
    # inside its handler, in the controlled thread: the hook's lock deadlocked the check
    result = _run(prog.getattribute_takes_a_lock)
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == {2}


def test_a_hooked_object_made_at_import_is_read_without_its_hook() -> None:
    # before: the snapshot of the module's state (patch_state) and the scan for class stores
    # (race_swaps) ran the hook in the first execution only: "the test is not deterministic"
    result = _run(prog.getattribute_at_import_takes_a_lock)
    assert result.verdict == "exhaustive", result.report()
    # one count in every execution: each starts from the same snapshot. (Not 2: patching itself
    # still asks the object its __class__ through the hook, before the snapshot: open.)
    assert len(result.outcomes) == 1, result.outcomes


def test_the_reference_walk_reads_a_hooked_object_without_its_hook() -> None:
    """The fingerprint's reference walk (``heap_walk._Canon``, also its fallback for deep heaps)
    reads such an object's fields as ``object.__getattribute__`` does, as the encoder does."""
    hooked: list[str] = []

    class Hooked:
        def __init__(self) -> None:
            self.v = 1

        def __getattribute__(self, name: str) -> object:
            hooked.append(name)
            return object.__getattribute__(self, name)

    walked = _Canon().value(Hooked())
    assert hooked == []
    assert walked == _Canon().value(Hooked()) != _Canon().value(Hooked.__new__(Hooked))
