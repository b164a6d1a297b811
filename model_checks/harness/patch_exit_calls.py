"""What an execution leaves behind for the next, put back: the interpreter-exit calls it
registers, dropped when it ends; ``ThreadPoolExecutor``'s pool counter, from 0 in each.

CPython runs, at the interpreter's exit, the ``atexit`` functions and the ``weakref.finalize``
callbacks still registered (``finalize.atexit`` true). Left registered by an execution, they ran
at lanecheck's exit on that ended execution's controlled objects, once per execution, after the
verdict: a callback taking a controlled lock printed the harness's internal ``Abort`` traceback
(review 9's s39). The interpreter's exit is not modelled in an execution, so what an execution
registered for it is dropped when the execution ends: a finalizer made during it (by the program
or a library it called) and still registered with ``atexit`` true is detached, and a function the
program's own code gave ``atexit.register`` in a controlled thread is unregistered (a library's
registration, as ``weakref.finalize``'s own at its first use, stays: it serves the process).

A pool names its workers ``ThreadPoolExecutor-N_M`` from a class-level counter
(``ThreadPoolExecutor._counter``, an ``itertools.count``): it went on from one execution to the
next, so the fifth execution's first pool was ``ThreadPoolExecutor-4`` where a fresh
interpreter's is ``ThreadPoolExecutor-0``, a program checking it failed, and the failing
schedule's replay (a fresh process) diverged (review 13's A6). As ``Thread-N`` is
(``patch_threads``), each execution counts from 0: while patched, the class's counter is one of
ours (``_PoolCounter``) that counts from 0 in each execution and calls the process's outside
executions. (It was swapped in and out at each execution's start and end: two writes of a
library class's attribute, each handed to Python by the process watch's class hook, cost about
2 µs an execution of a program that never made a pool: session 45.)

The controlled threads' repr recursion guards are kept apart here too (``repr_guard.py``:
this module's execution hook calls its own).
"""

from __future__ import annotations

import atexit
import sys
import weakref
from concurrent.futures.thread import ThreadPoolExecutor
from typing import Any

from model_checks.harness import patch_modules, repr_guard
from model_checks.harness.patch_threads import _CURRENT, ON_EXECUTION, _controlled
from model_checks.harness.runtime import ControlledRuntime

_registry: dict[Any, Any] = weakref.finalize._registry  # type: ignore[attr-defined]
_BEFORE: list[frozenset[Any]] = [frozenset()]  # the finalizers registered when the execution began
_REGISTERED: list[Any] = []  # what the program gave ``atexit.register`` in the running execution


def _on_execution(rt: ControlledRuntime | None) -> None:
    repr_guard.on_execution(rt)
    if rt is not None:
        _POOLS.next = 0
        _BEFORE[0] = frozenset(_registry) if _registry else frozenset()
        _REGISTERED.clear()
        return
    before = _BEFORE[0]
    _BEFORE[0] = frozenset()
    if _registry:  # (most executions register none: its look cost 3,000 instructions, session 46)
        for made in [f for f, info in list(_registry.items()) if f not in before and info.atexit]:
            made.detach()
    for func in _REGISTERED:
        atexit.unregister(func)
    _REGISTERED.clear()


ON_EXECUTION.append(_on_execution)


class _PoolCounter:
    """``ThreadPoolExecutor._counter`` while patched: the pools of each execution counted from 0
    (``_on_execution`` starts it again), the process's counter called outside an execution."""

    __slots__ = ("next", "process")

    def __init__(self, process: Any) -> None:
        self.process = process
        self.next = 0

    def __call__(self) -> int:
        if _CURRENT[0] is None:
            return self.process()  # type: ignore[no-any-return]
        n = self.next
        self.next = n + 1
        return n


_real_counter = ThreadPoolExecutor.__dict__["_counter"]
_POOLS = _PoolCounter(_real_counter)


def _register(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    registered = _real_register(func, *args, **kwargs)
    if _controlled() is not None:
        caller = sys.modules.get(sys._getframe(1).f_globals.get("__name__", ""))
        if caller is not None and patch_modules.program_file(caller):
            _REGISTERED.append(func)
    return registered


_real_register = atexit.register
_register.__name__ = _register.__qualname__ = "register"
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (atexit, "register", _real_register, _register),
    (ThreadPoolExecutor, "_counter", _real_counter, _POOLS),
]
