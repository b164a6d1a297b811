"""Session 47 (outside review 14, A1, A2, C1): a ``threading`` factory captured at import, held
somewhere other than a module global, each idiom with a correct program and a buggy twin.

The lock idioms (``bump``): two threads add one to a counter under a lock the factory made, read
and write in one hold (correct) or in two (``split``: a lost update the locks allow), with a sleep
held inside so that a real lock, blocking the greenlets' one OS thread, hangs the check. The thread
idioms (``count_in_threads``): threads the factory made add one under a lock (correct) or without
it (a data race)."""

from __future__ import annotations

import _thread
import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.harness.program_threads import join_all, run_copies


@dataclass
class Counter:  # p85min: ``__init__`` holds the factory in a closure cell
    n: int = 0
    lock: Any = field(default_factory=threading.Lock)


@dataclass
class ReentrantCounter:  # p105
    n: int = 0
    lock: Any = field(default_factory=threading.RLock)


USER_LOCKS: defaultdict[str, Any] = defaultdict(threading.Lock)  # p89
_GUARD = threading.Lock()  # (the per-user locks are made under it)


class DefaultArgument:  # p90
    def __init__(self, lock_factory: Callable[[], Any] = threading.Lock) -> None:
        self.lock = lock_factory()
        self.n = 0


class KeywordDefault:  # (the keyword-only form, and ``_thread``'s name for the same factory)
    def __init__(self, *, lock_factory: Callable[[], Any] = _thread.allocate_lock) -> None:
        self.lock = lock_factory()
        self.n = 0


class ClassAttribute:  # p107: a builtin on a class does not bind (``self`` is not passed)
    lock_factory = threading.Lock

    def __init__(self) -> None:
        self.lock = self.lock_factory()
        self.n = 0


class ReentrantClassAttribute:  # ``threading.RLock`` is a Python function: it binds, as it did
    lock_factory = threading.RLock

    def __init__(self) -> None:
        self.lock = self.lock_factory()
        self.n = 0


LOCK_MAKERS: dict[str, Callable[[], Any]] = {
    "dataclass": Counter,
    "dataclass_rlock": ReentrantCounter,
    "defaultdict": lambda: _user("u1"),
    "default_argument": DefaultArgument,
    "keyword_default": KeywordDefault,
    "class_attribute": ClassAttribute,
    "class_attribute_rlock": ReentrantClassAttribute,
}


class _User:
    def __init__(self, name: str) -> None:
        self.name = name
        self.n = 0

    @property
    def lock(self) -> Any:
        with _GUARD:
            return USER_LOCKS[self.name]


def _user(name: str) -> _User:
    USER_LOCKS.clear()  # (an earlier check's lock, made in its execution, goes)
    return _User(name)


def bump(idiom: str, split: bool) -> int:
    """Two threads add one to the counter of ``LOCK_MAKERS[idiom]()`` under its lock."""
    c = LOCK_MAKERS[idiom]()

    def add() -> None:
        with c.lock:
            v = c.n
            time.sleep(0.001)  # (held: the other thread waits for the lock)
            if not split:
                c.n = v + 1
        if split:
            with c.lock:
                c.n = v + 1

    run_copies(add)
    assert c.n == 2, c.n
    return int(c.n)


class Crawler:  # p95, p94
    def __init__(self, thread_cls: Any = threading.Thread) -> None:
        self.thread_cls = thread_cls


spawn = functools.partial(threading.Thread, daemon=True)  # p93b, p93


def count_in_threads(idiom: str, locked: bool) -> int:
    """Two threads that ``Crawler().thread_cls`` or ``spawn`` made add one to a counter."""
    make = Crawler().thread_cls if idiom == "default_argument" else spawn
    lock = threading.Lock()
    counts = [0]

    def add() -> None:
        if locked:
            with lock:
                counts[0] += 1
        else:
            v = counts[0]
            counts[0] = v + 1

    join_all([make(target=add) for _ in range(2)])
    assert counts[0] == 2, counts
    return counts[0]


def captured() -> dict[str, object]:
    """Each factory where the program holds it, by where: what patching replaces and puts back."""
    init = Counter.__init__
    contents = (cell.cell_contents for cell in init.__closure__ or ())
    cells = dict(zip(init.__code__.co_freevars, contents, strict=True))
    return {
        "dataclass cell": cells["_dflt_lock"],
        "dataclass field": Counter.__dataclass_fields__["lock"].default_factory,
        "defaultdict": USER_LOCKS.default_factory,
        "default": DefaultArgument.__init__.__defaults__,
        "keyword default": dict(KeywordDefault.__init__.__kwdefaults__ or {}),
        "class attribute": vars(ClassAttribute)["lock_factory"],
        "class attribute rlock": vars(ReentrantClassAttribute)["lock_factory"],
        "thread default": Crawler.__init__.__defaults__,
        "partial": spawn.func,
    }
