"""What the standard library keys by the OS thread, given each controlled thread's own identity.

On the greenlet back end every controlled thread runs on one OS thread, so a check CPython makes
against the OS thread's identity passes in every controlled thread, and what CPython keeps per OS
thread is shared by all of them (seventh review, session 40: each below was proved where every
real run fails):

* ``sqlite3``: a connection made with ``check_same_thread=True`` (the default) and used by another
  thread raises ``ProgrammingError``. A connection made in a controlled thread is of a subclass
  that remembers its thread and makes CPython's check in each call of the connection and of its
  cursors, in CPython's words (``connect(factory=...)``: a program's own factory is subclassed).
  Every connection made in a controlled thread is of that subclass, checked or not, and its calls
  and its cursors' go through ``patch_sqlite``: reads and writes of its database (session 43).
* ``asyncio``'s event loop policy keeps the current loop per OS thread (a ``threading.local``
  made with the policy): ``asyncio.get_event_loop()`` in a worker raises ``RuntimeError`` unless
  the worker set one (the main thread gets a new loop). In a controlled thread the default
  policy's ``get_event_loop``/``set_event_loop`` keep it per controlled thread, each execution
  afresh.

A connection made at import (before patching) with the check is the main thread's: patching puts
an ``ImportedConnection`` in its place wherever the module's data reaches it (``patch_imported``'s
walk), which checks its calls and its cursors' against the controlled main thread (eighth review,
r023: CPython's object, checked against the one OS thread, never failed); one made without the
check is stood in for too, unchecked, for ``patch_sqlite``'s operations. Outside a controlled
thread each is CPython's. Not done: the running loop
(``asyncio.get_running_loop``, kept by C per OS thread) is still shared (``patch_asyncio``).
"""

from __future__ import annotations

import _thread
import sqlite3
import sys
import types
from collections.abc import Callable
from typing import Any

from model_checks.harness import patch_imported, patch_sqlite
from model_checks.harness.patch_imported import Running, StandIn
from model_checks.harness.patch_threads import _controlled, _current_thread
from model_checks.harness.per_execution import per_execution
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.thread_idents import thread_ident


def _ident(rt: ControlledRuntime) -> int:
    return thread_ident(rt._ex.running_thread() or 0)


def _check(owner: int | None) -> None:
    """CPython's ``pysqlite_check_thread``, against the controlled thread running here."""
    rt = _controlled()
    if owner is None or rt is None:
        return
    me = _ident(rt)
    if me != owner:
        raise sqlite3.ProgrammingError(
            "SQLite objects created in a thread can only be used in that same thread. "
            f"The object was created in thread id {owner} and this is thread id {me}."
        )


_CONNECTION_CALLS = (
    "backup",
    "blobopen",
    "close",
    "commit",
    "create_aggregate",
    "create_collation",
    "create_function",
    "create_window_function",
    "deserialize",
    "enable_load_extension",
    "getlimit",
    "iterdump",
    "load_extension",
    "rollback",
    "serialize",
    "set_authorizer",
    "set_progress_handler",
    "set_trace_callback",
    "setlimit",
    "__enter__",
    "__exit__",
)
_CURSOR_CALLS = (
    "execute",
    "executemany",
    "executescript",
    "fetchone",
    "fetchmany",
    "fetchall",
    "close",
    "__next__",
)


