"""Helpers shared by the reference scheduler's tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from reference import LaneSpec, RecordingTracer, WorkerScheduler

from .refsched_trace_check import check_trace


class Recorder:
    """An invoke callback that records (lane, item) and who ran it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[int, Any]] = []

    def __call__(self, context: Any, item: Any) -> None:
        with self.lock:
            self.calls.append((context, item))

    def items(self, lane: int) -> list[Any]:
        with self.lock:
            return [item for ctx, item in self.calls if ctx == lane]


def make(
    invoke: Callable[[Any, Any], object] | None = None,
    *,
    lanes: int = 2,
    workers: int = 2,
    lane_capacity: int = 8,
    max_per_drain: int = 4,
    ready_capacity: int | None = None,
    **options: Any,
) -> WorkerScheduler[Any]:
    """A scheduler whose lane ``i`` has context ``i``."""
    callback = invoke if invoke is not None else Recorder()
    return WorkerScheduler(
        [LaneSpec(callback, i) for i in range(lanes)],
        workers=workers,
        lane_capacity=lane_capacity,
        max_per_drain=max_per_drain,
        ready_capacity=ready_capacity,
        **options,
    )


def assert_valid(tracer: RecordingTracer) -> None:
    problems = check_trace(tracer.header(), tracer.events())
    assert not problems, "\n".join(problems[:20])
