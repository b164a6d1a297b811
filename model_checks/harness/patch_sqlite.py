"""A ``sqlite3`` database in a controlled thread: each call that reads or writes it an operation.

Two threads doing ``SELECT v`` then ``UPDATE ... v + 1`` through one connection made with
``check_same_thread=False`` lose an update in a fifth of real runs, and every strategy said
"exhaustive": the database is C state, so no call of the connection was an operation and each
thread's body was one step (eleventh review, #1). Here a call of a connection or of one of its
cursors in a controlled thread (``patch_identity``'s classes and stand-in route them here) is a
read or a write of one location per database, in the step of the call: ``execute``/``executemany``
of a ``SELECT``/``VALUES``/``EXPLAIN`` statement reads it, any other statement, ``executescript``,
``commit``, ``rollback``, ``close``, leaving ``with con:`` and the other calls that change the
connection write it; a cursor's ``fetchone``/``fetchmany``/``fetchall`` and its iteration (sqlite
reads the rows as they are fetched) read it, or write it after a write statement (``RETURNING``),
and its ``close`` reads it. The location is the database's file (``PRAGMA database_list``: two
connections to one file share it), a database in memory is its connection's own.

Connections to one file lock it: a write, or a transaction's ``COMMIT``, waits while another
connection's transaction holds it, sqlite's busy handler retrying for the connection's timeout
(5 s by default). That wait was a real sleep on the one OS thread the controlled threads share, so
here the C timeout is 0 while patched and the wait is a controlled one: until another thread's call
on the database, then the call again; the timeout expires only once no other thread can run (as
``--no-virtual-timeouts`` assumes: the holder finishes within it), and the call then raises
CPython's ``OperationalError("database is locked")``. As in sqlite, a connection already in a
transaction gets that error at once when it cannot take the write lock (its handler would risk a
deadlock), except for its ``COMMIT``.

Not seen: a cursor made by a program's own cursor factory (``con.cursor(factory=C)``), the rows of
``iterdump``'s generator, a ``Blob``'s reads and writes, a database in memory shared through a URI
(``cache=shared``: each connection's own here), a write-ahead log's readers (a ``journal_mode=WAL``
database's reads never wait, as here, but a reader keeps its snapshot: not modelled), another
process's connections, a ``PRAGMA busy_timeout`` set after connecting, ``backup``'s target (its
source's location is written), a read lock an unfinished ``SELECT`` holds in autocommit mode, and,
on the threads back end, a checked connection of a worker left in a transaction by an execution the
search stopped (CPython refuses another OS thread's ``rollback``: it keeps its lock until collected).

Each execution begins as a real run would: the connections earlier ones made are closed (their
transactions rolled back), and a connection made at import has no transaction open and its
database in memory holds what patching found (a copy by ``backup``; a file's contents stay).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_threads import ON_EXECUTION, _controlled
from model_checks.harness.per_execution import access, location_of, per_execution
from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.objects import EventState, Op
from model_checks.harness.runtime import ControlledRuntime

_READS = frozenset({"SELECT", "VALUES", "EXPLAIN"})
_ENDS = frozenset({"COMMIT", "END"})
_FIRST_WORD = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*([A-Za-z]+)", re.S)
_LOCKING_BEGIN = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*BEGIN\s+(IMMEDIATE|EXCLUSIVE)\b", re.S | re.I)
# a connection's calls that only read its database (the rest write it, or change the connection)
_CONNECTION_READS = frozenset({"iterdump", "serialize", "getlimit"})
_NO_ACCESS = frozenset({"__enter__", "cursor"})


def _first_word(sql: object) -> str:
    found = _FIRST_WORD.match(sql) if isinstance(sql, str) else None
    return found.group(1).upper() if found else ""


def statement_kind(sql: object) -> str:
    """ "read" for a statement that only reads the database, else "write" (a ``WITH`` may update)."""
    return "read" if _first_word(sql) in _READS else "write"


class Database:
    """What a connection reaches: its database's location, and the program's busy timeout."""

    def __init__(self, location: str, timeout: float, file: bool) -> None:
        self.location = location
        self.timeout = timeout
        self.file = file
        self.image: Any = None  # a database in memory made at import: a copy of it then
        # the connection's transaction holds a lock of the file (it read or wrote, or began with
        # ``BEGIN IMMEDIATE``): sqlite then calls no busy handler but at its COMMIT
        self.locked = False


def _raw(connection: Any, sql: str) -> list[Any]:
    """CPython's own ``execute`` (a plain cursor's: no operation, no thread check)."""
    return sqlite3.Cursor.execute(sqlite3.Cursor(connection), sql).fetchall()


def _describe(connection: Any, memory_name: str) -> Database | None:
    """The database ``connection`` reaches, its C busy timeout set to 0 (the program's kept here)."""
    try:
        files = [row[2] for row in _raw(connection, "PRAGMA database_list") if row[1] == "main"]
        (timeout_ms,) = _raw(connection, "PRAGMA busy_timeout")[0]
        # (sqlite names a file by its full path; one in memory has none, or "x" once deserialized)
        file = bool(files and os.path.isabs(files[0]))
        if file:
            _raw(connection, "PRAGMA busy_timeout = 0")
    except sqlite3.Error:  # closed, or not a database sqlite can open: CPython says so at its call
        return None
    location = f"sqlite database {files[0]}" if file else f"sqlite database :memory: ({memory_name})"
    return Database(location, timeout_ms / 1000, file)


# the connections made in controlled threads, since the running execution began
_OPENED: list[Any] = []
_real_connect = sqlite3.connect  # (this module's own connections are CPython's)


def opened(connection: Any) -> None:
    """``connection`` was made in a controlled thread: its database, for its calls."""
    if _controlled() is None:
        return
    _OPENED.append(connection)
    connection._lanecheck_db = _describe(connection, f"connection {len(_OPENED)}")


# connections made at import that a stand-in is in place of (by id): each with its database
_IMPORTED: dict[int, tuple[Any, Database]] = {}


def imported(connection: Any, name: str) -> None:
    """A stand-in is in place of ``connection`` (made at import, as ``name``) while patched."""
    found = _describe(connection, name)
    if found is None:
        return
    if not found.file:
        found.image = _real_connect(":memory:", check_same_thread=False)
        connection.backup(found.image)
    _IMPORTED[id(connection)] = (connection, found)


def forgotten(connection: Any) -> None:
    """Patching ended: ``connection``'s busy timeout is the program's again."""
    _, found = _IMPORTED.pop(id(connection), (None, None))
    if found is not None and found.image is not None:
        found.image.close()
    if found is not None and found.file:
        with contextlib.suppress(sqlite3.Error):
            _raw(connection, f"PRAGMA busy_timeout = {int(found.timeout * 1000)}")


def _on_execution(rt: ControlledRuntime | None) -> None:
    """An execution begins as a real run would: no connection an earlier one made holds a file's
    lock (one stopped midway, by the search, left its transaction open), and a connection made at
    import has no transaction open and its database in memory holds what the import put in it."""
    if rt is None:
        return
    for connection in _OPENED:
        # (a rollback first: ``close`` leaves a connection whose statements a cursor still
        # holds open until they go, its transaction and lock with it)
        with contextlib.suppress(sqlite3.Error):
            if connection.in_transaction:
                sqlite3.Connection.rollback(connection)
            sqlite3.Connection.close(connection)
    _OPENED.clear()
    for connection, found in _IMPORTED.values():
        with contextlib.suppress(sqlite3.Error):
            if connection.in_transaction:
                sqlite3.Connection.rollback(connection)
            if found.image is not None:
                found.image.backup(connection)


ON_EXECUTION.append(_on_execution)


def _database(connection: Any) -> Database | None:
    found = getattr(connection, "_lanecheck_db", None)
    if found is None and id(connection) in _IMPORTED:
        found = _IMPORTED[id(connection)][1]
    return found


def connection_call(
    connection: Any, name: str, real: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``real(connection, *args, **kwargs)``, a call of a connection, as an operation."""
    if name in _NO_ACCESS:
        return real(connection, *args, **kwargs)
    kind = "read" if name in _CONNECTION_READS else "write"
    ending = name == "commit" or (name == "__exit__" and not (args and args[0] is not None))
    return _call(connection, kind, ending, False, lambda: real(connection, *args, **kwargs))


def cursor_call(
    cursor: Any, name: str, real: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``real(cursor, *args, **kwargs)``, a call of a cursor, as an operation."""
    ending = deferred = False
    if name in ("execute", "executemany"):
        sql = args[0] if args else kwargs.get("sql")
        kind = cursor._lanecheck_kind = statement_kind(sql)
        word = _first_word(sql)
        ending = word in _ENDS
        deferred = word == "BEGIN" and not _LOCKING_BEGIN.match(str(sql))
    elif name == "executescript":
        kind = cursor._lanecheck_kind = "write"
    elif name == "close":
        kind = "read"
    else:  # a fetch: sqlite steps the statement for each row
        kind = getattr(cursor, "_lanecheck_kind", "read")
    try:
        connection = cursor.connection
    except sqlite3.Error:
        connection = None
    return _call(connection, kind, ending, deferred, lambda: real(cursor, *args, **kwargs))


def setting(connection: Any) -> None:
    """A controlled thread stores a field of ``connection`` that its calls read (``row_factory``,
    ``text_factory``, ``isolation_level``): a write of its database's location."""
    rt = _controlled()
    db = None if rt is None else _database(connection)
    if rt is not None and db is not None:
        access(rt, db.location, "write")


def _call(connection: Any, kind: str, ending: bool, deferred: bool, run: Callable[[], Any]) -> Any:
    """``run()`` as a read or write (``kind``) of ``connection``'s database; on a file, waiting
    while another connection holds its lock as sqlite's busy handler does (``ending``: a COMMIT;
    ``deferred``: a plain BEGIN, which takes no lock)."""
    rt = _controlled()
    db = None if rt is None else _database(connection)
    if rt is None or db is None:
        return run()
    access(rt, db.location, kind)
    if not db.file:
        return run()
    waits = _waits(rt)
    # sqlite's busy handler runs for a connection holding no lock of the file yet (it could
    # deadlock otherwise), and for its COMMIT; once the timeout expired, the call raises
    handled = ending or not db.locked
    expired = False
    try:
        while True:
            try:
                found = run()
            except sqlite3.OperationalError as e:
                if expired or not (handled and _busy(e) and db.timeout > 0):
                    raise
                expired = waits.wait(rt, db.location)
            else:
                db.locked = _in_transaction(connection) and not deferred
                return found
    finally:
        db.locked = db.locked and _in_transaction(connection)
        waits.changed(rt, db.location)


def _in_transaction(connection: Any) -> bool:
    try:
        return bool(connection.in_transaction)
    except sqlite3.Error:  # closed
        return False


def _busy(error: sqlite3.OperationalError) -> bool:
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_BUSY


class _Waits:
    """One execution's threads waiting for a database's lock, each on an event of its own."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.waiting: dict[int, tuple[str, EventState]] = {}  # by thread id
        self.expired: set[int] = set()
        self.watching = False

    def wait(self, rt: ControlledRuntime, location: str) -> bool:
        """Wait until another thread calls on ``location``'s database; True when the busy timeout
        expired instead (no other thread could run)."""
        tid = rt._ex.running_thread() or 0
        ev = self.ex.new_object(lambda oid: EventState(oid, f"{location}'s lock"))
        assert isinstance(ev, EventState)
        self.waiting[tid] = (location, ev)
        if not self.watching:
            self.watching = True
            self.ex.hooks.invariants.append(("sqlite busy timeouts", self.poll))
        held = location_of(rt, location).oid
        rt._ex.perform(Op("wait", ev, (), objs=frozenset({ev.oid, held})))
        del self.waiting[tid]
        if tid in self.expired:
            self.expired.discard(tid)
            return True
        return False

    def changed(self, rt: ControlledRuntime, location: str) -> None:
        """A call on ``location``'s database ended: its waiters try again."""
        me = rt._ex.running_thread() or 0
        for tid, (where, ev) in self.waiting.items():
            if where == location and tid != me:
                ev.flag = True

    def poll(self) -> None:
        """After every step: when only waiters are left (no other thread can run), their busy
        timeouts expire (each tries once more, and raises if the lock is still held)."""
        if not self.waiting:
            return
        events = {ev.oid for _, ev in self.waiting.values()}
        for t in self.ex.live:
            op = t.pending
            if (
                op is not None
                and op.obj.oid not in events
                and (can_run(self.ex, op, t.tid) or op.timeout is not None)
            ):
                return
        for tid, (_, ev) in self.waiting.items():
            if not ev.flag:
                ev.flag = True
                self.expired.add(tid)


_waits = per_execution(_Waits)
