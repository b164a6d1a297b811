"""The Worker Pool: a bounded FIFO ready queue of work items and the threads that run them.

The pool knows nothing of lanes or items: a ``WorkItem`` is a callback plus the
lane number the trace names it by. The queue is guarded by one mutex; workers
wait on one condition of it, ``Stop`` on another, and a work item always runs
outside the mutex.

A ``submit`` never fails in a correct scheduler: each lane holds at most one
reservation and the queue has room for one work item per lane. A full queue
therefore means a broken invariant and raises ``RuntimeError``.

Wake-ups: a submission wakes a parked worker only when none is already on its
way (``_waking``: notified, not yet back from its wait), and a worker that takes
a work item and leaves others queued wakes the next the same way. Whoever
returns from the wait re-checks the queue in the critical section in which it
would park again, so no wake-up is lost, and while a worker is parked no queued
item waits behind a running one (a blocking ``invoke`` does not hold up other
lanes). A thundering herd of one notify per submission is what this replaces: on
more than one core each wake-up hands the GIL to another core. Untraced,
``submit`` and ``_take`` make no call while they hold the mutex but to wait or
wake (see ``work_lane``'s docstring for why).

The pool also counts the submissions that posts owed (``submit(item,
owed=True)``), so that Stop can wait for the ones still outstanding when it
closed admission (``wait_submissions``) without posts touching any lock of the
scheduler's.

If the pool's own code or a work item raises an ``Exception`` (a bug: the
scheduler's callbacks report user errors themselves), the pool logs it and
hands it to ``on_failure`` (the scheduler's failed state). ``abandon`` then lets
every waiter of ``wait_submissions`` and ``wait_quiescent`` go, since a fault
may have left the counts they wait on wrong.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Hashable
from types import TracebackType
from typing import Any, Protocol

from .runtime import INTERPRETER_LOCKS, LockLike, Runtime, ThreadHandle, TokenLock
from .tracing import Tracer

_log = logging.getLogger(__name__)


class CriticalSection(Protocol):
    """A lock's ``with`` object; ``section + item`` appends ``item`` when it was given an ``append``."""

    def __enter__(self) -> object: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None, /
    ) -> None: ...

    def __add__(self, item: Any, /) -> object: ...


def critical_section(lock: LockLike, append: Callable[[Any], object] | None = None) -> CriticalSection:
    """``lock`` for a ``with`` statement, about a third cheaper to enter and leave than ``lock`` itself.

    ``with lock`` looks ``__enter__`` and ``__exit__`` up on the lock's type and binds each to
    the lock: two allocations and two frees per block. Here they are looked up on a class of
    this lock's own, whose attributes are the lock's already bound methods. The lock, its
    acquire and its release are the same, and entering is still a ``with`` (no call returns
    between the acquire and the block: see ``work_lane``'s docstring).

    ``append`` (a lane's FIFO's) becomes the class's ``__add__``: ``section + item`` calls it
    through a binary operator, which, unlike a call, is not followed by a check for a GIL drop
    request, and costs about half of the no-call append a deque has (``queue += (item,)``, a
    tuple and its iterator). That is CPython 3.11's evaluation loop (its eval-breaker checks after
    calls and backward jumps, not after binary operators); on another interpreter the section is
    still correct, only its cost differs. One class per lock: about 1.7 kB and 15 us, once, and
    reclaimed by the cyclic collector (a class refers to itself) once its lane is gone.
    """
    methods: dict[str, object]
    if isinstance(lock, TokenLock):  # its queue's ``get`` and ``put``, as the lock's own class has them
        methods = {"__slots__": (), "__enter__": lock.tokens.get, "__exit__": lock.tokens.put}
    elif type(lock) in INTERPRETER_LOCKS:
        methods = {"__slots__": (), "__enter__": lock.__enter__, "__exit__": lock.__exit__}
    else:
        # a runtime's lock that makes its own section (the harness's controlled lock: the same
        # enter, exit and append, in its compiled code), else the shared class below
        own = getattr(lock, "critical_section", None)
        return _Section(lock, append) if own is None else own(append)
    if append is not None:
        methods["__add__"] = append
    section: CriticalSection = type("CriticalSection", (), methods)()
    return section


# Only the interpreter's own locks are worth a class each: their ``with`` is what the class makes
# cheaper. Any other lock (a test's double) gets one shared class with the same meaning, so no
# class is made per lock there: a class made anew in every execution would make two equal states
# of a search look different. A lock with a ``critical_section(append)`` method makes its own
# section, with the same meaning (the harness's controlled lock, whose section is compiled code).


