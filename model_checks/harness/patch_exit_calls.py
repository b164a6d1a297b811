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
(``patch_threads``), each execution counts from 0; the process's counter is put back at its end.

The controlled threads' repr recursion guards are kept apart here too (``repr_guard.py``:
this module's execution hook calls its own).
"""

from __future__ import annotations

import atexit
import itertools
import sys
import weakref
from typing import Any

from model_checks.harness import patch_modules, repr_guard
from model_checks.harness.patch_threads import ON_EXECUTION, _controlled
from model_checks.harness.runtime import ControlledRuntime

_registry: dict[Any, Any] = weakref.finalize._registry  # type: ignore[attr-defined]
_BEFORE: list[frozenset[Any]] = [frozenset()]  # the finalizers registered when the execution began
_REGISTERED: list[Any] = []  # what the program gave ``atexit.register`` in the running execution
_POOL_MODULE = "concurrent.futures.thread"
_POOL_COUNTER: list[Any] = []  # the process's pool counter, while an execution has its own


def _on_execution(rt: ControlledRuntime | None) -> None:
    repr_guard.on_execution(rt)
    _pools_from_0(rt)
    if rt is not None:
        _BEFORE[0] = frozenset(_registry) if _registry else frozenset()
        _REGISTERED.clear()
        return
    before = _BEFORE[0]
    _BEFORE[0] = frozenset()
    for made in [f for f, info in list(_registry.items()) if f not in before and info.atexit]:
        made.detach()
    for func in _REGISTERED:
        atexit.unregister(func)
    _REGISTERED.clear()


ON_EXECUTION.append(_on_execution)


def _pools_from_0(rt: ControlledRuntime | None) -> None:
    """The process's pool counter back (an execution ended), a new one from 0 (one begins)."""
    pool = getattr(sys.modules.get(_POOL_MODULE), "ThreadPoolExecutor", None)
    if _POOL_COUNTER:
        if pool is not None:
            pool._counter = _POOL_COUNTER[0]
        _POOL_COUNTER.clear()
    if rt is not None and pool is not None:  # (not imported yet: the execution's import counts from 0)
        _POOL_COUNTER.append(pool.__dict__.get("_counter"))
        pool._counter = itertools.count().__next__


def _register(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    registered = _real_register(func, *args, **kwargs)
    if _controlled() is not None:
        caller = sys.modules.get(sys._getframe(1).f_globals.get("__name__", ""))
        if caller is not None and patch_modules.program_file(caller):
            _REGISTERED.append(func)
    return registered


_real_register = atexit.register
_register.__name__ = _register.__qualname__ = "register"
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [(atexit, "register", _real_register, _register)]
