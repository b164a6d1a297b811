"""Stop: drain and discard, refusals, idempotence, no restart, joined workers, context manager."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference import RecordingTracer, Result, StopMode
from tests.helpers.discards import Discards
from tests.helpers.waiting import wait_until

from .refsched_helpers import Recorder, assert_valid, make


class Gate:
    """An invoke that blocks on the first item until released, recording everything."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.recorder = Recorder()

    def __call__(self, context: Any, item: Any) -> None:
        self.entered.set()
        assert self.release.wait(10)
        self.recorder(context, item)


def _stop_in_thread(scheduler: Any, mode: StopMode) -> tuple[threading.Thread, list[Result]]:
    out: list[Result] = []
    thread = threading.Thread(target=lambda: out.append(scheduler.stop(mode)), name="stopper")
    thread.start()
    return thread, out


@pytest.mark.timeout(10)
def test_stop_drain_runs_every_accepted_item() -> None:
    tracer = RecordingTracer()
    recorder = Recorder()
    scheduler = make(recorder, lanes=2, workers=2, lane_capacity=128, max_per_drain=3, tracer=tracer)
    handles = [scheduler.get_lane(i)[1] for i in range(2)]
    for i in range(150):
        assert scheduler.try_post(handles[i % 2], i) is Result.SUCCESS
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert sorted(item for _, item in recorder.calls) == list(range(150))
    assert scheduler.stopped and not scheduler.running
    assert_valid(tracer)
    assert tracer.events()[-1] == {
        "seq": len(tracer),
        "thread": "MainThread",
        "event": "stop_end",
        "mode": "drain",
        "result": "ok",
    }


@pytest.mark.timeout(10)
def test_stop_discard_drops_queued_items_and_lets_the_running_drain_finish() -> None:
    tracer = RecordingTracer()
    gate = Gate()
    discarded = Discards()
    scheduler = make(
        gate, lanes=2, workers=1, lane_capacity=16, max_per_drain=2, tracer=tracer, on_discard=discarded
    )
    lane0, lane1 = scheduler.get_lane(0)[1], scheduler.get_lane(1)[1]
    for item in ("a0", "a1", "a2", "a3"):
        assert scheduler.try_post(lane0, item) is Result.SUCCESS
    assert gate.entered.wait(5)  # the worker is inside the drain of lane 0, on "a0"
    for item in ("b0", "b1"):
        assert scheduler.try_post(lane1, item) is Result.SUCCESS
    stopper, result = _stop_in_thread(scheduler, StopMode.DISCARD)
    wait_until(lambda: not scheduler.running, what="the end of running")
    assert scheduler.try_post(lane0, "late") is Result.INVALID_STATE
    gate.release.set()
    stopper.join(5)
    assert result == [Result.SUCCESS]
    # The running drain finishes up to its budget (2 items); nothing else runs.
    assert gate.recorder.calls == [(0, "a0"), (0, "a1")]
    assert discarded == [(0, "a2"), (0, "a3"), (1, "b0"), (1, "b1")]
    assert_valid(tracer)
    events = tracer.events()
    discards = [e for e in events if e["event"] == "discard"]
    assert discards == [
        {
            "seq": discards[0]["seq"],
            "thread": "stopper",
            "event": "discard",
            "lane": 0,
            "items": ["a2", "a3"],
        },
        {
            "seq": discards[1]["seq"],
            "thread": "stopper",
            "event": "discard",
            "lane": 1,
            "items": ["b0", "b1"],
        },
    ]
    begin = next(e["seq"] for e in events if e["event"] == "stop_begin")
    assert not [e for e in events if e["event"] == "drain_begin" and e["seq"] > begin]
    assert [e["event"] for e in events[-3:]] == ["discard", "discard", "stop_end"]


@pytest.mark.timeout(10)
def test_stop_from_inside_a_callback_is_refused() -> None:
    tracer = RecordingTracer()
    results: list[Result] = []
    holder: list[Any] = []

    def invoke(context: Any, item: Any) -> None:
        results.append(holder[0].stop(StopMode.DRAIN))
        results.append(holder[0].stop(StopMode.DISCARD))

    scheduler = make(invoke, lanes=1, workers=1, tracer=tracer)
    holder.append(scheduler)
    scheduler.try_post(scheduler.get_lane(0)[1], 1)
    assert scheduler.stop() is Result.SUCCESS
    assert results == [Result.INVALID_STATE, Result.INVALID_STATE]
    rejected = [e for e in tracer.events() if e["event"] == "stop_rejected"]
    assert [(e["thread"], e["mode"], e["reason"]) for e in rejected] == [
        ("w0", "drain", "in_callback"),
        ("w0", "discard", "in_callback"),
    ]
    assert_valid(tracer)


