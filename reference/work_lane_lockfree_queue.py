"""The lock-free lane's queue: a bounded MPMC FIFO whose push and pop are linearizable.

The whole queue is one immutable tuple in one ``AtomicRef`` cell. A push loads the tuple and
either sees it full (the load is where ``full`` takes effect) or CASes in a copy with the item
appended (the CAS is where the push takes effect); a pop loads and either sees it empty or CASes
in the tail. A CAS that loses to another thread's loads again, so the queue is lock-free: some
thread's CAS always succeeds. It has no lock of its own and no lane mutex around it.

Why a copied tuple and not a ring buffer (what a C++ port uses, e.g. Vyukov's bounded MPMC
queue): each operation is then exactly one atomic step, as the spec's ``Push``/``Pop`` are, so
the harness explores the lane algorithm and not a second algorithm inside the queue; and a
ring buffer's push is itself two steps (claim a slot, publish it), during which a consumer can
see the queue empty although a later push finished: not linearizable. Copying costs O(length)
per operation, which is fine for a reference and its tests, not for a production queue.

The CAS compares by identity; that is ABA-safe here because the expected tuple is held by the
thread that loaded it, so its identity cannot be reused, and a tuple never changes.
"""

from __future__ import annotations

from enum import Enum
from typing import Final, Generic, Literal, TypeVar

from .runtime import AtomicRef, Runtime

T = TypeVar("T")


class Empty(Enum):
    """What ``pop`` returns when the queue holds nothing."""

    EMPTY = "empty"


EMPTY: Final = Empty.EMPTY


class BoundedQueue(Generic[T]):
    """A FIFO of at most ``capacity`` items shared by any number of producers and consumers."""

    __slots__ = ("_cell", "capacity")

    def __init__(self, runtime: Runtime, capacity: int, name: str = "") -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self._cell: AtomicRef[tuple[T, ...]] = runtime.atomic_ref((), name=name)

    def push(self, item: T) -> bool:
        """Append ``item``; False (nothing appended) when the queue is full."""
        cell = self._cell
        while True:
            items = cell.load()
            if len(items) >= self.capacity:
                return False
            if cell.compare_and_swap(items, (*items, item)):
                return True

    def pop(self) -> T | Literal[Empty.EMPTY]:
        """Remove and return the oldest item, or ``EMPTY``."""
        cell = self._cell
        while True:
            items = cell.load()
            if not items:
                return EMPTY
            if cell.compare_and_swap(items, items[1:]):
                return items[0]

    def __len__(self) -> int:
        """How many items it holds now (one atomic load)."""
        return len(self._cell.load())


__all__ = ["EMPTY", "BoundedQueue", "Empty"]
