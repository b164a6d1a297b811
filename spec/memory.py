"""Shared memory for specs: sequential consistency (SC) or x86-TSO store buffers.

A spec whose threads communicate through plain loads and stores keeps one
``Memory`` value among its variables and does every shared access through it:

* ``load(thread, loc)`` — the thread's own newest buffered store to ``loc``,
  else main memory (a TSO thread always sees its own stores);
* ``store(thread, loc, value)`` — SC: straight to memory; TSO: appended to the
  thread's FIFO store buffer, invisible to the other threads for now;
* ``flush(thread)`` — TSO: the oldest buffered store reaches memory (``None``
  when the buffer is empty). A spec declares one internal action per thread
  that calls it, so buffers drain at every possible moment;
* ``fence(thread)`` — ``MFENCE``: the buffer drains. A fence step is enabled
  in every state (it drains the buffer in the same step): waiting for the
  drain is the same as letting ``flush`` run first, which the interleavings
  already include;
* ``cas(thread, loc, expected, new)`` — a locked instruction: a full fence,
  then compare-and-swap in memory, atomically;
* ``publish(cells)`` — writes to memory no other thread can reach yet (a
  freshly allocated array before its pointer is stored): with FIFO buffers
  they are visible before the pointer that makes them reachable, so they may
  go straight to memory without changing any behaviour.

Under SC every buffer stays empty, ``flush`` is never enabled, and ``fence``
changes nothing: a spec checked with ``model="sc"`` is its interleaving
semantics. TSO is x86's model: stores are not reordered with stores, loads not
with loads, and a load may pass an earlier store to another location (the
store-load reordering that Dekker-style protocols — and the Chase-Lev take —
need a fence against).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple

from spec.language import Function

SC = "sc"
TSO = "tso"
MODELS = (SC, TSO)

Loc = Hashable
Store = tuple[Loc, Any]  # (location, value) in a store buffer


class Memory(NamedTuple):
    """Main memory plus one FIFO store buffer per thread (always empty under SC)."""

    model: str
    cells: Function[Loc, Any]
    buffers: Function[Hashable, tuple[Store, ...]]

    @staticmethod
    def initial(model: str, threads: Iterable[Hashable], cells: Iterable[tuple[Loc, Any]]) -> Memory:
        if model not in MODELS:
            raise ValueError(f"memory model must be one of {', '.join(MODELS)}, not {model!r}")
        pairs = list(cells)
        return Memory(
            model,
            Function([loc for loc, _ in pairs], [v for _, v in pairs]),
            Function.const(tuple(threads), ()),
        )

    def load(self, thread: Hashable, loc: Loc) -> Any:
        for where, value in reversed(self.buffers[thread]):
            if where == loc:
                return value
        return self.cells[loc]

    def store(self, thread: Hashable, loc: Loc, value: Any) -> Memory:
        if self.model == SC:
            return self._replace(cells=self.cells.except_(loc, value))
        _ = self.cells[loc]  # a store to a location that does not exist is a spec error, now
        return self._replace(buffers=self.buffers.except_(thread, (*self.buffers[thread], (loc, value))))

    def flush(self, thread: Hashable) -> Memory | None:
        pending = self.buffers[thread]
        if not pending:
            return None
        (loc, value), rest = pending[0], pending[1:]
        return Memory(self.model, self.cells.except_(loc, value), self.buffers.except_(thread, rest))

    def fence(self, thread: Hashable) -> Memory:
        pending = self.buffers[thread]
        if not pending:
            return self
        cells = self.cells
        for loc, value in pending:
            cells = cells.except_(loc, value)
        return Memory(self.model, cells, self.buffers.except_(thread, ()))

    def cas(self, thread: Hashable, loc: Loc, expected: Any, new: Any) -> tuple[Memory, bool]:
        """``LOCK CMPXCHG``: drain the thread's buffer, then compare and swap in memory."""
        mem = self.fence(thread)
        if mem.cells[loc] != expected:
            return mem, False
        return mem._replace(cells=mem.cells.except_(loc, new)), True

    def publish(self, cells: Iterable[tuple[Loc, Any]]) -> Memory:
        """Initialise memory no other thread can reach yet (see the module docstring)."""
        values = self.cells
        for loc, value in cells:
            values = values.except_(loc, value)
        return self._replace(cells=values)

    def pending(self, thread: Hashable) -> tuple[Store, ...]:
        return self.buffers[thread]

    def renamed(self, thread: Callable[[Hashable], Hashable], loc: Callable[[Loc], Loc]) -> Memory:
        """The same memory with threads and locations renamed (for symmetry reductions).

        The renaming must be a permutation of each domain: the domains keep their order.
        """
        where = {loc(k): v for k, v in self.cells.items()}
        who = {thread(t): tuple((loc(a), v) for a, v in b) for t, b in self.buffers.items()}
        return Memory(
            self.model,
            self.cells.with_values(where[k] for k in self.cells.domain()),
            self.buffers.with_values(who[t] for t in self.buffers.domain()),
        )

    def show(self) -> dict[str, Any]:
        shown: dict[str, Any] = {str(k): v for k, v in self.cells.items()}
        for t, pending in self.buffers.items():
            if pending:
                shown[f"buffer {t}"] = [f"{a}={v}" for a, v in pending]
        return shown
