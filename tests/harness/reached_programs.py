"""Programs whose synchronisation objects, made at import, are reached only through the module's
data (``patch_reach``): in a dict, a tuple, a named tuple, a default argument, a closure, a
partial, a ``__slots__`` field, an object inside another, a class's list. Each is correct: two
threads add one under the lock, so patch mode must prove it (a real lock left in place orders
nothing the explorer sees: a false data race, or a hang on the real condition)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar, NamedTuple

from tests.harness.program_threads import join_all, start_and_join


class Box:
    def __init__(self) -> None:
        self.n = 0


def _twice(inc: Callable[[Box], None]) -> None:
    box = Box()
    join_all([threading.Thread(target=inc, args=(box,)) for _ in range(2)])
    assert box.n == 2, box.n


def _add(box: Box, lock: threading.Lock) -> None:
    with lock:
        box.n += 1


LOCKS = {"count": threading.Lock()}
PAIR = (threading.Lock(), threading.Event())


class Guarded(NamedTuple):
    lock: threading.Lock
    name: str


GUARDED = Guarded(threading.Lock(), "guarded")


def _default(box: Box, lock: threading.Lock = threading.Lock()) -> None:  # noqa: B008
    _add(box, lock)


def _closure() -> Callable[[Box], None]:
    lock = threading.Lock()
    return lambda box: _add(box, lock)


CLOSED = _closure()
PARTIAL = functools.partial(_add, lock=threading.Lock())


class Slotted:
    __slots__ = ("lock",)

    def __init__(self) -> None:
        self.lock = threading.Lock()


SLOTTED = Slotted()


class Inner:
    def __init__(self) -> None:
        self.lock = threading.Lock()


class Outer:
    def __init__(self) -> None:
        self.inner = Inner()


OUTER = Outer()


class Registry:
    locks: ClassVar[list[threading.Lock]] = [threading.Lock()]


CONDITIONS = {"ready": threading.Condition()}
IN_A_SET = {threading.Lock()}  # (session 41: a set's items were not walked)
NESTED = {"locks": [threading.Lock()]}  # (each execution copies the list: ``patch_state``)


def in_a_dict() -> None:
    _twice(lambda box: _add(box, LOCKS["count"]))


def in_a_tuple() -> None:
    _twice(lambda box: _add(box, PAIR[0]))


def in_a_named_tuple() -> None:
    _twice(lambda box: _add(box, GUARDED.lock))


def as_a_default() -> None:
    _twice(_default)


def in_a_closure() -> None:
    _twice(CLOSED)


def in_a_partial() -> None:
    _twice(PARTIAL)


def in_a_slot() -> None:
    _twice(lambda box: _add(box, SLOTTED.lock))


def inside_another_object() -> None:
    _twice(lambda box: _add(box, OUTER.inner.lock))


def in_a_class_list() -> None:
    _twice(lambda box: _add(box, Registry.locks[0]))


def in_a_set() -> None:
    _twice(lambda box: _add(box, next(iter(IN_A_SET))))


def in_a_list_in_a_dict() -> None:
    _twice(lambda box: _add(box, NESTED["locks"][0]))


def condition_in_a_dict() -> None:
    ready = CONDITIONS["ready"]
    box = Box()

    def consumer() -> None:
        with ready:
            while not box.n:
                ready.wait()

    def producer() -> None:
        with ready:
            box.n = 1
            ready.notify()

    start_and_join(consumer, producer)


# A pool and a thread made at import: each execution makes its own (``patch_imported._runner``).
POOL = ThreadPoolExecutor(max_workers=1)


def _double(x: int) -> int:
    return 2 * x


def pool_made_at_import() -> None:
    futures = [POOL.submit(_double, i) for i in range(2)]
    assert [f.result() for f in futures] == [0, 2]


def pool_never_shut_down() -> None:
    pool = ThreadPoolExecutor(max_workers=1)  # the interpreter's exit ends its worker
    assert pool.submit(_double, 2).result() == 4


SEEN = Box()


def _see() -> None:
    SEEN.n += 1


WORKER = threading.Thread(target=_see)


def thread_made_at_import_read_before_join() -> None:
    WORKER.start()
    seen = SEEN.n  # BUG: read before the join: a data race with the worker's write
    WORKER.join()
    assert seen in (0, 1)