class _Section:
    """``critical_section`` for a lock that is not the interpreter's own: the same enter, exit and
    append, through one class."""

    __slots__ = ("_append", "_lock")

    def __init__(self, lock: LockLike, append: Callable[[Any], object] | None) -> None:
        self._lock = lock
        self._append = append

    def __enter__(self) -> object:
        return self._lock.__enter__()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None, /
    ) -> None:
        self._lock.__exit__(kind, error, tb)

    def __add__(self, item: Any, /) -> object:
        if self._append is None:
            raise TypeError("this critical section was made without an append")
        return self._append(item)


class WorkItem:
    """One chance to run ``callback``; ``lane`` names it in trace events."""

    __slots__ = ("callback", "lane")

    def __init__(self, callback: Callable[[], None], lane: int) -> None:
        self.callback = callback
        self.lane = lane

    def __repr__(self) -> str:
        return f"WorkItem(lane={self.lane})"


class WorkerPool:
    """Worker threads named ``w0``, ``w1``, ... taking work items in FIFO order."""

    def __init__(
        self,
        workers: int,
        capacity: int,
        runtime: Runtime,
        tracer: Tracer | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if capacity < 1:
            raise ValueError(f"ready_capacity must be at least 1, got {capacity}")
        self.workers = workers
        self.capacity = capacity
        self._runtime = runtime
        self._tracer = tracer
        # Untraced, and ``_enqueue`` not overridden by a checker's variant: ``submit`` appends
        # inline, making no call while it holds the mutex.
        self._inline = tracer is None and type(self)._enqueue is WorkerPool._enqueue
        self._mutex = runtime.lock(name="pool.ready")
        self._section = critical_section(self._mutex)  # ``with self._section``: the mutex, held
        self._work_ready = runtime.condition(self._mutex, name="pool.ready.work")
        self._quiescent = runtime.condition(self._mutex, name="pool.ready.quiescent")
        # Everything below is guarded by _mutex.
        self._ready: deque[WorkItem] = deque()
        self._active = 0  # workers holding a taken work item (running it or about to)
        self._idle_workers = 0  # workers waiting on _work_ready (parked or woken, not yet back)
        # A worker was notified and has not yet returned from its wait: it will re-check the
        # queue, so a submission need not wake another.
        self._waking = False
        self._queued = 0  # len(_ready), kept so that the overflow check makes no call
        self._quiescence_waiters = 0  # Stop, waiting on _quiescent
        self._owed_submitted = 0  # submissions that posts owed, received so far
        self._shutdown = False
        self._abandoned = False  # a fault happened: waits for counts give up
        self._worker_ids: set[Hashable] = set()
        self._threads: list[ThreadHandle] = []
        # Told about each fault of the pool's or a work item's code (the scheduler sets it).
        self.on_failure: Callable[[BaseException], None] | None = None

    # -- life cycle ------------------------------------------------------

    def start(self) -> None:
        for i in range(self.workers):
            self._threads.append(self._runtime.start_thread(self._worker, name=f"w{i}"))

    def shutdown(self) -> None:
        """Tell every worker to exit once the queue is empty, and join them."""
        with self._mutex:
            self._shutdown = True
            self._work_ready.notify_all()
        for thread in self._threads:
            thread.join()

    def is_worker(self, thread_id: Hashable) -> bool:
        """Whether ``thread_id`` (``runtime.current_thread()``) is one of our workers."""
        with self._mutex:
            return thread_id in self._worker_ids

    # -- producers' side -------------------------------------------------

    def submit(self, item: WorkItem, owed: bool = False) -> None:
        """Append ``item`` to the back of the ready queue and wake a parked worker if one is due.

        ``owed``: a post's submission (it moved the lane Idle -> Scheduled), which
        ``wait_submissions`` counts.
        """
        # ``with``, and untraced no call while the mutex is held but the wake-up itself: a
        # thread switched out holding this mutex stalls every producer and worker (see the
        # module docstring of ``work_lane``).
        with self._section:
            if self._inline:
                if self._queued >= self.capacity:
                    self._overflow(item, owed)
                ready = self._ready
                ready += (item,)
                self._queued += 1
                if owed:
                    self._owed_submitted += 1
                    if self._quiescence_waiters:
                        self._quiescent.notify_all()
            else:
                self._enqueue(item, owed)
            if self._idle_workers and not self._waking:
                self._notify_worker()

    def _overflow(self, item: WorkItem, owed: bool) -> None:
        if owed:
            # Counted even though the append fails: the post is over either way, and a Stop
            # waiting for it must not wait forever.
            self._owed_submitted += 1
            if self._quiescence_waiters:
                self._quiescent.notify_all()
        raise RuntimeError(
            f"ready queue overflow at {self.capacity} work items (lane {item.lane}): "
            "a lane was submitted twice"
        )

    def _enqueue(self, item: WorkItem, owed: bool = False) -> None:
        if self._queued >= self.capacity:
            self._overflow(item, owed)
        self._ready.append(item)
        self._queued += 1
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(self._runtime.thread_name(), "submit", {"lane": item.lane})
        if owed:
            self._owed_submitted += 1
            if self._quiescence_waiters:
                self._quiescent.notify_all()

    def _notify_worker(self) -> None:
        # Called with _mutex held after work was queued. A parked worker is woken only when none
        # is already on its way: the one woken re-checks the queue and, if it leaves work
        # behind, wakes the next (``_take``). Waking one per submission instead costs a GIL
        # hand-off to another core per wake-up. (Callers test the same condition inline first,
        # sparing the call; it is repeated here for callers that do not.)
        if self._idle_workers and not self._waking:
            self._waking = True
            self._work_ready.notify()

    # -- workers' side ---------------------------------------------------

    def _worker(self) -> None:
        try:
            self._work()
        except Exception as exc:
            # The pool's own loop failed: this worker is gone. Say so loudly rather
            # than leave work queued for a worker that will never take it.
            _log.exception("worker %s died", self._runtime.thread_name())
            self._report(exc)

    def _work(self) -> None:
        with self._mutex:
            self._worker_ids.add(self._runtime.current_thread())
        finished = False
        while True:
            item = self._take(finished)
            if item is None:
                return
            try:
                item.callback()
            except BaseException as exc:
                # The scheduler's callbacks report user errors themselves; this
                # is a last resort so that a bug cannot silently lose a worker.
                _log.exception("work item %r raised", item)
                if isinstance(exc, Exception):
                    self._report(exc)
            finished = True

    def _report(self, exc: Exception) -> None:
        hook = self.on_failure
        if hook is None:
            return
        try:
            hook(exc)
        except Exception:
            _log.exception("reporting a failure of the pool raised")

    def _take(self, finished: bool) -> WorkItem | None:
        """Finish the previous work item (if any) and take the next, or None at shutdown."""
        with self._section:  # no call while held, untraced, but to wait or wake: see ``submit``
            if finished:
                self._active -= 1
                if self._quiescence_waiters:
                    self._notify_if_quiescent()
            ready = self._ready
            if not ready:
                # Checked and parked in one critical section: a submission either is seen
                # here or finds this worker parked and wakes it.
                self._wait_for_work()
                if not ready:
                    return None
            item = ready[0]
            del ready[0]
            self._queued -= 1
            self._active += 1
            if ready and self._idle_workers and not self._waking:
                # Work is left and a worker is parked with none on its way: wake one, so that a
                # long invoke here does not hold up other lanes' work items.
                self._wake_another()
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "take", {"lane": item.lane})
            return item

    def _wake_another(self) -> None:
        self._notify_worker()

    def _wait_for_work(self) -> None:
        # Called with _mutex held. Work queued at shutdown is still taken, so a
        # worker exits only once the queue is empty.
        self._idle_workers += 1
        while not self._ready and not self._shutdown:
            self._work_ready.wait()
            # Whoever returns from the wait (notified or not) re-checks the queue before it
            # parks again: the wake-up that was on its way has arrived.
            self._waking = False
        self._idle_workers -= 1

    # -- Stop's side -----------------------------------------------------

    def wait_submissions(self, count: int) -> None:
        """Block until ``count`` owed submissions (``submit(..., owed=True)``) have arrived in all."""
        with self._mutex:
            self._quiescence_waiters += 1
            while self._owed_submitted < count and not self._abandoned:
                self._quiescent.wait()
            self._quiescence_waiters -= 1

    def wait_quiescent(self) -> None:
        """Block until the ready queue is empty and no worker holds a work item."""
        with self._mutex:
            self._wait_quiescent()

    def _wait_quiescent(self) -> None:
        self._quiescence_waiters += 1
        while (self._ready or self._active) and not self._abandoned:
            self._quiescent.wait()
        self._quiescence_waiters -= 1

    def _notify_if_quiescent(self) -> None:
        if self._quiescence_waiters and not self._ready and not self._active:
            self._quiescent.notify_all()

    def abandon(self) -> None:
        """After a fault: wake and release every ``wait_submissions`` / ``wait_quiescent``, now and later."""
        with self._mutex:
            self._abandoned = True
            self._quiescent.notify_all()

    def clear(self) -> list[WorkItem]:
        """Remove and return every queued work item."""
        with self._mutex:
            items = list(self._ready)
            self._ready.clear()
            self._queued = 0
            self._notify_if_quiescent()
            return items
