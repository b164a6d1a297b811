"""Plain ``threading`` programs of review 10's rows 8-10 and 13 (``test_review10_readers.py``).

Rows 8-10: a writer updates two fields (or items) under its lock, a reader snapshots both through
C code it hands a reader: ``operator.attrgetter``, ``itemgetter``, ``map(attrgetter(...))``,
``json.dumps(p, default=vars)``, ``map(partial(getattr, p), ...)``, ``numpy.array(xs)``. Lock-free
the snapshot can be torn (a data race); ``locked=True`` takes the lock around it too (race free).

Row 13: two threads lazily import one helper module and read the list its body filled; the import
orders the body before the read, whichever way the second thread imports it. Reaching the module
without importing it (through ``sys.modules``, no synchronisation) is still a race."""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import operator
import sys
import threading
from collections.abc import Callable
from typing import Any

from tests.harness.program_threads import start_and_join

HELPER = "tests.harness.review10_lazy_helper"


class Pair:
    def __init__(self) -> None:
        self.a = 0
        self.b = 0


class Account:
    def __init__(self, balance: int) -> None:
        self.bal = balance


def _set_pair(p: Pair) -> None:
    p.a = 1
    p.b = 1


def _set_items(xs: list[int]) -> None:
    xs[0] = 1
    xs[1] = 1


def _move(accounts: list[Account]) -> None:
    accounts[0].bal -= 1
    accounts[1].bal += 1


def _snapshot(obj: Any, write: Callable[[Any], None], snap: Callable[[Any], object], locked: bool) -> None:
    """``write(obj)`` under a lock in one thread, ``snap(obj)`` in another (under it if ``locked``)."""
    lock = threading.Lock()

    def writer() -> None:
        with lock:
            write(obj)

    def reader() -> None:
        with lock if locked else contextlib.nullcontext():
            snap(obj)

    start_and_join(writer, reader)


def attrgetter_pair(locked: bool = False) -> None:
    _snapshot(Pair(), _set_pair, lambda p: operator.attrgetter("a", "b")(p), locked)


def attrgetter_sum(locked: bool = False) -> None:
    accounts = [Account(100), Account(100)]
    _snapshot(accounts, _move, lambda accts: sum(map(operator.attrgetter("bal"), accts)), locked)


def itemgetter_pair(locked: bool = False) -> None:
    _snapshot([0, 0], _set_items, lambda xs: operator.itemgetter(0, 1)(xs), locked)


def json_default_pair(locked: bool = False) -> None:
    _snapshot(Pair(), _set_pair, lambda p: json.dumps(p, default=vars), locked)


def getattr_map_pair(locked: bool = False) -> None:
    _snapshot(
        Pair(),
        _set_pair,
        lambda p: dict(zip("ab", map(functools.partial(getattr, p), "ab"), strict=True)),
        locked,
    )


def numpy_pair(locked: bool = False) -> None:
    import numpy as np

    _snapshot([0, 0], _set_items, lambda xs: np.array(xs), locked)


def _lazy_users(use: Callable[[], Any]) -> None:
    seen: list[int] = [0, 0]

    def first() -> None:
        seen[0] = len(use().LOADS)

    def second() -> None:
        seen[1] = len(use().LOADS)

    start_and_join(first, second)
    assert seen == [1, 1], seen


def _from_package() -> Any:
    from tests.harness import review10_lazy_helper

    return review10_lazy_helper


def _import_statement() -> Any:
    import tests.harness.review10_lazy_helper

    return tests.harness.review10_lazy_helper


def lazy_from_import() -> None:
    """t47's shape: ``from pkg import mod`` in both threads."""
    _lazy_users(_from_package)


def lazy_import_statement() -> None:
    _lazy_users(_import_statement)


def lazy_import_module() -> None:
    _lazy_users(lambda: importlib.import_module(HELPER))


def lazy_import_then_peek() -> None:
    """The first thread imports the module; the second reaches it through ``sys.modules`` (no
    import, no synchronisation) and reads the list its body filled: a race."""
    seen: list[int] = []

    def first() -> None:
        from tests.harness import review10_lazy_helper  # noqa: F401

    def second() -> None:
        helper = sys.modules.get(HELPER)
        if helper is not None:
            seen.append(len(helper.LOADS))

    start_and_join(first, second)
