"""A completed Stop leaves no reference cycle of the scheduler's: the pool's failure hook and the
work items' drain callbacks, which lead back to the scheduler, are dropped once the workers are
joined, so a stopped scheduler is freed by reference counting (the harness builds one per
explored execution, and the cyclic collector's passes over them cost about 6% of its time)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from reference.results import Result
from reference.scheduler import LaneSpec, StopMode, WorkerScheduler
from reference.work_lane_lockfree import LockFreeScheduler


@pytest.fixture
def no_collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("kind", [WorkerScheduler, LockFreeScheduler])
@pytest.mark.parametrize("mode", [StopMode.DRAIN, StopMode.DISCARD])
def test_a_stopped_scheduler_is_freed_by_reference_counting(
    kind: type[WorkerScheduler[int]], mode: StopMode, no_collector: None
) -> None:
    ran: list[int] = []
    sched = kind(
        [LaneSpec(lambda _, item: ran.append(item), 0), LaneSpec(lambda _, item: ran.append(item), 1)],
        workers=2,
        lane_capacity=4,
        max_per_drain=1,
    )
    handles = [sched.get_lane(i)[1] for i in range(2)]
    for i in range(4):
        assert sched.try_post(handles[i % 2], i) is Result.SUCCESS
    assert sched.stop(mode) is Result.SUCCESS
    # after Stop: posts refused as before, a second Stop answers as before
    assert sched.try_post(handles[0], 9) is Result.INVALID_STATE
    assert sched.stop(mode) is Result.SUCCESS
    pool = sched._pool
    assert pool.on_failure is None
    gone = weakref.ref(sched)
    del sched, handles
    assert gone() is None, "a stopped scheduler waited for the cyclic collector"
    assert pool.on_failure is None
    if mode is StopMode.DRAIN:
        assert sorted(ran) == [0, 1, 2, 3]


def test_a_running_scheduler_keeps_its_links() -> None:
    sched: WorkerScheduler[None] = WorkerScheduler(
        [LaneSpec(lambda _, item: None)], workers=1, lane_capacity=2, max_per_drain=1
    )
    try:
        assert sched._pool.on_failure == sched._fail
        assert all(item.callback.func == sched._drain_lane for item in sched._work_items)  # type: ignore[attr-defined]
    finally:
        assert sched.stop() is Result.SUCCESS


def test_a_work_item_run_after_stop_says_so() -> None:
    # The unlinked callback is not a silent no-op: a broken Stop that let a work item run after
    # joining its workers would raise, naming what happened.
    sched: WorkerScheduler[None] = WorkerScheduler(
        [LaneSpec(lambda _, item: None)], workers=1, lane_capacity=2, max_per_drain=1
    )
    assert sched.stop() is Result.SUCCESS
    with pytest.raises(RuntimeError, match="after Stop joined"):
        sched._work_items[0].callback()
