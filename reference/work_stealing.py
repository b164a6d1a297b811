"""The work-stealing pool (design 001): a Chase-Lev deque per worker, an injector, parking, fork/join.

    pool = WorkStealingPool(workers=4)
    result, root = pool.submit(lambda: fib(pool, 20))   # Result.SUCCESS and a TaskHandle
    value = pool.join(root)                              # from outside: blocks until done
    pool.stop(StopMode.DRAIN)

    def fib(pool, n):                                    # runs on a worker
        if n < 2:
            return n
        left = pool.spawn(lambda: fib(pool, n - 1))      # pushed on this worker's deque
        return fib(pool, n - 2) + pool.join(left)        # join helps: runs other tasks meanwhile

A worker looks for work in a fixed order: its own deque's bottom (LIFO: the
task it forked last), the injector (FIFO: external submits), then one round of
victims in a random order (never itself), stealing their top (oldest). Finding
nothing it parks (with the re-check that avoids the lost wakeup). Parking, ``join`` that
helps, Stop and failure are ``PoolBase``'s (``reference.work_stealing_base``); the task handle
and the trace header are in ``reference.work_stealing_task``; all are re-exported here.

Trace events follow docs of the work-stealing trace format (design
"work-stealing"): with no tracer each emit is skipped behind one ``is not None``
test. ``GlobalQueuePool`` (``reference.global_queue_pool``) has the same API
with one locked queue: the seed's "stealing off" baseline.

Mutant seams: ``_victims`` (the victim order), ``_recheck`` (the park re-check),
``_wait_for`` (what a worker's join does while the task is not done), and the
deque's own (``reference.work_stealing_deque``); ``deque_factory`` plugs a deque in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, Unpack

from . import arguments
from .results import Result
from .runtime import FifoLike
from .scheduler import StopMode
from .work_stealing_base import PoolBase, PoolOptions, create_pool
from .work_stealing_deque import ABORT, OK, ChaseLevDeque
from .work_stealing_task import (
    DESIGN,
    PoolStats,
    TaskDiscarded,
    TaskFailed,
    TaskHandle,
    header,
    log_error,
)

DequeFactory = Callable[..., ChaseLevDeque[Any]]


class WorkStealingPool(PoolBase):
    """N workers, each with a Chase-Lev deque, plus an injector for submits from outside.

    ``capacity`` is each deque's initial array length (a power of two; it grows).
    ``seed`` seeds the victim order (each worker its own ``random.Random``), so a run
    is repeatable; ``deque_factory(runtime, capacity, owner=, tracer=, label=)``
    lets a checker plug in a variant deque. Other arguments: see ``PoolBase``.
    """

    POOL = "stealing"

    def __init__(
        self, *, workers: int, deque_factory: DequeFactory = ChaseLevDeque, **options: Unpack[PoolOptions]
    ) -> None:
        self._deque_factory = arguments.function("deque_factory", deque_factory)
        super().__init__(workers=workers, **options)

    def _make_queues(self, seed: int) -> None:
        rt, label = self._rt, TaskHandle.trace_id
        self._deques: list[ChaseLevDeque[TaskHandle]] = [
            self._deque_factory(rt, self.capacity, owner=w, tracer=self._tracer, label=label)
            for w in range(self.workers)
        ]
        if type(self)._find_work is WorkStealingPool._find_work:
            # where the worker loop looks first; not for a subclass that finds work its own way
            self._takes = [d.take for d in self._deques]
        # Appended under _inj_lock (Stop closes admission under it); popped without it when
        # untraced: each append, popleft and len is one atomic call (a plain deque under the GIL),
        # so a pop is one step and its len the lock-free emptiness test (Dekker with parking).
        self._injector: FifoLike[TaskHandle] = rt.deque(name="injector.queue")
        # Each worker's victim order: a choice only with two others or more (below that, no
        # generator, whose hidden state would also keep state-hash pruning from the pool).
        self._rngs = (
            [random.Random(seed * 1_000_003 + w) for w in range(self.workers)] if self.workers > 2 else []
        )

    # -- where tasks go -----------------------------------------------------

    def _inject(self, task: TaskHandle) -> None:
        self._injector.append(task)  # under _inj_lock (PoolBase.submit)

    def _push_spawned(self, w: int, task: TaskHandle) -> None:
        self._deques[w].push(task)

    def _spawn_sinks(self) -> list[Callable[[TaskHandle], None]]:
        return [d.push for d in self._deques]  # what _push_spawned does, one call less per spawn

    # -- where workers find them ------------------------------------------

    def _find_work(self, w: int) -> TaskHandle | None:
        status, task = self._deques[w].take()
        if status == OK:
            return task
        return self._find_elsewhere(w)

    def _find_elsewhere(self, w: int) -> TaskHandle | None:
        """The injector, then one round of victims (the own deque came back empty or lost)."""
        task = self._pop_injector(w)
        if task is not None:
            return task
        for v in self._victims(w):
            victim = self._deques[v]
            status, task = victim.steal(w)
            while status == ABORT:  # another thread won that element; the next may be ours
                status, task = victim.steal(w)
            if status == OK:
                self.stats.steals[w] += 1
                return task
        return None

    def _pop_injector(self, w: int) -> TaskHandle | None:
        injector = self._injector
        if self._tracer is None:
            if not len(injector):
                return None  # the usual case in fork/join: one read
            try:
                return injector.popleft()
            except IndexError:  # another worker (or Stop) popped the last one since
                return None
        # Traced: popped and logged under the lock, so the log orders it with submit and Stop.
        with self._inj_lock:
            if not len(injector):
                self._emit("steal", {"worker": w, "victim": "injector", "task": None, "result": "empty"})
                return None
            task = injector.popleft()
            self._emit("steal", {"worker": w, "victim": "injector", "task": task.id, "result": "ok"})
            return task

    def _victims(self, w: int) -> Iterator[int]:
        """Every other worker once, from a random one on (never ``w`` itself)."""
        n = self.workers
        if n <= 2:
            return iter(()) if n == 1 else iter((1 - w,))
        start = self._rngs[w].randrange(n - 1)
        return ((w + 1 + (start + k) % (n - 1)) % n for k in range(n - 1))

    def _recheck(self, w: int) -> bool:
        """Is any work visible? Called registered as a sleeper, under the park lock."""
        if self._tracer is None:
            return self._sees_work(w)
        # Traced, a submit makes its task visible and logs it in one step under the injector lock,
        # a push under its deque's trace lock. Read outside those locks, the re-check could see a
        # task whose event is not logged yet and look again: the log would then show the worker
        # finding work before the submit or push that brought it. Under all of them (taken in the
        # order park, injector, deques by owner; nothing takes them the other way round) the
        # re-check sees every queue as the log has it, at one point.
        with self._inj_lock, ExitStack() as held:
            for d in self._deques:
                if d.owner != w:
                    held.enter_context(d.logged_step())
            return self._sees_work(w)

    def _sees_work(self, w: int) -> bool:
        # Not w's own deque: only w pushes on it, and w found it empty. (A loop, not a generator:
        # a thread suspended at a load inside a generator has a state no fingerprint can read.)
        for d in self._deques:
            if d.owner != w and d.looks_nonempty():
                return True
        return len(self._injector) > 0

    def _take_everything(self) -> list[TaskHandle]:
        # Workers are joined or discarding: what is left in the queues, oldest first.
        items = self._take_injector()
        for d in self._deques:
            items.extend(d.drain())
        return items

    def _empty_injector(self) -> list[TaskHandle]:
        # One pop at a time: untraced workers pop without the lock, and each pop takes a task once.
        items: list[TaskHandle] = []
        injector = self._injector
        while len(injector):
            try:
                items.append(injector.popleft())
            except IndexError:
                break
        return items

    def queue_lengths(self) -> list[int]:
        """Each deque's length, then the injector's (a snapshot, for tests and benches)."""
        return [len(d) for d in self._deques] + [len(self._injector)]


def create(**options: Any) -> tuple[Result, WorkStealingPool | None]:
    """ToolKit-style factory: ``(SUCCESS, pool)`` or ``(INVALID_ARGUMENT, None)`` for any bad argument."""
    return create_pool(WorkStealingPool, "work-stealing", options)


__all__ = [
    "DESIGN",
    "PoolBase",
    "PoolStats",
    "StopMode",
    "TaskDiscarded",
    "TaskFailed",
    "TaskHandle",
    "WorkStealingPool",
    "create",
    "header",
    "log_error",
]
