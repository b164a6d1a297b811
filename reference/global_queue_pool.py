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

from typing import Any

from .results import Result
from .work_stealing_base import PoolBase, create_pool
from .work_stealing_task import TaskHandle


class GlobalQueuePool(PoolBase):
    """N workers sharing one locked queue. Same API as ``WorkStealingPool`` (``capacity`` is only
    reported in the trace header, for comparison)."""

    POOL = "global-lock"

    def _make_queues(self, seed: int) -> None:
        self._queue: list[TaskHandle] = []  # guarded by _inj_lock, the global lock

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

    def _empty_injector(self) -> list[TaskHandle]:
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
    return create_pool(GlobalQueuePool, "global-queue", options)


__all__ = ["GlobalQueuePool", "create"]
