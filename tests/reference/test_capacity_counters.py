"""The lane's capacity decision from its counters (``appended``/``may_be_full_at``) stays exact.

The counters over-estimate the length by what the running drain has popped; a post that
finds the estimate at capacity must still look at the queue, or a lane with room would
refuse items.
"""

from __future__ import annotations

import threading

import pytest

from reference import LaneSpec, Result, Sizing, StopMode, WorkerScheduler
from tests.helpers.gated import Gated


@pytest.mark.timeout(30)
def test_popped_items_still_make_room_while_their_drain_runs() -> None:
    invoke: Gated[int] = Gated(hold=lambda item: item == 0)
    scheduler: WorkerScheduler[int] = WorkerScheduler(
        [LaneSpec(invoke)], workers=1, lane_capacity=4, max_per_drain=8, sizing=Sizing.CHECKING
    )
    handle = scheduler.get_lane(0)[1]
    try:
        assert scheduler.try_post(handle, 0) is Result.SUCCESS
        assert invoke.started.wait(10)  # item 0 is popped and running: the queue is empty again
        # Four fit although the counters say one more is in the lane ...
        assert [scheduler.try_post(handle, i) for i in range(1, 5)] == [Result.SUCCESS] * 4
        # ... and the fifth does not: the lane holds four.
        assert scheduler.try_post(handle, 5) is Result.CAPACITY_EXCEEDED
    finally:
        invoke.gate.set()
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert invoke.seen == [0, 1, 2, 3, 4]


@pytest.mark.timeout(30)
def test_counters_match_the_queue_after_drains_and_discards() -> None:
    release = threading.Event()

    def invoke(context: object, item: int) -> None:
        release.wait(10)

    scheduler: WorkerScheduler[int] = WorkerScheduler(
        [LaneSpec(invoke)], workers=1, lane_capacity=2, max_per_drain=1, sizing=Sizing.CHECKING
    )
    handle = scheduler.get_lane(0)[1]
    release.set()
    for i in range(200):  # many drains: each accounts what it popped
        while scheduler.try_post(handle, i) is Result.CAPACITY_EXCEEDED:
            pass
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    lane = scheduler._lanes[0]
    # Every popped item was accounted for: the lane may be full only once it holds ``capacity``.
    assert lane.appended == 200
    assert lane.may_be_full_at == lane.appended + lane.capacity
    assert len(lane.queue) == 0
