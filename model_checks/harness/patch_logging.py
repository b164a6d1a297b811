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
import io
import operator
import sys
import weakref
from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_imported import StandIn
from model_checks.harness.rt.dict_versions import Moved

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
    made = [handler for handler in (ref() for ref in MADE) if handler is not None]
    MADE.clear()
    for handler in [*_handlers(logging), *made]:
        lock = getattr(handler, "__dict__", {}).get("lock")
        # (a stand-in is an outer ``patched`` block's, undone when that block ends)
        controlled = type(lock).__module__.startswith("model_checks.harness.")
        if lock is not None and controlled and not isinstance(lock, StandIn):
            handler.lock = _thread.RLock()


# Handlers an execution made and registered, taken out of ``logging._handlerList`` when it ended
# (``Config.restore``), with weak references of their own that call nothing when they die.
MADE: list[weakref.ref[Any]] = []


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


# ``logging``'s module settings a program changes (``setLoggerClass``, ``addLevelName``, ...);
# not its lock (a stand-in while patched) nor its registry of live handlers (weak references)
_SETTINGS = (
    "_levelToName",
    "_nameToLevel",
    "_loggerClass",
    "_logRecordFactory",
    "raiseExceptions",
    "logThreads",
    "logMultiprocessing",
    "logProcesses",
    "lastResort",
    "_warnings_showwarning",
)


class _Fields:
    """Some attributes of an object as they were (all of them when ``names`` is None: one added
    since is removed): the bindings, and the contents of the lists and dicts among them copied
    one level deep (the handlers and loggers they hold are the same objects)."""

    def __init__(self, owner: Any, names: tuple[str, ...] | None = None) -> None:
        self.space: dict[str, Any] = vars(owner)
        self.every = names is None
        chosen = list(self.space) if names is None else [n for n in names if n in self.space]
        self.bound = {name: self.space[name] for name in chosen}
        self.copied: dict[str, Any] = {name: _copied(value) for name, value in self.bound.items()}
        # the chosen attributes' values now, in C (``!=`` to ``copied``'s values: changed)
        self.now = operator.itemgetter(*chosen) if len(chosen) > 1 else None

    def restore(self) -> None:
        if self.every:
            for name in [n for n in self.space if n not in self.bound]:
                del self.space[name]
        for name, value in self.bound.items():
            self.space[name] = value
            copied = self.copied[name]
            if isinstance(value, list):
                value[:] = copied
            elif isinstance(value, dict):
                value.clear()
                value.update(copied)


def _copied(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


class Config:
    """``logging``'s configuration as the check's first execution found it, put back before each
    later one: every logger's handlers, filters, level, ``propagate`` and ``disabled`` (a
    placeholder's children), the fields of the handlers on them, the loggers' registry (a logger
    made since is forgotten), ``logging.disable``'s level and the module's settings. Kept,
    ``logging.basicConfig(stream=buf)`` in the explored function configured the root logger in
    the first execution only: the later ones logged to its stream through its handler, whose
    controlled lock was that execution's ("the test is not deterministic", sixth review).

    Most executions change none of it: each compares the whole of it with the copies in C (a
    list of the objects' attribute dicts against a list of their copies, about 0.1 us an object:
    ``lanecheck explore`` has a handful, a test process with many libraries' loggers some
    hundred) and restores only what differs."""

    def __init__(self) -> None:
        self.objects: list[_Fields] = []
        self.module: _Fields | None = None
        logging: Any = sys.modules.get("logging")
        if logging is None:
            return
        manager = logging.Logger.manager
        loggers = [logging.root, *manager.loggerDict.values()]
        handlers = {id(h): h for logger in loggers for h in getattr(logger, "handlers", ())}
        # (a handler's lock is a stand-in for the whole of the patching: restored, it is the same)
        self.objects = [_Fields(owner) for owner in (manager, *loggers, *handlers.values())]
        self.module = _Fields(logging, _SETTINGS)
        self.spaces = [fields.space for fields in self.objects]
        self.copies = [fields.copied for fields in self.objects]
        self.settings = tuple(self.module.copied.values())
        # (compared only once one of the dicts holding them was written: ``logging``'s own, its
        # level names'; the comparison cost about 5,000 instructions an execution: session 46)
        values = self.module.bound.values()
        names = [v for v in values if isinstance(v, dict)]
        # (a list among them would change unseen: then compared each time)
        lists = any(isinstance(v, list) for v in values)
        self.settings_written = None if lists else Moved([self.module.space, *names])
        self.registry: list[Any] = logging._handlerList
        self.registered = list(self.registry)
        self.streams = [
            _Stream(fields) for fields in self.objects if _Stream.kept(fields.bound.get("stream"))
        ]

    def _settings(self) -> Any:
        module = self.module
        assert module is not None and module.now is not None  # (ten names, all in ``logging``)
        return module.now(module.space)

    def restore(self) -> None:
        if self.module is None:
            return
        if self.spaces != self.copies:
            for fields in self.objects:
                if fields.space != fields.copied:
                    fields.restore()
        written = self.settings_written
        if written is None or written.moved():
            if self._settings() != self.settings:
                self.module.restore()
            if written is not None:
                written.record()
        if self.registry != self.registered:
            self._unregister()
        for stream in self.streams:
            stream.reopen()

    def _unregister(self) -> None:
        """The handlers an execution made leave ``logging._handlerList``, and with them the weak
        references whose callback (``_removeHandlerRef``) takes the module lock when the handler
        dies: a handler of one execution freed by the collector during a later one took a step
        there, at whatever point the collection came ("the test is not deterministic", session 39).
        ``MADE`` keeps them for ``give_back_real_locks``."""
        before = {id(ref) for ref in self.registered}
        for ref in self.registry:
            handler = ref() if id(ref) not in before else None
            if handler is not None:
                MADE.append(weakref.ref(handler))
        self.registry[:] = self.registered


class _Stream:
    """The stream of a handler the check found, made again when an execution closed it
    (``basicConfig(force=True)``, ``handler.close()``, ``logging.shutdown()``). Put back closed, the
    next execution's first record (or ``basicConfig(force=True)``'s flush) met "I/O operation on
    closed file", where a real run, which closes it once, never does: a correct program (review 12,
    c02: a file configured at import, configured again in the function) failed at its second
    execution. A file's handler opens its file again to append, where the stream found wrote; a
    ``StringIO``'s is a new one holding what the found one held (pytest's capture)."""

    def __init__(self, fields: _Fields) -> None:
        self.fields = fields
        self.found = fields.bound["stream"]
        self.text = self.found.getvalue() if isinstance(self.found, io.StringIO) else None

    @staticmethod
    def kept(stream: Any) -> bool:
        return isinstance(stream, (io.StringIO, io.TextIOWrapper)) and not stream.closed

    def reopen(self) -> None:
        found = self.found
        if not found.closed:
            return
        space = self.fields.space  # (the handler's attributes)
        if self.text is not None:
            fresh: Any = io.StringIO(self.text)
            fresh.seek(0, io.SEEK_END)
        elif isinstance(space.get("baseFilename"), str) and isinstance(found, io.TextIOWrapper):
            fresh = open(  # noqa: SIM115 (the handler's, closed by the handler as before)
                space["baseFilename"], "a", encoding=space.get("encoding"), errors=space.get("errors")
            )
        else:
            return  # (another stream cannot be made again: left as the execution left it)
        self.found = space["stream"] = self.fields.bound["stream"] = self.fields.copied["stream"] = fresh
