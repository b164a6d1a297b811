"""Everything that blocks comes from the runtime; variants plug in through the factories."""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest

import reference
from model_checks.designs.work_lane.reference_mutants import DoubleSubmitLane
from reference import LaneEnv, Result, Runtime, StopMode, ThreadingRuntime, Tracer, WorkerPool, WorkLane
from reference.runtime import (
    AtomicInt,
    AtomicRef,
    ConditionLike,
    EventLike,
    FifoLike,
    LockLike,
    SemaphoreLike,
    ThreadHandle,
)
from tests.helpers.discards import Discards

from .refsched_helpers import Recorder, make

REFERENCE_DIR = Path(reference.__file__).parent


def test_no_reference_module_blocks_behind_the_runtime() -> None:
    forbidden = {"threading", "queue", "time", "_thread", "multiprocessing", "asyncio", "concurrent"}
    for path in sorted(REFERENCE_DIR.glob("*.py")):
        if path.name == "runtime.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            assert not forbidden.intersection(names), f"{path.name} imports {names}"


class CountingRuntime:
    """A ThreadingRuntime that remembers what it was asked for."""

    def __init__(self) -> None:
        self.inner = ThreadingRuntime()
        self.names: list[str] = []
        self.threads: list[str] = []

    def lock(self, name: str = "") -> LockLike:
        self.names.append(name)
        return self.inner.lock(name)

    def rlock(self, name: str = "") -> LockLike:
        self.names.append(name)
        return self.inner.rlock(name)

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike:
        self.names.append(name)
        return self.inner.condition(lock, name)

    def event(self, name: str = "") -> EventLike:
        self.names.append(name)
        return self.inner.event(name)

    def semaphore(self, value: int = 1, name: str = "") -> SemaphoreLike:
        self.names.append(name)
        return self.inner.semaphore(value, name)

    def atomic_int(self, value: int = 0, name: str = "") -> AtomicInt:
        self.names.append(name)
        return self.inner.atomic_int(value, name)

    def atomic_ref(self, value: Any = None, name: str = "") -> AtomicRef[Any]:
        self.names.append(name)
        return self.inner.atomic_ref(value, name)

    def deque(self, name: str = "") -> FifoLike[Any]:
        self.names.append(name)
        return self.inner.deque(name)

    def start_thread(self, target: Callable[[], None], name: str) -> ThreadHandle:
        self.threads.append(name)
        return self.inner.start_thread(target, name)

    def current_thread(self) -> Hashable:
        return self.inner.current_thread()

    def thread_name(self) -> str:
        return self.inner.thread_name()

    def monotonic(self) -> float:
        return self.inner.monotonic()

    def yield_point(self, label: str = "") -> None:
        return None


@pytest.mark.timeout(10)
def test_primitives_and_threads_come_from_the_runtime_with_names() -> None:
    runtime = CountingRuntime()
    rt: Runtime = runtime
    before = threading.active_count()
    recorder = Recorder()
    scheduler = make(recorder, lanes=2, workers=2, runtime=rt)
    assert runtime.threads == ["w0", "w1"]
    assert threading.active_count() == before + 2
    assert {"lane[0].mutex", "lane[0].queue", "lane[1].mutex", "lane[1].queue", "pool.ready"} <= set(
        runtime.names
    )
    assert "scheduler.state" in runtime.names
    assert all(runtime.names), "every primitive has a name"
    scheduler.try_post(scheduler.get_lane(1)[1], "x")
    assert scheduler.stop() is Result.SUCCESS
    assert recorder.calls == [(1, "x")]


class CountingLane(WorkLane[Any]):
    end_drains = 0

    def _end_drain(self, invoked: int) -> bool:
        type(self).end_drains += 1
        return super()._end_drain(invoked)


class CountingPool(WorkerPool):
    submits = 0

    def _enqueue(self, item: Any, owed: bool = False) -> None:
        type(self).submits += 1
        super()._enqueue(item, owed)


@pytest.mark.timeout(10)
def test_lane_and_pool_variants_plug_in() -> None:
    def lane_factory(
        index: int, invoke: Callable[[Any, Any], object], context: Any, env: LaneEnv
    ) -> WorkLane[Any]:
        return CountingLane(index, invoke, context, env)

    def pool_factory(workers: int, capacity: int, runtime: Runtime, tracer: Tracer | None) -> WorkerPool:
        return CountingPool(workers, capacity, runtime, tracer)

    recorder = Recorder()
    scheduler = make(recorder, lanes=1, workers=1, lane_factory=lane_factory, pool_factory=pool_factory)
    scheduler.try_post(scheduler.get_lane(0)[1], 1)
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert CountingLane.end_drains >= 1 and CountingPool.submits >= 1
    assert recorder.calls == [(0, 1)]

    # A class is a factory too.
    scheduler = make(Recorder(), lanes=1, workers=1, lane_factory=CountingLane, pool_factory=CountingPool)
    assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_a_double_submission_overflows_the_ready_queue_loudly() -> None:
    gate = threading.Event()
    entered = threading.Event()
    ran: list[Any] = []
    discarded = Discards()

    def invoke(context: Any, item: Any) -> None:
        ran.append(item)
        entered.set()
        gate.wait(5)

    scheduler = make(
        invoke, lanes=2, workers=1, ready_capacity=2, lane_factory=DoubleSubmitLane, on_discard=discarded
    )
    busy, scheduled = scheduler.get_lane(0)[1], scheduler.get_lane(1)[1]
    scheduler.try_post(busy, 0)  # taken by the only worker, which blocks in invoke
    assert entered.wait(5)
    posted: list[int] = []
    with pytest.raises(RuntimeError, match="ready queue overflow"):
        # lane 1 stays Scheduled: each post reserves it again; the third finds no room
        for item in range(1, 6):
            posted.append(item)  # the post that raises had published its item first
            assert scheduler.try_post(scheduled, item) is Result.SUCCESS
    # The overflow is the scheduler's own fault: it failed, loudly, and loses nothing.
    assert scheduler.failed and not scheduler.running
    assert scheduler.try_post(scheduled, 99) is Result.INVALID_STATE
    gate.set()
    assert scheduler.stop(StopMode.DISCARD) is Result.UNKNOWN
    failure = scheduler.failure
    assert failure is not None and isinstance(failure.error, RuntimeError)
    assert failure.discarded == discarded
    assert sorted(ran[1:] + [item for _, item in discarded]) == posted
