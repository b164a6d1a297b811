"""Programs whose outcome hangs on an order DPOR took as commuting (session 46, review 13's F1
and F5): which thread drops the last reference to an object (where its finalizer runs, whether a
weak reference to it is dead), and whether a worker started while another may have ended gets
the ended one's ident. Each has a twin that holds whatever the order."""

from __future__ import annotations

import threading
import weakref

where: list[str] = []
sessions: dict[int, str] = {}


class Obj:
    pass


class Finalized:
    def __del__(self) -> None:
        where.append(threading.current_thread().name)


def _two_droppers(obj: object, locked: bool) -> tuple[threading.Thread, threading.Thread]:
    lock = threading.Lock()
    box_a, box_b = [obj], [obj]

    def a() -> None:
        with lock:
            box_a.clear()

    def b() -> None:
        if locked:
            with lock:
                box_b.clear()
        else:
            box_b.clear()

    return threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")


def _run(ta: threading.Thread, tb: threading.Thread) -> None:
    ta.start()
    tb.start()
    ta.join()
    tb.join()


def _callback_fired() -> list[str]:
    """Two threads each drop a reference to an object with a weak reference's callback: where it
    ran (p10)."""
    fired: list[str] = []
    o = Obj()
    r = weakref.ref(o, lambda _: fired.append(threading.current_thread().name))
    ta, tb = _two_droppers(o, False)
    del o
    _run(ta, tb)
    assert r() is None
    return fired


def callback_in_b() -> None:
    """The callback assumed to run in B: it runs where the last reference goes."""
    fired = _callback_fired()
    assert fired == ["B"], fired


def callback_anywhere() -> None:
    """The twin: the callback ran once, in one of the two."""
    fired = _callback_fired()
    assert fired in (["A"], ["B"]), fired


def _finalized_where() -> list[str]:
    """The same with a ``__del__`` (p32)."""
    where.clear()
    ta, tb = _two_droppers(Finalized(), False)
    _run(ta, tb)
    return where


def finalizer_in_b() -> None:
    found = _finalized_where()
    assert found == ["B"], found


def finalizer_anywhere() -> None:
    found = _finalized_where()
    assert found in (["A"], ["B"]), found


def _seen_alive(strict: bool) -> list[bool]:
    """B looks its object up by weak reference while A may drop the last strong one (p37):
    ``strict``, it takes the object to be alive; else either answer."""
    o = Obj()
    r = weakref.ref(o)
    box = [o]
    del o
    seen: list[bool] = []

    def b() -> None:
        x = r()
        seen.append(x is not None if strict else x is None or isinstance(x, Obj))

    tb = threading.Thread(target=b)
    ta = threading.Thread(target=box.clear)
    tb.start()
    ta.start()
    tb.join()
    ta.join()
    return seen


def still_alive() -> None:
    assert _seen_alive(True) == [True], "object already collected"


def alive_or_not() -> None:
    seen = _seen_alive(False)
    assert seen == [True], seen


def _session(lock: threading.Lock, remove: bool) -> None:
    me = threading.get_ident()
    with lock:
        if me in sessions:
            raise RuntimeError("got the session of a finished thread")
        sessions[me] = threading.current_thread().name
    if remove:
        with lock:
            del sessions[me]


def sessions_overlapping(remove: bool = False) -> None:
    """Two workers started one after the other, neither joined first: the second gets the
    first's ident where the first ended before it was started."""
    sessions.clear()
    lock = threading.Lock()
    t1 = threading.Thread(target=_session, args=(lock, remove))
    t1.start()
    t2 = threading.Thread(target=_session, args=(lock, remove))
    t2.start()
    t1.join()
    t2.join()


def sessions_removed() -> None:
    sessions_overlapping(remove=True)


def plain_counter() -> None:
    """An ordinary program (no ident read, no weak reference, no finalizer): as before."""
    lock = threading.Lock()
    n = [0]

    def work() -> None:
        with lock:
            n[0] += 1

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert n[0] == 3


def _generator() -> object:
    try:
        yield 1
        yield 2
    finally:
        where.append(threading.current_thread().name)


def generator_finally_in_b() -> None:
    """An abandoned generator's ``finally`` assumed to run in B (p64): it runs where it is freed."""
    where.clear()
    g = _generator()
    next(g)  # type: ignore[call-overload]
    ta, tb = _two_droppers(g, False)
    del g
    _run(ta, tb)
    assert where == ["B"], where


def counted_alive() -> None:
    """B counts a ``WeakSet``'s members while A may drop the last strong reference to one (p65)."""
    live: weakref.WeakSet[Obj] = weakref.WeakSet()
    o = Obj()
    live.add(o)
    box = [o]
    del o
    counts: list[int] = []
    tb = threading.Thread(target=lambda: counts.append(len(live)))
    ta = threading.Thread(target=box.clear)
    tb.start()
    ta.start()
    tb.join()
    ta.join()
    assert counts == [1], counts
