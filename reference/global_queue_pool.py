"""The seed's "stealing off" baseline: the work-stealing pool's API over one queue and one lock.

Every task, submitted or spawned, goes on one shared queue guarded by one lock,
and every worker takes from it under that lock: the global lock that admits one
worker at a time (lock convoy, lost locality) which per-worker deques avoid.
Parking, fork/join, Stop and failure are ``PoolBase``'s, unchanged, so the two
pools differ only in where tasks wait.

The queue is taken newest first (a stack). A FIFO queue with a join that helps
nests without bound: a joiner would run the oldest queued task, which forks and
joins in turn, so the nesting grows with the number of queued tasks, not the
depth of the task tree, and Python's recursion limit ends it; a join that
blocks instead deadlocks once every worker waits. Newest first, a joiner runs
what it has just forked, like a work-stealing owner.

Trace events (``pool: "global-lock"``, docs/work-stealing-trace.md): the one queue is the
trace's injector, LIFO for this pool kind. An external submit is ``submit``; a spawn is
``push`` by the spawning worker (``worker`` = its index, ``size`` = the queue's length
after), always accepted, also during Stop(drain); a worker's pop is ``steal`` with victim
``"injector"`` (the newest task). There is no ``take`` or ``resize``. Each is emitted under
the global lock, so the log order is the queue's order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from . import arguments
from .arguments import MAX_WORKERS
from .results import Result
from .runtime import Runtime
from .tracing import Tracer
from .work_stealing_base import PoolBase
from .work_stealing_task import TaskHandle

_log = logging.getLogger("reference")


class GlobalQueuePool(PoolBase):
    """N workers sharing one locked queue. Same API as ``WorkStealingPool`` (``capacity`` is only
    reported in the trace header, for comparison)."""

    POOL = "global-lock"

    def __init__(
        self,
        *,
        workers: int,
        capacity: int = 64,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        on_error: Callable[[TaskHandle, BaseException], None] | None = None,
        on_discard: Callable[[TaskHandle], None] | None = None,
        seed: int = 0,
    ) -> None:
        n = arguments.count("workers", workers, maximum=MAX_WORKERS)
        cap = arguments.power_of_two("capacity", capacity)
        arguments.count("seed", seed, minimum=0, maximum=(1 << 63) - 1)
        super().__init__(
            workers=n, capacity=cap, runtime=runtime, tracer=tracer, on_error=on_error, on_discard=on_discard
        )
        self._queue: list[TaskHandle] = []  # guarded by _inj_lock, the global lock
        self._start()

    def _inject(self, task: TaskHandle) -> None:
        self._queue.append(task)  # PoolBase.submit holds the global lock

    def _push_spawned(self, w: int, task: TaskHandle) -> None:
        with self._inj_lock:
            self._queue.append(task)
            if self._tracer is not None:
                self._emit("push", {"worker": w, "task": task.id, "size": len(self._queue)})

    def _find_work(self, w: int) -> TaskHandle | None:
        with self._inj_lock:
            queue = self._queue
            task = queue.pop() if queue else None
            if self._tracer is not None:
                self._emit(
                    "steal",
                    {
                        "worker": w,
                        "victim": "injector",
                        "task": None if task is None else task.id,
                        "result": "empty" if task is None else "ok",
                    },
                )
            return task

    def _recheck(self, w: int) -> bool:
        with self._inj_lock:
            return bool(self._queue)

    def _take_injector(self) -> list[TaskHandle]:
        with self._inj_lock:
            items = self._queue[:]
            self._queue.clear()
            return items

    def _take_everything(self) -> list[TaskHandle]:
        return self._take_injector()

    def queue_lengths(self) -> list[int]:
        """The shared queue's length (a snapshot)."""
        with self._inj_lock:
            return [len(self._queue)]


def create(**options: Any) -> tuple[Result, GlobalQueuePool | None]:
    """ToolKit-style factory: ``(SUCCESS, pool)`` or ``(INVALID_ARGUMENT, None)`` for any bad argument."""
    try:
        return Result.SUCCESS, GlobalQueuePool(**options)
    except (TypeError, ValueError) as exc:
        _log.debug("global-queue create refused its arguments: %s", exc)
        return Result.INVALID_ARGUMENT, None


__all__ = ["GlobalQueuePool", "create"]
