"""The eighth outside review's programs on what a module made at import and patch mode did not
reach (session 41; ``test_review8_reach.py``): a ``sqlite3`` connection (r023), a
``threading.local`` in a set or five levels deep (r031, r032) or in other places the walk did not
go, and a ``threading.local`` subclass defined here whose object a controlled thread makes
(r033). Each says CORRECT or BUGGY as CPython 3.11 runs it (main() in a real thread of its own
would differ for the connections: there the main thread is the one that imported)."""

from __future__ import annotations

import sqlite3
import threading
import types
from typing import Any

from tests.harness.program_threads import run_copies

# ------------------------------------------------------------------------------------- sqlite3
CONN = sqlite3.connect(":memory:")
CONNS = {"db": [sqlite3.connect(":memory:")]}  # reached by the walk, not a global itself
SHARED = sqlite3.connect(":memory:", check_same_thread=False)


def _in_a_worker(work: Any) -> None:
    t = threading.Thread(target=work)
    t.start()
    t.join()


def connection_made_at_import_used_by_a_worker() -> None:
    """r023 (BUGGY): ``ProgrammingError`` in the worker in every real run."""
    _in_a_worker(lambda: CONN.execute("select 1").fetchall())


def connection_in_a_dict_used_by_a_worker() -> None:
    """BUGGY: the same, the connection found in a dict's list."""
    _in_a_worker(lambda: CONNS["db"][0].execute("select 1").fetchall())


def cursor_of_a_connection_made_at_import_used_by_a_worker() -> None:
    """BUGGY: main's cursor (of the import's connection) fetched from in a worker."""
    cur = CONN.execute("select 1")
    _in_a_worker(cur.fetchall)


def connection_made_at_import_used_by_main() -> int:
    """CORRECT: the import's thread is the main thread; a worker runs beside it."""
    _in_a_worker(lambda: None)
    assert isinstance(CONN, sqlite3.Connection)
    with CONN:
        value: int = CONN.execute("select 2").fetchone()[0]
    cur = CONN.cursor()
    cur.execute("select 3")
    last: int = cur.fetchone()[0]
    return value + last


def shared_connection_made_at_import() -> int:
    """CORRECT: ``check_same_thread=False``, used by one worker while main waits."""
    got: list[int] = []
    _in_a_worker(lambda: got.append(SHARED.execute("select 4").fetchone()[0]))
    return got[0]


# ------------------------------------------------------------------------------ threading.local
IN_A_SET = {threading.local()}
IN_A_FROZENSET = (frozenset({threading.local()}),)
FIVE_DEEP = {"a": {"b": {"c": {"d": {"e": threading.local()}}}}}
TEN_DEEP: list[Any] = [[[[[[[[[{"x": threading.local()}]]]]]]]]]
IN_A_NAMESPACE = types.SimpleNamespace(tls=threading.local())


def _own_values(tls: Any) -> tuple[tuple[str, str], ...]:
    """r031's body: two threads each set the attribute, wait for the other, and read it back."""
    bad: list[tuple[str, str]] = []
    e1, e2 = threading.Event(), threading.Event()

    def w(name: str, ev_in: threading.Event, ev_out: threading.Event) -> None:
        tls.name = name
        ev_out.set()
        ev_in.wait()
        if tls.name != name:
            bad.append((name, tls.name))

    a = threading.Thread(target=w, args=("a", e2, e1))
    b = threading.Thread(target=w, args=("b", e1, e2))
    a.start()
    b.start()
    a.join()
    b.join()
    return tuple(bad)


def local_in_a_set() -> tuple[tuple[str, str], ...]:
    """r031 (CORRECT): each thread sees its own attribute."""
    return _own_values(next(iter(IN_A_SET)))


def local_in_a_frozenset() -> tuple[tuple[str, str], ...]:
    return _own_values(next(iter(IN_A_FROZENSET[0])))


def local_five_deep() -> tuple[tuple[str, str], ...]:
    """r032 (CORRECT)."""
    return _own_values(FIVE_DEEP["a"]["b"]["c"]["d"]["e"])


def local_ten_deep() -> tuple[tuple[str, str], ...]:
    return _own_values(TEN_DEEP[0][0][0][0][0][0][0][0][0]["x"])


def local_in_a_namespace() -> tuple[tuple[str, str], ...]:
    return _own_values(IN_A_NAMESPACE.tls)


# ------------------------------------------------- a subclass defined here, its object made later
class Ctx(threading.local):
    def __init__(self, start: int = 0) -> None:
        self.n = start


def subclass_made_by_main() -> tuple[tuple[int, ...], int]:
    """r033 (CORRECT): each thread counts on its own ``n``, from ``__init__``'s 0."""
    ctx = Ctx()
    res: list[int] = []
    lk = threading.Lock()

    def w() -> None:
        for _ in range(3):
            ctx.n += 1
        with lk:
            res.append(ctx.n)

    run_copies(w, 2)
    return tuple(res), ctx.n


def subclass_made_by_a_worker() -> tuple[tuple[tuple[str, int], ...], int]:
    """CORRECT: a worker makes it with 5 and adds 1; another worker's first touch runs
    ``__init__(5)`` afresh and adds 10; main's too, and sees 5."""
    box: list[Ctx] = []
    seen: list[tuple[str, int]] = []
    ready = threading.Event()

    def maker() -> None:
        c = Ctx(5)
        c.n += 1
        box.append(c)
        seen.append(("maker", c.n))
        ready.set()

    def other() -> None:
        ready.wait()
        c = box[0]
        c.n += 10
        seen.append(("other", c.n))

    a, b = threading.Thread(target=maker), threading.Thread(target=other)
    a.start()
    b.start()
    a.join()
    b.join()
    return tuple(sorted(seen)), box[0].n
