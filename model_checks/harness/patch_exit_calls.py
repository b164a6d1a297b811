"""The interpreter-exit calls an execution registers: dropped when it ends.

CPython runs, at the interpreter's exit, the ``atexit`` functions and the ``weakref.finalize``
callbacks still registered (``finalize.atexit`` true). Left registered by an execution, they ran
at lanecheck's exit on that ended execution's controlled objects, once per execution, after the
verdict: a callback taking a controlled lock printed the harness's internal ``Abort`` traceback
(review 9's s39). The interpreter's exit is not modelled in an execution, so what an execution
registered for it is dropped when the execution ends: a finalizer made during it (by the program
or a library it called) and still registered with ``atexit`` true is detached, and a function the
program's own code gave ``atexit.register`` in a controlled thread is unregistered (a library's
registration, as ``weakref.finalize``'s own at its first use, stays: it serves the process).
"""

from __future__ import annotations

import atexit
import sys
import weakref
from typing import Any

from model_checks.harness import patch_modules
from model_checks.harness.patch_threads import ON_EXECUTION, _controlled
from model_checks.harness.runtime import ControlledRuntime

_registry: dict[Any, Any] = weakref.finalize._registry  # type: ignore[attr-defined]
_BEFORE: list[frozenset[Any]] = [frozenset()]  # the finalizers registered when the execution began
_REGISTERED: list[Any] = []  # what the program gave ``atexit.register`` in the running execution


def _on_execution(rt: ControlledRuntime | None) -> None:
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
