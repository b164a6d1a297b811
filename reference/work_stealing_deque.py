"""The Chase-Lev work-stealing deque (Chase & Lev 2005; Lê et al. 2013) on the runtime seam.

The owner pushes and takes at the *bottom* with plain loads and stores of its
own words; thieves steal at the *top* with one CAS on ``top``. The only
contended case, one element left, is settled by that CAS: the owner's take of
the last element CASes ``top`` too, and whoever wins gets the element.

The buffer is a circular array (a Python list) whose length is a power of
two; index ``i`` lives in slot ``i & (len - 1)``. Indices never wrap (Python
ints are unbounded). A full push grows it: copy ``[top, bottom)`` into an array
twice as long, then publish it with one store to ``buffer``; a thief that loaded
the old array still reads the right element (the old array is never written
again) and its CAS decides whether the element was its own.

What is atomic: ``top``, ``bottom`` and ``buffer`` are runtime atomics (each
access a scheduling point under the harness). Slot reads and writes are plain
list accesses, atomic under the GIL; under a checking runtime each shared one
(the push's write, the steal's read) is announced by a store or load of an
extra atomic cell (``slots``), so a partial-order reduction cannot hide the
order of the two (without it DPOR took them for independent and missed
``steal-reads-after-cas``).
Once a thief has seen ``top < bottom``, the slot of index ``top`` is not
rewritten while ``top`` stays put, and a thief whose read is stale loses its
CAS. The owner keeps private copies of ``bottom`` and of the current array and
its index mask (``_b``, ``_buf``, ``_mask``), which only it reads, and a lower bound
of ``top`` (``_t``, the value it last loaded: ``top`` only grows): a push loads
``top`` only when the bound says the array may be full, and an untraced take
returns empty without an access when the bound says the deque is.

Memory model: sequentially consistent atomics (CPython's GIL; the harness).
The fence the algorithm needs between the owner's ``bottom`` store and its
``top`` load on x86/ARM is therefore implicit here; its absence is a TSO bug
the spec's TSO mode checks (``missing-fence``), not something this code can show.

Tracing: with a tracer, each operation's linearisation point (push: the
``bottom`` store; take: the ``top`` load or CAS; steal: the ``bottom`` load
when empty, else the CAS) and its event happen under one lock per deque, so
the log order *is* a linearisation even with real threads (the exact ``size``
of a push needs ``top`` read at the same instant). The lock spans that one
atomic step and its emit, never the window between two steps of one operation
(the take's ``top`` load and its CAS, the steal's read and its CAS): the races
the algorithm settles stay open when traced, so a bug in them (a take or
steal without its CAS) shows in the trace too. Code that takes part in the
race takes the lock through ``logged_step()``. Without a tracer there is no lock and
each operation pays one ``is not None`` test.

Mutant seams (each small, overridden by ``reference_mutants``): ``_slot`` (the
thieves' index; the owner's is ``_mask``, which ``_grow`` sets), ``_grow``,
``_claim_last``, ``_steal_read``, ``_steal_commit``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Generic, TypeVar

from .runtime import AtomicInt, LockLike, Runtime, ThreadingRuntime
from .tracing import Tracer

T = TypeVar("T")

OK = "ok"
EMPTY = "empty"
LOST = "lost"  # take: the owner lost the one-element race to a thief
ABORT = "abort"  # steal: the CAS on top failed (another thief or the owner won)

Label = Callable[[Any], object]
_UNTRACED: AbstractContextManager[object] = nullcontext()


def _identity(item: Any) -> object:
    return item


class ChaseLevDeque(Generic[T]):
    """One worker's deque. ``push``/``take`` only from the owner's thread; ``steal`` from any other."""

    def __init__(
        self,
        runtime: Runtime,
        capacity: int,
        *,
        owner: int = 0,
        tracer: Tracer | None = None,
        label: Label = _identity,
    ) -> None:
        if capacity < 1 or capacity & (capacity - 1):
            raise ValueError(f"capacity must be a power of two, got {capacity}")
        self.owner = owner
        self._rt = runtime
        self._tracer = tracer
        self._label = label
        name = f"deque[{owner}]"
        self._top = runtime.atomic_int(0, name=f"{name}.top")
        self._bottom = runtime.atomic_int(0, name=f"{name}.bottom")
        buf: list[Any] = [None] * capacity
        self._buffer = runtime.atomic_ref(buf, name=f"{name}.buffer")
        self.initial_capacity = capacity
        # The owner's private copies (only the owner's thread reads or writes them), and a lower
        # bound of top: top only grows, so while ``_b - _t`` is below the array's length the array
        # is not full and the push skips loading top; while ``_b <= _t`` the deque is empty.
        self._b = 0
        self._buf = buf
        self._mask = capacity - 1  # _buf's: the owner indexes without a call (thieves use _slot)
        self._t = 0
        self._trace_lock: LockLike | None = runtime.lock(name=f"{name}.trace") if tracer is not None else None
        # Slots are plain list items, invisible to a checker's partial-order reduction: under any
        # runtime but the production one, the owner's slot write and a thief's slot read are
        # announced as a store and a load of one extra atomic cell, so the two are dependent and
        # every order of them is explored (thieves' reads stay independent of each other). With
        # real threads the GIL makes each access atomic and nothing is announced.
        self._slots: AtomicInt | None = (
            None if type(runtime) is ThreadingRuntime else runtime.atomic_int(0, name=f"{name}.slots")
        )

    # -- the owner ----------------------------------------------------------

    def push(self, item: T) -> None:
        """Add ``item`` at the bottom (owner only); grows the array when it is full."""
        b = self._b
        buf = self._buf
        if b - self._t >= len(buf):  # maybe full: only then is top worth an atomic load
            t = self._t = self._top.load()
            if b - t >= len(buf):
                buf = self._grow(buf, t, b)
        slots = self._slots
        if slots is not None:
            slots.store(b)
        buf[b & self._mask] = item
        lock = self._trace_lock
        if lock is None:
            self._bottom.store(b + 1)  # the linearisation point: the element is visible to thieves
            self._b = b + 1
            return
        with lock:
            self._bottom.store(b + 1)
            self._b = b + 1
            self._emit(
                "push", {"worker": self.owner, "task": self._label(item), "size": b + 1 - self._top.load()}
            )

    def _slot(self, index: int, buf: list[Any]) -> int:
        return index & (len(buf) - 1)

    def _grow(self, old: list[Any], top: int, bottom: int) -> list[Any]:
        new: list[Any] = [None] * (2 * len(old))
        for i in range(top, bottom):
            new[i & (len(new) - 1)] = old[i & (len(old) - 1)]
        self._buffer.store(new)  # publish: thieves from now on read the new array
        self._buf = new
        self._mask = len(new) - 1
        if self._tracer is not None:
            self._emit("resize", {"worker": self.owner, "capacity": len(new)})
        return new

    def take(self) -> tuple[str, T | None]:
        """Pop the bottom (newest) element (owner only): ``(OK, item)``, ``(EMPTY, None)`` or
        ``(LOST, None)`` when a thief won the last element."""
        if self._trace_lock is not None:
            return self._take_traced()
        b = self._b
        if b <= self._t:
            # Empty, known without an access: top only grows, only we raise bottom.
            return EMPTY, None
        b -= 1
        self._bottom.store(b)  # reserve index b before looking at top (the fence point)
        self._b = b
        t = self._t = self._top.load()
        buf = self._buf
        if t < b:  # more than one element: index b is the owner's alone
            return OK, buf[b & self._mask]
        if t == b:  # the last element: race the thieves for it with one CAS
            item = buf[b & self._mask]
            won = self._claim_last(t)
            self._bottom.store(t + 1)
            self._b = t + 1
            return (OK, item) if won else (LOST, None)
        self._bottom.store(t)  # empty: undo the reservation (t == b + 1)
        self._b = t
        return EMPTY, None

    def _claim_last(self, t: int) -> bool:
        """Claim index ``t``, the last element, against the thieves: the CAS on ``top``."""
        return self._top.compare_and_swap(t, t + 1)

    def _take_traced(self) -> tuple[str, T | None]:
        # The untraced take with each linearisation point and its event in one locked step: the
        # top load (more than one element, or empty) or, for the last element, the claim. No
        # shortcut for a known-empty deque: every take is logged at its top load.
        b = self._b - 1
        self._bottom.store(b)
        self._b = b
        with self.logged_step():
            t = self._top.load()
            if t < b:
                item = self._buf[b & self._mask]
                self._trace_take(OK, item)
                return OK, item
            if t > b:
                self._bottom.store(t)
                self._b = t
                self._trace_take(EMPTY, None)
                return EMPTY, None
        item = self._buf[b & self._mask]
        with self.logged_step():  # a thief's CAS may come between the two steps, as untraced
            won = self._claim_last(t)
            self._trace_take(OK if won else LOST, item if won else None)
        self._bottom.store(t + 1)
        self._b = t + 1
        return (OK, item) if won else (LOST, None)

    def logged_step(self) -> AbstractContextManager[object]:
        """The trace lock around one atomic step and its event (a no-op context untraced). A reader
        that must see the deque as the log has it (the pool's park re-check) holds it too."""
        lock = self._trace_lock
        return _UNTRACED if lock is None else lock

    def _trace_take(self, result: str, item: Any) -> None:
        if self._tracer is not None:
            task = self._label(item) if result == OK else None
            self._emit("take", {"worker": self.owner, "task": task, "result": result})

    # -- thieves ------------------------------------------------------------

    def steal(self, thief: int) -> tuple[str, T | None]:
        """Take the top (oldest) element from another thread: ``(OK, item)``, ``(EMPTY, None)``,
        or ``(ABORT, None)`` when the CAS lost (the caller may retry)."""
        t = self._top.load()
        lock = self._trace_lock
        if lock is None:
            if t >= self._bottom.load():
                return EMPTY, None
            return self._steal_commit(thief, t, self._steal_read(t))
        with lock:
            if t >= self._bottom.load():
                self._trace_steal(thief, EMPTY, None)
                return EMPTY, None
        return self._steal_commit(thief, t, self._steal_read(t))

    def _steal_read(self, t: int) -> Any:
        # Read before the CAS: after it, the owner may reuse the slot (crossbeam-deque, 2021).
        buf = self._buffer.load()
        slots = self._slots
        if slots is not None:
            slots.load()
        return buf[self._slot(t, buf)]

    def _steal_commit(self, thief: int, t: int, item: Any) -> tuple[str, T | None]:
        if self._trace_lock is None:
            return (OK, item) if self._top.compare_and_swap(t, t + 1) else (ABORT, None)
        with self.logged_step():  # the CAS and its event: one step
            if self._top.compare_and_swap(t, t + 1):
                self._trace_steal(thief, OK, item)
                return OK, item
            self._trace_steal(thief, ABORT, None)
            return ABORT, None

    def _trace_steal(self, thief: int, result: str, item: Any) -> None:
        if self._tracer is not None:
            task = self._label(item) if result == OK else None
            self._emit("steal", {"worker": thief, "victim": self.owner, "task": task, "result": result})

    # -- anyone -------------------------------------------------------------

    def looks_nonempty(self) -> bool:
        """Does the deque hold an element right now? (Two atomic loads: a hint, exact only if quiet.)"""
        return self._top.load() < self._bottom.load()

    def __len__(self) -> int:
        return max(0, self._bottom.load() - self._top.load())

    @property
    def capacity(self) -> int:
        return len(self._buffer.load())

    def drain(self) -> list[T]:
        """Every element, oldest first, emptying the deque. Only when no other thread uses it."""
        top, bottom = self._top.load(), self._bottom.load()
        buf = self._buffer.load()
        items = [buf[self._slot(i, buf)] for i in range(top, bottom)]
        self._top.store(bottom)
        return items

    def _emit(self, event: str, fields: dict[str, Any]) -> None:
        tracer = self._tracer
        assert tracer is not None
        tracer.emit(self._rt.thread_name(), event, fields)


__all__ = ["ABORT", "EMPTY", "LOST", "OK", "ChaseLevDeque"]
