"""Programs sharing a ``sqlite3`` database between threads (``test_patch_sqlite.py``): through one
connection made with ``check_same_thread=False`` (in the program, or at import), or through two
connections to one file. Each returns what it read, or asserts what a correct run keeps."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from tests.harness.program_threads import run_copies, start_and_join, start_then_release


def _counter(con: Any) -> None:
    con.executescript("drop table if exists c; create table c(v int); insert into c values (0);")


# made at import, shared by the threads (eleventh review's u17 with the connection a global)
SHARED = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
_counter(SHARED)


def _increment(con: Any) -> None:
    (v,) = con.execute("select v from c").fetchone()
    con.execute("update c set v = ?", (v + 1,))


def _count(con: Any) -> int:
    (v,) = con.execute("select v from c").fetchone()
    return int(v)


def shared_read_modify_write() -> int:
    """BUGGY (u17): SELECT then UPDATE through one shared connection: an update is lost."""
    con = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _counter(con)
    run_copies(lambda: _increment(con))
    assert _count(con) == 2, _count(con)
    return 2


def shared_under_a_lock() -> int:
    """CORRECT: each thread's SELECT and UPDATE under one lock, ``with con:`` committing."""
    con = sqlite3.connect(":memory:", check_same_thread=False)
    _counter(con)
    con.commit()
    lock = threading.Lock()

    def inc() -> None:
        with lock, con:
            _increment(con)

    run_copies(inc)
    return _count(con)


def shared_at_import_read_modify_write() -> int:
    """BUGGY: as ``shared_read_modify_write``, the connection (and its counter) made at import."""
    run_copies(lambda: _increment(SHARED))
    assert _count(SHARED) == 2, _count(SHARED)
    return 2


def shared_at_import_under_a_lock() -> int:
    """CORRECT: the import's counter, each thread's SELECT and UPDATE under one lock (a real run
    starts from the counter the import made: so must each execution)."""
    lock = threading.Lock()

    def inc() -> None:
        with lock:
            _increment(SHARED)

    run_copies(inc)
    assert _count(SHARED) == 2, _count(SHARED)
    return 2


def rows_read_as_fetched() -> tuple[int, ...]:
    """Either: a cursor's rows are read from the database as they are fetched (its ``execute``
    read the first), so another thread's delete between the ``execute`` and the ``fetchall``
    leaves the first row only."""
    con = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    con.executescript("create table t(v int); insert into t values (1); insert into t values (2);")
    got: list[tuple[int, ...]] = []

    def reader() -> None:
        cur = con.execute("select v from t")
        got.append(tuple(v for (v,) in cur.fetchall()))

    start_and_join(reader, lambda: con.execute("delete from t"))
    return got[0]


def two_connections_read_modify_write(path: str) -> int:
    """BUGGY: each thread its own connection to one file, SELECT then UPDATE (autocommit)."""
    setup = sqlite3.connect(path, isolation_level=None)
    _counter(setup)

    def inc() -> None:
        con = sqlite3.connect(path, isolation_level=None)
        _increment(con)
        con.close()

    run_copies(inc)
    assert _count(setup) == 2, _count(setup)
    setup.close()
    return 2


def _in_transactions(path: str, begin: str) -> int:
    """Each of two threads its own connection to ``path``, its SELECT and UPDATE between
    ``begin`` and ``COMMIT``: the count they leave."""
    setup = sqlite3.connect(path, isolation_level=None)
    _counter(setup)

    def inc() -> None:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute(begin)
        _increment(con)
        con.execute("commit")
        con.close()

    run_copies(inc)
    value = _count(setup)
    setup.close()
    return value


def two_connections_immediate(path: str) -> int:
    """CORRECT: in ``BEGIN IMMEDIATE ... COMMIT``: the second waits for the first's lock
    (sqlite's busy handler)."""
    return _in_transactions(path, "begin immediate")


def two_connections_deferred(path: str) -> int:
    """BUGGY: as ``two_connections_immediate`` with a plain ``BEGIN``: both may read, then the
    second to write gets ``database is locked`` at once (sqlite calls no busy handler for a
    connection that holds a read lock: it could deadlock)."""
    return _in_transactions(path, "begin")


def lock_held_while_waiting(path: str) -> int:
    """BUGGY: a thread holds the file's write lock while it waits for another thread that needs
    it: the other's busy timeout expires (``database is locked``), as in every real run."""
    setup = sqlite3.connect(path, isolation_level=None, timeout=0.1)
    _counter(setup)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("begin immediate")

    def writer() -> None:
        con = sqlite3.connect(path, isolation_level=None, timeout=0.1)
        con.execute("update c set v = 1")
        con.close()

    start_and_join(writer)
    holder.execute("commit")
    return _count(setup)


def two_connections_write_first(path: str) -> int:
    """CORRECT: each thread's transaction of its own connection writes first (``BEGIN`` then
    ``UPDATE v = v + 1``, or Python's implicit ``BEGIN``): the second waits for the first's lock."""
    setup = sqlite3.connect(path, isolation_level=None)
    _counter(setup)

    def explicit() -> None:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("begin")
        con.execute("update c set v = v + 1")
        con.execute("commit")
        con.close()

    def implicit() -> None:
        con = sqlite3.connect(path)
        con.execute("update c set v = v + 1")
        con.commit()
        con.close()

    start_and_join(explicit, implicit)
    value = _count(setup)
    setup.close()
    return value


def _row_type(con: Any) -> str:
    return type(con.execute("select v from c").fetchone()).__name__


def _row_factory_window(con: Any) -> str:
    gate = threading.Lock()
    seen: list[str] = []

    def a() -> None:
        con.row_factory = sqlite3.Row
        with gate:
            pass
        con.row_factory = None

    gate.acquire()
    start_then_release(gate, a, lambda: seen.append(_row_type(con)))
    return seen[0]


def row_factory_window() -> str:
    """BUGGY (twelfth review, s04): a thread sets the shared connection's ``row_factory`` for a
    while; another's fetch inside that window gets a ``Row``. Returns the type fetched."""
    con = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _counter(con)
    return _row_factory_window(con)


def row_factory_window_at_import() -> str:
    """The same on the connection made at import."""
    return _row_factory_window(SHARED)
