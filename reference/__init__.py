"""The reference Work Lane scheduler: what a Python user deploys, and what ports are compared against.

Arguments are checked at this boundary (``reference.arguments``): a wrong type
or value is a ``TypeError``/``ValueError`` naming the field (``create``:
``Result.INVALID_ARGUMENT``). A fault of a scheduler's own code puts it in a
failed state (``reference.failure``) instead of losing what it accepted.

Standard library only. Everything that blocks or synchronises comes from a
``Runtime`` (``reference.runtime``), plain ``threading`` by default.

Mutant seams (each a small method a checker's mutant may override alone; see
docs/reference.md):

- ``WorkLane._publish``      admission + publish + Idle -> Scheduled decision, under the lane mutex
- ``WorkLane._begin_drain``  Scheduled -> Draining, or give the work item up in Stop(discard)
- ``WorkLane._invoke_items`` pop and invoke up to the budget, outside the lane mutex
- ``WorkLane._end_drain``    the end-of-drain decision, under the lane mutex
- ``WorkerPool._enqueue`` / ``_notify_worker``   the ready-queue append and the worker wake-up
- ``WorkerPool._wake_another``  a worker that took an item and left others queued wakes the next one
- ``WorkerPool._wait_for_work`` / ``_wait_quiescent``   the condition-wait loops
- ``WorkerScheduler._submit``              a post submitting the lane's work item it owes
- ``WorkerScheduler._close_admission``     Stop closing admission on every lane at once
- ``WorkerScheduler._wait_posts_settled``  Stop waiting for the submissions accepted posts owe
"""

from .arguments import MAX_LANES, MAX_SIZE, MAX_WORKERS
from .failure import SchedulerFailed, SchedulerFailure
from .global_queue_pool import GlobalQueuePool
from .results import Result
from .runtime import DEFAULT_RUNTIME, FifoLike, Runtime, ThreadingRuntime
from .scheduler import (
    LaneHandle,
    LaneSpec,
    SchedulerConfig,
    Sizing,
    StopMode,
    WorkerScheduler,
    config_error,
    create,
)
from .tracing import JsonlTracer, NullTracer, RecordingTracer, Tracer, default_label
from .work_lane import LaneEnv, LaneState, PostOutcome, WorkLane, log_error
from .work_stealing import WorkStealingPool
from .work_stealing_base import PoolBase
from .work_stealing_deque import ChaseLevDeque
from .work_stealing_task import TaskDiscarded, TaskFailed, TaskHandle
from .worker_pool import WorkerPool, WorkItem

__all__ = [
    "DEFAULT_RUNTIME",
    "MAX_LANES",
    "MAX_SIZE",
    "MAX_WORKERS",
    "ChaseLevDeque",
    "FifoLike",
    "GlobalQueuePool",
    "JsonlTracer",
    "LaneEnv",
    "LaneHandle",
    "LaneSpec",
    "LaneState",
    "NullTracer",
    "PoolBase",
    "PostOutcome",
    "RecordingTracer",
    "Result",
    "Runtime",
    "SchedulerConfig",
    "SchedulerFailed",
    "SchedulerFailure",
    "Sizing",
    "StopMode",
    "TaskDiscarded",
    "TaskFailed",
    "TaskHandle",
    "ThreadingRuntime",
    "Tracer",
    "WorkItem",
    "WorkLane",
    "WorkStealingPool",
    "WorkerPool",
    "WorkerScheduler",
    "config_error",
    "create",
    "default_label",
    "log_error",
]
