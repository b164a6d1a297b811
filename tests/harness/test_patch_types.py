"""Patch mode's names as classes, a queue's internals, ``_thread``'s locks, ``threading.excepthook``
and CPython's misuse errors (``model_checks/harness/patch_types.py``, session 37). Each program
failed before: a subclass of a patched name was a ``TypeError`` (the names were functions), a
queue had no ``mutex``, ``_thread.allocate_lock()`` was a real lock (a false race), a program's
own ``excepthook`` was never called, and the misuse errors had the harness's words."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import patch_types_programs as prog
from tests.harness.patched_runs import assert_fails


def _run(program: Callable[[], object], module: ModuleType = prog) -> Result:
    with patched(module):
        return check(lambda rt: program(), Options(time_limit=60))


@pytest.mark.timeout(120)
def test_a_simple_queue_subclass_defined_before_patching_is_refused() -> None:
    with pytest.raises(UsageError, match=r"ImportedInbox derives from the real queue.SimpleQueue"):
        _run(prog.imported_simple_queue_subclass)
    assert prog.ImportedInbox.__new__ is not None and prog.ImportedInbox().empty()  # undone


@pytest.mark.timeout(120)
def test_the_patched_names_are_the_real_classes_outside_controlled_threads() -> None:
    import queue

    with patched(prog):
        q: queue.Queue[int] = queue.Queue()
        event = threading.Event()
        assert type(q) is queue.Queue.__mro__[1] and isinstance(q, queue.Queue)
        assert type(event).__module__ == "threading" and isinstance(event, threading.Event)
    assert type(queue.Queue).__name__ == "type" and type(threading.Event) is type


@pytest.mark.timeout(120)
def test_a_hook_of_the_program_is_called_and_restored() -> None:
    before = threading.excepthook  # (pytest's, which reports as CPython's default hook does)
    assert _run(prog.hook_set_inside).verdict == "exhaustive"
    assert threading.excepthook is before  # what the program set is undone
    threading.excepthook = prog.collect
    try:
        result = _run(prog.hook_set_before)
    finally:
        threading.excepthook = before
    assert result.verdict == "exhaustive", result.report()


@pytest.mark.timeout(120)
def test_a_hook_the_program_set_ends_with_its_execution() -> None:
    # the next check of the same patched block (and each execution) starts without it
    with patched(prog):
        assert check(lambda rt: prog.hook_set_inside()).verdict == "exhaustive"
        result = check(lambda rt: prog.thread_raises())
    assert_fails(result, "exception", "raised ValueError: unhandled")


@pytest.mark.timeout(120)
def test_a_queue_internal_the_scan_cannot_see_is_refused_by_name() -> None:
    with pytest.raises(UsageError, match=r"q.mutex of a controlled queue"):
        _run(prog.queue_mutex_by_getattr)