# ``patch_sqlite``'s route of a call of a connection or a cursor: an operation on its database
Route = Callable[[Any, str, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]


def _checked_call(
    base: type, name: str, owner_of: Callable[[Any], int | None], route: Route
) -> Callable[..., Any]:
    real = getattr(base, name)

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        _check(owner_of(self))
        return route(self, name, real, args, kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _owner(connection: Any) -> int | None:
    return getattr(connection, "_lanecheck_thread", None) or _IMPORTED.get(id(connection))


def _cursor_owner(cursor: Any) -> int | None:
    return _owner(cursor.connection)


CheckedCursor: Any = type(
    "Cursor",
    (sqlite3.Cursor,),
    {
        name: _checked_call(sqlite3.Cursor, name, _cursor_owner, patch_sqlite.cursor_call)
        for name in _CURSOR_CALLS
    },
)
CheckedCursor.__module__ = "sqlite3"


def _cursor_calls(base_of: Callable[[Any], Any]) -> dict[str, Callable[..., Any]]:
    """A connection's calls that make a cursor: checked, and of the checked class, on
    ``base_of(connection)``'s own ``cursor`` (CPython's, or a program's factory's)."""

    def cursor(self: Any, factory: Any = None) -> Any:
        _check(_owner(self))
        if factory is None or factory is sqlite3.Cursor:
            factory = CheckedCursor
        return base_of(self).cursor(self, factory)

    def execute(self: Any, sql: str, parameters: Any = ()) -> Any:
        return cursor(self).execute(sql, parameters)

    def executemany(self: Any, sql: str, parameters: Any) -> Any:
        return cursor(self).executemany(sql, parameters)

    def executescript(self: Any, script: str) -> Any:
        return cursor(self).executescript(script)

    return {"cursor": cursor, "execute": execute, "executemany": executemany, "executescript": executescript}


# a connection made at import's (its class is CPython's, or the factory's it was made with)
_CHECKED = _cursor_calls(type)


def _connection_class(base: type) -> type:
    """``base`` (``sqlite3.Connection`` or a program's factory) making CPython's thread check."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, *args, **kwargs)  # type: ignore[misc]
        rt = _controlled()
        checks = args[4] if len(args) > 4 else kwargs.get("check_same_thread", True)
        self._lanecheck_thread = None if rt is None or not checks else _ident(rt)
        patch_sqlite.opened(self)

    fields: dict[str, Any] = {
        name: _checked_call(base, name, _owner, patch_sqlite.connection_call)
        for name in _CONNECTION_CALLS
        if hasattr(base, name)
    }
    # (``base``'s cursor, not the class's own: that is the checked one)
    fields.update(_cursor_calls(lambda _: base))
    fields.update({name: _setting(base, name) for name in _SETTINGS if hasattr(base, name)})
    fields.update(__init__=__init__, __module__=base.__module__, __qualname__=base.__qualname__)
    return type(base.__name__, (base,), fields)


# A connection's fields its later calls read (``con.row_factory = sqlite3.Row`` changes what
# another thread's fetch returns): a store of one is a write of its database (twelfth review, s04)
_SETTINGS = ("row_factory", "text_factory", "isolation_level")


def _setting(base: type, name: str) -> property:
    real = getattr(base, name)

    def get(self: Any) -> Any:
        return real.__get__(self, type(self))

    def put(self: Any, value: Any) -> None:
        patch_sqlite.setting(self)
        real.__set__(self, value)

    return property(get, put, doc=getattr(real, "__doc__", None))


_CLASSES: dict[type, type] = {}
_real_connect = sqlite3.connect


def _connect(database: Any, *args: Any, **kwargs: Any) -> Any:
    """In a controlled thread, a connection of the factory's subclass (checking its thread if made
    with ``check_same_thread=True``; its database's calls operations: ``patch_sqlite``)."""
    if _controlled() is None:
        return _real_connect(database, *args, **kwargs)
    base = args[4] if len(args) > 4 else kwargs.get("factory", sqlite3.Connection)
    made = _CLASSES.get(base)
    if made is None:
        made = _CLASSES[base] = _connection_class(base)
    if len(args) > 4:
        args = (*args[:4], made, *args[5:])
    else:
        kwargs["factory"] = made
    return _real_connect(database, *args, **kwargs)


_connect.__name__ = _connect.__qualname__ = "connect"


# ------------------------------------------------------------- a connection made at import
# the connections made at import whose stand-in is in place (by id), each with its owner's ident
_IMPORTED: dict[int, int] = {}
_real_start_thread = _thread.start_new_thread
_real_allocate_lock = _thread.allocate_lock


def _thread_error(call: Callable[[], object]) -> bool:
    """Does ``call`` fail CPython's same-thread check (not for another reason)?"""
    try:
        call()
    except sqlite3.ProgrammingError as e:
        return "same thread" in str(e)
    except sqlite3.Error:
        return False
    return False


def _checks_thread(connection: Any) -> bool:
    """Was ``connection`` made here, on this OS thread, with ``check_same_thread=True``? (CPython
    keeps the flag in C only: another OS thread's ``cursor()`` says it.)"""
    if _thread_error(connection.cursor):  # made on another OS thread: CPython's own check fails
        return False
    done = _real_allocate_lock()
    done.acquire()
    found: list[bool] = []

    def probe() -> None:
        try:
            found.append(_thread_error(connection.cursor))
        finally:
            done.release()

    _real_start_thread(probe, ())
    done.acquire()
    return found == [True]


class ImportedConnection(StandIn):
    """A ``sqlite3`` connection made at import with ``check_same_thread=True``: made by the real
    main thread, the controlled main thread's while patched, so another controlled thread's call
    of it (or of a cursor it made) raises CPython's ``ProgrammingError``. It stays the one
    connection (no twin: its database is its state); outside a controlled thread it is CPython's."""

    def __init__(self, real: Any, running: Running, name: str, checks: bool) -> None:
        super().__init__(real, lambda: real, running, name)
        if checks:
            _IMPORTED[id(real)] = thread_ident(0)
        patch_sqlite.imported(real, name)

    def forget(self) -> None:
        super().forget()
        _IMPORTED.pop(id(self._real), None)
        patch_sqlite.forgotten(self._real)

    def __getattr__(self, name: str) -> Any:
        real = self._real
        if self._running() is None:
            return getattr(real, name)
        if name in _CHECKED:
            return types.MethodType(_CHECKED[name], real)
        if name in _CONNECTION_CALLS:
            return types.MethodType(
                _checked_call(type(real), name, _owner, patch_sqlite.connection_call), real
            )
        return getattr(real, name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # (``isinstance(conn, sqlite3.Connection)`` holds, as before)
        return type(self._real)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _STAND_IN_FIELDS:
            object.__setattr__(self, name, value)
        else:
            if name in _SETTINGS and self._running() is not None:
                patch_sqlite.setting(self._real)
            setattr(self._real, name, value)

    def __enter__(self) -> Any:
        real: Any = self._real
        _check(_owner(real))
        real.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        real: Any = self._real
        _check(_owner(real))
        return patch_sqlite.connection_call(real, "__exit__", type(real).__exit__, exc, {})


_STAND_IN_FIELDS = frozenset({"_real", "_make", "_running", "_name", "_runtime", "_twin"})


def _imported_connection(real: Any, name: str, running: Running) -> StandIn | None:
    if not isinstance(real, sqlite3.Connection):
        return None
    return ImportedConnection(real, running, name, _checks_thread(real))


patch_imported.OTHER_STAND_INS.append(_imported_connection)


# ---------------------------------------------------------------------- asyncio's current loop
class _Loops:
    """One execution's current event loop per controlled thread: [loop, set_called]."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.of: dict[int, list[Any]] = {}


_loops = per_execution(_Loops)


def _slot(rt: ControlledRuntime) -> list[Any]:
    return _loops(rt).of.setdefault(rt._ex.running_thread() or 0, [None, False])


def _policy_methods(policy_class: type) -> list[tuple[Any, str, Any, Any]]:
    real_get = policy_class.get_event_loop  # type: ignore[attr-defined]
    real_set = policy_class.set_event_loop  # type: ignore[attr-defined]

    def get_event_loop(self: Any) -> Any:
        rt = _controlled()
        if rt is None:
            return real_get(self)
        slot = _slot(rt)
        if slot[0] is None and not slot[1] and rt._ex.running_thread() == 0:
            self.set_event_loop(self.new_event_loop())
        if slot[0] is None:
            name = _current_thread(rt).name
            raise RuntimeError(f"There is no current event loop in thread {name!r}.")
        return slot[0]

    def set_event_loop(self: Any, loop: Any) -> None:
        rt = _controlled()
        if rt is None:
            real_set(self, loop)
            return
        events: Any = sys.modules["asyncio.events"]
        if loop is not None and not isinstance(loop, events.AbstractEventLoop):
            raise TypeError(
                f"loop must be an instance of AbstractEventLoop or None, not '{type(loop).__name__}'"
            )
        slot = _slot(rt)
        slot[0], slot[1] = loop, True

    return [
        (policy_class, "get_event_loop", real_get, get_event_loop),
        (policy_class, "set_event_loop", real_set, set_event_loop),
    ]


def at_patching() -> list[tuple[Any, str, Any, Any]]:
    """(owner, name, real, replacement) for ``patch.patched``: ``sqlite3.connect``, and the
    default event loop policy's methods where the program has imported ``asyncio``."""
    found: list[tuple[Any, str, Any, Any]] = [(sqlite3, "connect", _real_connect, _connect)]
    dbapi2 = sys.modules.get("sqlite3.dbapi2")
    if dbapi2 is not None and getattr(dbapi2, "connect", None) is _real_connect:
        found.append((dbapi2, "connect", _real_connect, _connect))
    events: Any = sys.modules.get("asyncio.events")
    if events is not None:
        found += _policy_methods(events.BaseDefaultEventLoopPolicy)
    return found
