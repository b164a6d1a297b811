"""A work-stealing pool's task: its handle, outcomes, per-worker stats and the trace header.

Shared by both pools (``reference.work_stealing``, ``reference.global_queue_pool``);
``TaskHandle.state`` is the field a joiner reads without a lock (declared GIL-atomic for the
harness's race detector in ``model_checks/designs/work_stealing/declared.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from .tracing import TRACE_NAME, TRACE_VERSION

_log = logging.getLogger("reference")

DESIGN = "work-stealing"
PENDING, DONE, RAISED, DISCARDED = 0, 1, 2, 3
EXTERNAL = -1  # TaskHandle.joiner of a caller (not a worker) waiting in join


def header(config: Mapping[str, object]) -> dict[str, Any]:
    """The header object of a work-stealing trace (``config`` as the pool gave its tracer)."""
    return {"trace": TRACE_NAME, "version": TRACE_VERSION, "design": DESIGN, "config": dict(config)}


class TaskFailed(RuntimeError):
    """``join`` of a task that raised; the task's exception is the ``__cause__``."""


class TaskDiscarded(RuntimeError):
    """``join`` of a task that Stop(discard), or the Stop of a failed pool, dropped uninvoked."""


class TaskHandle:
    """One task: what ``submit``/``spawn`` return and ``join`` takes. ``id`` names it in traces."""

    __slots__ = ("error", "fn", "id", "joiner", "state", "value")

    def __init__(self, fn: Callable[[], Any], task_id: object) -> None:
        self.fn = fn
        self.id = task_id
        self.state = PENDING  # written once, by whoever completes or discards the task
        self.value: Any = None
        self.error: BaseException | None = None
        self.joiner: int | None = None  # a parked joiner (a worker, or EXTERNAL); under the park lock

    def trace_id(self) -> object:
        return self.id

    @property
    def done(self) -> bool:
        return self.state != PENDING

    def outcome(self) -> Any:
        """The value; ``TaskFailed`` if the task raised; ``TaskDiscarded`` if it was dropped."""
        if self.state == DONE:
            return self.value
        if self.state == RAISED:
            raise TaskFailed(f"task {self.id!r} raised {self.error!r}") from self.error
        if self.state == DISCARDED:
            raise TaskDiscarded(f"task {self.id!r} was discarded by Stop")
        raise RuntimeError(f"task {self.id!r} has not completed")

    def __repr__(self) -> str:
        return f"TaskHandle({self.id!r}, {('pending', 'done', 'raised', 'discarded')[self.state]})"


class PoolStats:
    """Per-worker counts, each written only by its worker: tasks run and successful steals."""

    def __init__(self, workers: int) -> None:
        self.runs = [0] * workers
        self.steals = [0] * workers


def log_error(task: TaskHandle, exc: BaseException) -> None:
    """The default ``on_error``: log the task's exception with its traceback."""
    _log.error("task %r raised", task.id, exc_info=(type(exc), exc, exc.__traceback__))


__all__ = [
    "DESIGN",
    "DISCARDED",
    "DONE",
    "EXTERNAL",
    "PENDING",
    "RAISED",
    "PoolStats",
    "TaskDiscarded",
    "TaskFailed",
    "TaskHandle",
    "header",
    "log_error",
]
