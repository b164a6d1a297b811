"""``logging``'s locks while patched: its module lock and the lock of every handler alive.

A handler's ``emit`` runs under the handler's ``RLock`` (``Handler.handle``), made when the
handler was: a handler configured at import (``log.addHandler(ListHandler())``, as applications
do) has a real one, reachable only through ``logging``'s registry, so ``patched(module)`` did not
stand in for it. The real ``RLock`` is re-entrant on the greenlets' one OS thread: it ordered
nothing, and two threads' ``emit`` appending to the handler's list was a false data race
(session 38's review). ``logging._lock``, the module lock under which ``Manager.getLogger`` makes a
logger (a program's ``Logger`` subclass's ``__init__`` runs under it) and handlers are
registered, was a real ``RLock`` too.

``stand_in_locks`` puts a stand-in (``patch_imported``) in place of each: the module lock, and the
``lock`` of each handler in ``logging._handlerList`` (every handler made and not yet freed, found
through its weak references) or on a logger (``logging.config`` empties that list). A controlled
thread gets a controlled ``RLock`` of its execution, anything else the real one; ``patched`` undoes
it when it ends. A handler made inside the explored code makes its lock on the patched
``threading.RLock``: a controlled one already.
"""

from __future__ import annotations

import _thread
import sys
from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_imported import StandIn

# (value, its name in words) -> its stand-in, or None when it is no synchronisation object
StandInFor = Callable[[object, str], object | None]


def stand_in_locks(stand_in_for: StandInFor, undo: list[tuple[Any, str, Any]]) -> None:
    """Stand-ins for ``logging._lock`` and each live handler's ``lock`` (when ``logging`` was
    imported), each change recorded in ``undo`` as (object, attribute, real value)."""
    logging: Any = sys.modules.get("logging")
    if logging is None:
        return
    owners: list[tuple[object, str, str]] = [(logging, "_lock", "logging._lock (the module lock)")]
    for handler in _handlers(logging):
        if "lock" in getattr(handler, "__dict__", {}):
            owners.append((handler, "lock", f"the lock of logging handler {type(handler).__qualname__}"))
    for owner, field, name in owners:
        real = getattr(owner, field, None)
        fake = stand_in_for(real, name)
        if fake is not None:
            undo.append((owner, field, real))
            setattr(owner, field, fake)


def start_execution() -> None:
    """Each execution starts with every logger's level cache empty: a logger's first
    ``isEnabledFor`` of a level takes the module lock to fill it, so a cache the previous execution
    filled would leave one execution's steps out of the next ("the test is not deterministic")."""
    logging: Any = sys.modules.get("logging")
    if logging is None:
        return
    manager = logging.Logger.manager
    for logger in (logging.root, *list(manager.loggerDict.values())):
        cache = getattr(logger, "_cache", None)  # (a placeholder has none)
        if isinstance(cache, dict):
            cache.clear()


def give_back_real_locks() -> None:
    """Patching ended: a handler the explored code made (still registered, or not yet freed) has a
    controlled lock of an execution that is gone, which ``logging.shutdown`` at the interpreter's
    exit took (``Abort`` printed by ``atexit``, session 38's review): it gets a real ``RLock``."""
    logging: Any = sys.modules.get("logging")
    if logging is None:
        return
    for handler in _handlers(logging):
        lock = getattr(handler, "__dict__", {}).get("lock")
        # (a stand-in is an outer ``patched`` block's, undone when that block ends)
        controlled = type(lock).__module__.startswith("model_checks.harness.")
        if lock is not None and controlled and not isinstance(lock, StandIn):
            handler.lock = _thread.RLock()


def _handlers(logging: Any) -> list[Any]:
    """Every live handler: the ones ``logging._handlerList`` holds and the ones its loggers hold
    (``logging.config`` empties the list and keeps the handlers it did not make: a handler made at
    import, before another part of the process configured logging, is found on its logger)."""
    found: dict[int, Any] = {}
    for ref in list(getattr(logging, "_handlerList", ())):
        handler = ref()
        if handler is not None:
            found[id(handler)] = handler
    for logger in (logging.root, *list(logging.Logger.manager.loggerDict.values())):
        for handler in list(getattr(logger, "handlers", ())):
            found[id(handler)] = handler
    return list(found.values())
