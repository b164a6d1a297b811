"""Bad input at the Work Lane's public API (issue 14) and the ToolKit's size rule (issue 15): each bad
argument is refused naming its field (``create`` answers INVALID_ARGUMENT), nothing is allocated."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from reference import (
    MAX_LANES,
    MAX_SIZE,
    MAX_WORKERS,
    LaneHandle,
    LaneSpec,
    Result,
    Sizing,
    StopMode,
    WorkerScheduler,
    config_error,
    create,
)

from .work_lane_config import GOOD, lane_specs, noop


def _refused(field: str, lanes: Any = None, **changes: Any) -> None:
    """``create`` answers INVALID_ARGUMENT and the constructor raises an error naming ``field``."""
    lanes = lane_specs() if lanes is None else lanes
    config = {**GOOD, **changes}
    assert create(lanes, **config) == (Result.INVALID_ARGUMENT, None)
    assert config_error(lanes, config["workers"], config["lane_capacity"], config["max_per_drain"], None) or (
        set(changes) - {"workers", "lane_capacity", "max_per_drain"}
    )
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(field)):
        WorkerScheduler(lanes, **config)


# --------------------------------------------------------------------------- Work Lane: types


@pytest.mark.timeout(10)
@pytest.mark.parametrize("budget", [2.0, 1.5, math.nan, math.inf, True, "2", None])
def test_a_budget_that_is_not_an_int_is_refused(budget: Any) -> None:
    # The lost items: 2.0 used to be accepted and kill the worker on range(2.0).
    _refused("max_per_drain", max_per_drain=budget)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [math.nan, math.inf, 2.0, False, "4", None, -4])
def test_a_lane_capacity_that_is_not_a_size_is_refused(capacity: Any) -> None:
    _refused("lane_capacity", lane_capacity=capacity)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("workers", [True, 1.0, math.nan, "1", None, 0, -1])
def test_workers_must_be_a_positive_int(workers: Any) -> None:
    _refused("workers", workers=workers)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "lanes"),
    [
        ("lanes", None),
        ("lanes", 3),
        ("lanes", "ab"),
        ("lanes", (LaneSpec(noop) for _ in range(2))),
        ("lanes", []),
        ("lanes[0]", [object()]),
        ("lanes[0]", [noop]),
        ("lanes[1].invoke", [LaneSpec(noop), LaneSpec(5)]),  # type: ignore[arg-type]
    ],
)
def test_lanes_must_be_lane_specs_with_callable_invokes(field: str, lanes: Any) -> None:
    if lanes is None:
        assert create(None, **GOOD) == (Result.INVALID_ARGUMENT, None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^lanes "):
            WorkerScheduler(None, **GOOD)  # type: ignore[arg-type]
        return
    _refused(field, lanes=lanes)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "option"),
    [
        ("runtime", {"runtime": object()}),
        ("tracer", {"tracer": object()}),
        ("on_error", {"on_error": 5}),
        ("on_discard", {"on_discard": "log"}),
        ("item_label", {"item_label": 1}),
        ("lane_factory", {"lane_factory": None}),
        ("pool_factory", {"pool_factory": 3}),
        ("sizing", {"sizing": "checking"}),
        ("ready_capacity", {"ready_capacity": 2.0}),
    ],
)
def test_every_option_of_a_wrong_type_is_refused(field: str, option: dict[str, Any]) -> None:
    assert create(lane_specs(), **GOOD, **option) == (Result.INVALID_ARGUMENT, None)
    with pytest.raises(TypeError, match="^" + field):
        WorkerScheduler(lane_specs(), **GOOD, **option)


@pytest.mark.timeout(10)
def test_create_never_raises_for_an_unknown_option_or_a_plug_in_that_does_not_fit() -> None:
    assert create(lane_specs(), **GOOD, bogus=1) == (Result.INVALID_ARGUMENT, None)
    assert create(lane_specs(), **GOOD, lane_factory=lambda: None) == (Result.INVALID_ARGUMENT, None)


# --------------------------------------------------------------------------- Work Lane: limits


@pytest.mark.timeout(10)
def test_huge_arguments_are_refused_at_once_not_allocated() -> None:
    _refused("lanes", lanes=range(2**70))  # its len() overflows: still a clear error
    _refused("lanes", lanes=[LaneSpec(noop)] * (MAX_LANES + 1))
    _refused("workers", workers=MAX_WORKERS + 1)
    _refused("workers", workers=10**9)
    _refused("lane_capacity", lane_capacity=MAX_SIZE * 2)
    _refused("max_per_drain", max_per_drain=MAX_SIZE + 1)
    _refused("max_per_drain", max_per_drain=10**5000)  # past the int-to-str limit: the message still works
    _refused("ready_capacity", ready_capacity=2**70)


# --------------------------------------------------------------------------- Work Lane: ToolKit sizes


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [1, 3, 6, 100])
def test_lane_capacity_must_be_a_power_of_two_of_at_least_two(capacity: int) -> None:
    _refused("lane_capacity", lane_capacity=capacity)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("lanes", "ready"), [(1, 1), (2, 3), (3, 6), (3, 2)])
def test_ready_capacity_must_be_a_power_of_two_holding_every_lane(lanes: int, ready: int) -> None:
    _refused("ready_capacity", lanes=lane_specs(lanes), ready_capacity=ready)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [2, 4, 1024])
def test_powers_of_two_are_accepted(capacity: int) -> None:
    result, scheduler = create(
        lane_specs(3), workers=1, lane_capacity=capacity, max_per_drain=1, ready_capacity=4
    )
    assert result is Result.SUCCESS and scheduler is not None
    assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_checking_sizes_accept_the_specs_small_sizes_and_nothing_wrong() -> None:
    small: dict[str, Any] = {
        "workers": 1,
        "lane_capacity": 1,
        "max_per_drain": 1,
        "ready_capacity": 3,
        "sizing": Sizing.CHECKING,
    }
    result, scheduler = create(lane_specs(3), **small)
    assert result is Result.SUCCESS and scheduler is not None
    assert scheduler.config.as_trace_config()["ready_capacity"] == 3
    assert scheduler.stop() is Result.SUCCESS
    for bad in ({"lane_capacity": 0}, {"lane_capacity": 1.0}, {"ready_capacity": 2}, {"workers": True}):
        assert create(lane_specs(3), **{**small, **bad}) == (Result.INVALID_ARGUMENT, None)


# --------------------------------------------------------------------------- Work Lane: methods


@pytest.mark.timeout(10)
def test_stop_refuses_anything_but_a_stop_mode_and_keeps_running() -> None:
    seen: list[Any] = []
    scheduler = WorkerScheduler([LaneSpec(lambda c, i: seen.append(i))], **GOOD)
    for mode in ("discard", "bogus", None, 42, "drain", StopMode.DRAIN.value):
        assert scheduler.stop(mode) is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
        assert scheduler.running
    handle = scheduler.get_lane(0)[1]
    assert scheduler.try_post(handle, 1) is Result.SUCCESS
    assert scheduler.stop(StopMode.DISCARD) is Result.SUCCESS
    assert scheduler.stopped


@pytest.mark.timeout(10)
def test_a_bool_or_float_never_names_a_lane() -> None:
    seen: list[Any] = []
    scheduler = WorkerScheduler([LaneSpec(lambda c, i: seen.append(i))] * 2, **GOOD)
    try:
        for index in (True, False, 0.0, 1.0, "0", None, 2**70):
            assert scheduler.get_lane(index) == (Result.INVALID_ARGUMENT, LaneHandle())  # type: ignore[arg-type]
        for lane in (True, 0.0, 1.0, "1", None, 2**70):
            assert scheduler.try_post(LaneHandle(scheduler, lane), "x") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    finally:
        assert scheduler.stop() is Result.SUCCESS
    assert seen == []
