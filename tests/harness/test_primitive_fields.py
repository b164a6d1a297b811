"""A program's look at CPython's private fields of the primitives is a read of the controlled
object, one step each (``sync/primitives.py``); before session 39 each was an
``AttributeError``. So is ``Barrier.n_waiting`` (and ``broken``), which CPython reads without
the barrier's lock."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.sync import primitives
from tests.harness import primitive_field_programs as prog
from tests.harness.patched_runs import assert_outcomes, assert_reported


def _run(program: Callable[[], object]) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=60))


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.semaphore_value, {(2, 2), (1, 2)}),
        (prog.event_flag, {(False, True), (True, True)}),
        (prog.condition_waiters, {(0,), (1,)}),
        (prog.barrier_count_read, {(0, False), (1, False), (2, False)}),
    ],
)
def test_each_field_reads_the_controlled_state_in_every_order(
    program: Callable[[], object], outcomes: set[object]
) -> None:
    result = _run(program)
    assert_outcomes(result, outcomes)


@pytest.mark.timeout(120)
def test_a_program_assuming_a_waiter_is_parked_fails() -> None:
    result = _run(prog.waiters_assumed_parked)
    assert_reported(result, "assertion", "AssertionError: no thread was waiting yet")  # not an AttributeError


@pytest.mark.timeout(120)
def test_a_program_assuming_no_thread_reached_the_barrier_fails() -> None:
    """``Barrier.n_waiting`` is one step ordered with the barrier's lock: before, the look was the
    main thread's local code and never moved past the other threads' waits (proved)."""
    result = _run(prog.barrier_count_assumed)
    assert_reported(result, "assertion", "already waiting")


def _pure_primitives() -> ModuleType:
    """``sync/primitives.py`` run as Python (the build a machine without a compiler runs)."""
    source = Path(primitives.__file__).with_name("primitives.py")
    spec = importlib.util.spec_from_file_location("primitives_as_python", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.mark.parametrize(("kind", "field"), [("Queue", "mutex"), ("Queue", "not_empty"), ("Event", "_cond")])
def test_a_refused_field_cannot_be_set_in_the_python_build(kind: str, field: str) -> None:
    """A field with no controlled counterpart is refused when set, as the read-only property it
    replaced was (before session 42's code review the Python build took the assignment, and later
    reads returned it)."""
    cls = getattr(_pure_primitives(), kind)
    obj = cls.__new__(cls)
    with pytest.raises(AttributeError):
        setattr(obj, field, "X")


@pytest.mark.timeout(120)
def test_a_refused_field_cannot_be_set_as_installed() -> None:
    """The same, on the build in use (compiled: the class has no such attribute), in a program."""
    assert_outcomes(_run(prog.refused_fields_set), {("mutex", "not_empty", "_cond")})
