"""The ToolKit contract: result codes, creation, handles, capacity, errors."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

import pytest

from reference import LaneHandle, LaneSpec, Result, Sizing, StopMode, WorkerScheduler, create
from tests.helpers.gated import Gated

from .refsched_helpers import Recorder, make


def test_result_codes_keep_the_toolkit_values() -> None:
    assert {r.name: r.value for r in Result} == {
        "SUCCESS": 0,
        "UNKNOWN": -1,
        "INVALID_ARGUMENT": -2,
        "BUFFER_TOO_SMALL": -3,
        "OUT_OF_MEMORY": -4,
        "INVALID_DATA": -5,
        "IO": -6,
        "INVALID_STATE": -7,
        "CAPACITY_EXCEEDED": -8,
        "REJECTED": -9,
    }


def _noop(context: Any, item: Any) -> None:
    return None


GOOD: dict[str, Any] = {"workers": 2, "lane_capacity": 4, "max_per_drain": 2, "ready_capacity": 2}
BAD_CONFIGS = [
    ("workers", [LaneSpec(_noop)] * 2, {**GOOD, "workers": 0}),
    ("lane_capacity", [LaneSpec(_noop)] * 2, {**GOOD, "lane_capacity": 0}),
    ("ready_capacity", [LaneSpec(_noop)] * 2, {**GOOD, "ready_capacity": 0}),
    ("max_per_drain", [LaneSpec(_noop)] * 2, {**GOOD, "max_per_drain": 0}),
    ("lanes", [], GOOD),
    ("lanes[1].invoke", [LaneSpec(_noop), LaneSpec(None)], GOOD),  # type: ignore[arg-type]
    ("ready_capacity", [LaneSpec(_noop)] * 3, GOOD),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("field", "lanes", "config"), BAD_CONFIGS)
def test_bad_configuration_is_refused(field: str, lanes: list[LaneSpec[Any]], config: dict[str, Any]) -> None:
    assert create(lanes, **config) == (Result.INVALID_ARGUMENT, None)
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(field) + " "):
        WorkerScheduler(lanes, **config)


@pytest.mark.timeout(10)
def test_create_returns_a_running_scheduler() -> None:
    result, scheduler = create([LaneSpec(_noop)] * 2, **GOOD)
    assert result is Result.SUCCESS and scheduler is not None
    assert scheduler.running and scheduler.lane_count == 2
    assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_ready_capacity_defaults_to_a_power_of_two_holding_every_lane() -> None:
    for lanes, ready in ((1, 2), (2, 2), (3, 4), (4, 4), (5, 8)):
        scheduler = WorkerScheduler([LaneSpec(_noop)] * lanes, workers=1, lane_capacity=2, max_per_drain=1)
        assert scheduler.config.ready_capacity == ready
        assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_checking_sizes_default_the_ready_capacity_to_the_lane_count() -> None:
    scheduler = WorkerScheduler(
        [LaneSpec(_noop)] * 3, workers=1, lane_capacity=1, max_per_drain=1, sizing=Sizing.CHECKING
    )
    assert scheduler.config.ready_capacity == 3 and scheduler.config.lane_capacity == 1
    assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_handles_are_bound_to_their_scheduler() -> None:
    recorder = Recorder()
    one, other = make(recorder), make(recorder)
    try:
        assert one.get_lane(2) == (Result.INVALID_ARGUMENT, LaneHandle())
        assert one.get_lane(-1)[0] is Result.INVALID_ARGUMENT
        result, foreign = other.get_lane(0)
        assert result is Result.SUCCESS
        item = object()
        for handle in (LaneHandle(), foreign, LaneHandle(one, 2), LaneHandle(one, -1), LaneHandle(None, 0)):
            assert one.try_post(handle, item) is Result.INVALID_ARGUMENT
        bogus: Any = ("not a handle", 0)
        assert one.try_post(bogus, item) is Result.INVALID_ARGUMENT
    finally:
        assert one.stop() is Result.SUCCESS and other.stop() is Result.SUCCESS
    assert recorder.calls == []  # refused items were never consumed


@pytest.mark.timeout(10)
def test_a_full_lane_refuses_and_the_item_stays_with_the_caller() -> None:
    invoke: Gated[str] = Gated()
    scheduler = make(invoke, lanes=1, workers=1, lane_capacity=2)
    handle = scheduler.get_lane(0)[1]
    assert scheduler.try_post(handle, "first") is Result.SUCCESS
    assert invoke.started.wait(5)  # "first" is popped: the lane holds nothing now
    assert scheduler.try_post(handle, "a") is Result.SUCCESS
    assert scheduler.try_post(handle, "b") is Result.SUCCESS
    assert scheduler.try_post(handle, "c") is Result.CAPACITY_EXCEEDED
    invoke.gate.set()
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert invoke.seen == ["first", "a", "b"]


@pytest.mark.timeout(10)
def test_acceptance_runs_items_in_order_per_lane() -> None:
    recorder = Recorder()
    scheduler = make(recorder, lanes=3, workers=2, lane_capacity=64, max_per_drain=2)
    handles = [scheduler.get_lane(i)[1] for i in range(3)]
    for i in range(60):
        assert scheduler.try_post(handles[i % 3], i) is Result.SUCCESS
    assert scheduler.stop() is Result.SUCCESS
    for lane in range(3):
        assert recorder.items(lane) == list(range(lane, 60, 3))


@pytest.mark.timeout(10)
def test_none_is_a_valid_item() -> None:
    recorder = Recorder()
    scheduler = make(recorder, lanes=1, workers=1)
    assert scheduler.try_post(scheduler.get_lane(0)[1], None) is Result.SUCCESS
    scheduler.stop()
    assert recorder.calls == [(0, None)]


@pytest.mark.timeout(10)
def test_an_exception_goes_to_on_error_and_the_lane_goes_on() -> None:
    errors: list[tuple[int, Any, str]] = []
    recorder = Recorder()

    def invoke(context: Any, item: int) -> None:
        if item % 3 == 0:
            raise RuntimeError(f"boom {item}")
        recorder(context, item)

    scheduler = make(
        invoke,
        lanes=1,
        workers=1,
        lane_capacity=32,
        on_error=lambda lane, item, exc: errors.append((lane, item, str(exc))),
    )
    handle = scheduler.get_lane(0)[1]
    for i in range(10):
        assert scheduler.try_post(handle, i) is Result.SUCCESS
    assert scheduler.stop() is Result.SUCCESS
    assert errors == [(0, i, f"boom {i}") for i in (0, 3, 6, 9)]
    assert recorder.items(0) == [1, 2, 4, 5, 7, 8]


@pytest.mark.timeout(10)
def test_the_default_on_error_logs(caplog: pytest.LogCaptureFixture) -> None:
    def invoke(context: Any, item: Any) -> None:
        raise ValueError("bad item")

    scheduler = make(invoke, lanes=1, workers=1)
    with caplog.at_level(logging.ERROR):
        scheduler.try_post(scheduler.get_lane(0)[1], 7)
        scheduler.try_post(scheduler.get_lane(0)[1], 8)
        assert scheduler.stop() is Result.SUCCESS
    messages = [r for r in caplog.records if "invoke raised on lane 0" in r.getMessage()]
    assert len(messages) == 2 and messages[0].exc_info is not None


@pytest.mark.timeout(10)
def test_a_raising_on_error_does_not_kill_the_worker(caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder()

    def invoke(context: Any, item: int) -> None:
        if item == 0:
            raise RuntimeError("first")
        recorder(context, item)

    def on_error(lane: int, item: Any, exc: BaseException) -> None:
        raise KeyError("on_error broke too")

    scheduler = make(invoke, lanes=1, workers=1, on_error=on_error)
    handle = scheduler.get_lane(0)[1]
    with caplog.at_level(logging.ERROR):
        for i in range(3):
            scheduler.try_post(handle, i)
        scheduler.stop()
    assert recorder.items(0) == [1, 2]


@pytest.mark.timeout(10)
def test_different_lanes_run_in_parallel() -> None:
    both = threading.Barrier(2, timeout=5)

    def invoke(context: Any, item: Any) -> None:
        both.wait()  # only returns if the other lane runs at the same time

    scheduler = make(invoke, lanes=2, workers=2)
    scheduler.try_post(scheduler.get_lane(0)[1], "a")
    scheduler.try_post(scheduler.get_lane(1)[1], "b")
    assert scheduler.stop() is Result.SUCCESS
    assert not both.broken
