"""``ControlledRuntime``: the ``reference.runtime.Runtime`` seam, implemented on the scheduler.

Besides the seam it offers what a test needs to state what must hold: ``invariant`` (checked
after every step), ``pending_work`` (turns a deadlock with a waiting thread into a lost wakeup),
``final`` (checked when every thread has finished) and ``trace`` (events shown in a failure).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from model_checks.harness.rt.clock import YieldState, read_clock
from model_checks.harness.rt.objects import Op
from model_checks.harness.rt.records import Watched
from model_checks.harness.rt.scheduler import Execution, UsageError
from model_checks.harness.sync.fifo import Fifo
from model_checks.harness.sync.handles import Atomic, AtomicReference, ThreadHandle
from model_checks.harness.sync.primitives import Condition, Event, Lock, Queue, Semaphore
from model_checks.harness.sync.timeouts import timeout_ns


class ControlledRuntime:
    """A ``Runtime`` whose every primitive is a scheduling point of one controlled execution."""

    def __init__(self, ex: Execution) -> None:
        self._ex = ex
        self._yield = YieldState(len(ex.objects), "yield")
        ex.add_object(self._yield)
        self._handles: dict[int, ThreadHandle] = {}

    # --- the seam -------------------------------------------------------------------------
    def lock(self, name: str = "") -> Lock:
        return Lock(self._ex, name)

    def rlock(self, name: str = "") -> Lock:
        return Lock(self._ex, name, reentrant=True)

    def condition(self, lock: Any = None, name: str = "") -> Condition:
        return Condition(self._ex, lock, name)

    def event(self, name: str = "") -> Event:
        return Event(self._ex, name)

    def semaphore(self, value: int = 1, name: str = "") -> Semaphore:
        return Semaphore(self._ex, value, name)

    def atomic_int(self, value: int = 0, name: str = "") -> Atomic:
        return Atomic(self._ex, value, name)

    def atomic_ref(self, value: Any = None, name: str = "") -> AtomicReference[Any]:
        return AtomicReference(self._ex, value, name)

    def queue(self, maxsize: int = 0, name: str = "") -> Queue:
        return Queue(self._ex, maxsize, name)

    def deque(self, name: str = "") -> Fifo[Any]:
        return Fifo(self._ex, name)

    def start_thread(self, target: Callable[[], None], name: str, *, daemon: bool = False) -> ThreadHandle:
        """Start a controlled thread. A ``daemon`` one does not keep the program going: once every
        other thread has finished the execution ends, wherever the daemon threads are."""
        st = self._ex.new_thread_state(name, target, daemon)
        handle = ThreadHandle(self._ex, st)
        self._handles[st.tid] = handle
        self._ex.perform(Op("spawn", st, (st.name,)))
        return handle

    def current_thread(self) -> Hashable:
        tid = self._ex.running_thread()
        if tid is None:
            raise UsageError("rt.current_thread() called outside a controlled thread")
        return self._handles.get(tid, tid)

    def thread_name(self) -> str:
        tid = self._ex.running_thread()
        return "<scheduler>" if tid is None else self._ex.threads[tid].name

    def yield_point(self, label: str = "") -> None:
        self._ex.perform(Op("yield", self._yield, (label,)))

    # --- virtual time ---------------------------------------------------------------------
    def sleep(self, seconds: float | int) -> None:  # (an int kept: CPython's words for a huge one)
        """A yield point that advances the virtual clock (with ``virtual_timeouts=False``, a wait
        that ends once no thread can run). What ``time.sleep`` refuses is refused in its words
        (3.11): NaN, ``inf`` and other lengths out of its clock's range, a negative one."""
        if timeout_ns(seconds) < 0:
            raise ValueError("sleep length must be non-negative")
        length = float(seconds)
        # with ``virtual_timeouts=False`` a sleep ends as a timed wait does then: once no thread
        # can run, earliest deadline first (``YieldState``); else it may end at any point
        timed = not self._ex.virtual_timeouts and length > 0
        self._ex.perform(Op("sleep", self._yield, (length,), timeout=length if timed else None))

    def monotonic(self) -> float:
        """The virtual clock: it moves only when a timeout expires or a thread sleeps, and a
        thread's reads a microsecond apart between (``clock.read_clock``)."""
        return read_clock(self._ex)

    # --- what must hold -------------------------------------------------------------------
    def invariant(
        self,
        check: Callable[[], object],
        name: str = "",
        *,
        watch: list[Any] | None = None,
        kinds: frozenset[str] | None = None,
    ) -> None:
        """Check ``check()`` after every step; raising or returning False is a failure.

        ``watch``: the list ``check`` reads (e.g. a tracer's records), when that is all it reads:
        ``check`` then runs only after the steps that changed the list's length (and once at the
        first step), which must be the only steps after which it could fail. ``kinds`` (with
        ``watch`` of records ``(thread, kind, fields)``, left in the list by ``check``): only
        after the steps that added a record of one of these kinds, the only ones ``check`` can
        fail on (``records.Watched``)."""
        label = name or getattr(check, "__name__", "invariant")
        if watch is None:
            if kinds is not None:
                raise UsageError("rt.invariant(kinds=...) needs the list it filters: watch=...")
            self._ex.hooks.invariants.append((label, check))
            return
        self._ex.hooks.invariants.append((label, Watched(check, watch, kinds)))

    def pending_work(self, predicate: Callable[[], bool]) -> None:
        """At a deadlock where some thread waits for a signal, ``predicate()`` true = lost wakeup."""
        self._ex.hooks.pending_work.append(predicate)

    def final(self, check: Callable[[], object]) -> None:
        """Run ``check()`` once every thread has finished; its return value is the outcome."""
        self._ex.hooks.final.append(check)

    def trace(self, events: Callable[[], list[object]]) -> None:
        """Where to read the trace events the code emitted, for the failure report."""
        self._ex.hooks.trace.append(events)