@pytest.mark.timeout(10)
def test_stop_from_on_error_is_refused_too() -> None:
    results: list[Result] = []
    holder: list[Any] = []

    def invoke(context: Any, item: Any) -> None:
        raise RuntimeError("fail")

    scheduler = make(
        invoke, lanes=1, workers=1, on_error=lambda lane, item, exc: results.append(holder[0].stop())
    )
    holder.append(scheduler)
    scheduler.try_post(scheduler.get_lane(0)[1], 1)
    assert scheduler.stop() is Result.SUCCESS
    assert results == [Result.INVALID_STATE]


@pytest.mark.timeout(10)
def test_a_second_stop_while_one_is_in_progress_is_refused() -> None:
    tracer = RecordingTracer()
    gate = Gate()
    scheduler = make(gate, lanes=1, workers=1, tracer=tracer)
    scheduler.try_post(scheduler.get_lane(0)[1], "x")
    assert gate.entered.wait(5)
    stopper, result = _stop_in_thread(scheduler, StopMode.DRAIN)
    wait_until(lambda: not scheduler.running, what="the end of running")
    assert scheduler.stop(StopMode.DISCARD) is Result.INVALID_STATE
    assert scheduler.stop(StopMode.DRAIN) is Result.INVALID_STATE
    gate.release.set()
    stopper.join(5)
    assert result == [Result.SUCCESS]
    rejected = [(e["mode"], e["reason"]) for e in tracer.events() if e["event"] == "stop_rejected"]
    assert rejected == [("discard", "stop_in_progress"), ("drain", "stop_in_progress")]
    assert_valid(tracer)


@pytest.mark.timeout(10)
def test_stop_twice_succeeds_silently_and_never_restarts() -> None:
    tracer = RecordingTracer()
    recorder = Recorder()
    scheduler = make(recorder, tracer=tracer)
    handle = scheduler.get_lane(0)[1]
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    count = len(tracer)
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert scheduler.stop(StopMode.DISCARD) is Result.SUCCESS
    assert len(tracer) == count  # no events for a Stop on a stopped scheduler
    assert scheduler.try_post(handle, 1) is Result.INVALID_STATE
    assert scheduler.get_lane(0)[0] is Result.INVALID_STATE
    assert recorder.calls == []
    assert tracer.events()[-1]["event"] == "post" and tracer.events()[-1]["result"] == "invalid_state"


@pytest.mark.timeout(10)
def test_every_worker_is_joined_when_stop_returns() -> None:
    before = set(threading.enumerate())
    scheduler = make(Recorder(), workers=3)
    ours = set(threading.enumerate()) - before
    assert sorted(t.name for t in ours) == ["w0", "w1", "w2"]
    scheduler.try_post(scheduler.get_lane(0)[1], 1)
    assert scheduler.stop() is Result.SUCCESS
    assert not [t for t in ours if t.is_alive()]


@pytest.mark.timeout(10)
def test_get_lane_after_stop_began_is_invalid_state() -> None:
    gate = Gate()
    scheduler = make(gate, lanes=2, workers=1)
    scheduler.try_post(scheduler.get_lane(0)[1], 1)
    assert gate.entered.wait(5)
    stopper, _ = _stop_in_thread(scheduler, StopMode.DRAIN)
    wait_until(lambda: not scheduler.running, what="the end of running")
    assert scheduler.get_lane(1)[0] is Result.INVALID_STATE
    gate.release.set()
    stopper.join(5)


@pytest.mark.timeout(10)
def test_stop_drain_waits_for_items_still_arriving_from_a_running_drain() -> None:
    recorder = Recorder()
    scheduler = make(recorder, lanes=1, workers=1, lane_capacity=64, max_per_drain=1)
    handle = scheduler.get_lane(0)[1]
    for i in range(50):
        scheduler.try_post(handle, i)
    # Budget 1: the lane is resubmitted 49 times while Stop waits.
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert recorder.items(0) == list(range(50))


@pytest.mark.timeout(10)
def test_context_manager_drains_on_normal_exit() -> None:
    recorder = Recorder()
    with make(recorder, lane_capacity=64) as scheduler:
        for i in range(20):
            assert scheduler.try_post(scheduler.get_lane(i % 2)[1], i) is Result.SUCCESS
    assert scheduler.stopped
    assert sorted(item for _, item in recorder.calls) == list(range(20))


@pytest.mark.timeout(10)
def test_context_manager_discards_when_the_block_raises() -> None:
    gate = Gate()
    discarded: list[Any] = []
    with (
        pytest.raises(KeyError),
        make(gate, lanes=1, workers=1, on_discard=lambda lane, item: discarded.append(item)) as scheduler,
    ):
        handle = scheduler.get_lane(0)[1]
        for i in range(5):
            scheduler.try_post(handle, i)
        assert gate.entered.wait(5)
        threading.Timer(0.05, gate.release.set).start()
        raise KeyError("producer failed")
    assert scheduler.stopped
    invoked = [item for _, item in gate.recorder.calls]
    assert invoked + discarded == [0, 1, 2, 3, 4]
    assert discarded  # budget 4: at least the fifth item was dropped
