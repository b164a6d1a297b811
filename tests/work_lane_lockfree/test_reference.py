"""The lock-free reference on real threads: API, argument errors, Stop modes, a stress with a
concurrent Stop."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference.results import Result
from reference.runtime import DEFAULT_RUNTIME
from reference.tracing import RecordingTracer
from reference.work_lane_lockfree import LaneSpec, LockFreeScheduler, Sizing, StopMode, create
from reference.work_lane_lockfree_queue import EMPTY, BoundedQueue
from tests.helpers.gated import Gated


def _make(lanes: int = 2, **kw: Any) -> tuple[LockFreeScheduler[Any], list[list[Any]], list[tuple[int, Any]]]:
    seen: list[list[Any]] = [[] for _ in range(lanes)]
    discarded: list[tuple[int, Any]] = []
    options: dict[str, Any] = {"workers": 2, "lane_capacity": 8, "max_per_drain": 2, **kw}
    sched: LockFreeScheduler[Any] | None
    result, sched = create(
        [LaneSpec(lambda i, item: seen[i].append(item), i) for i in range(lanes)],
        on_discard=lambda lane, item: discarded.append((lane, item)),
        **options,
    )
    assert result is Result.SUCCESS and sched is not None
    return sched, seen, discarded


def test_queue_is_a_bounded_fifo() -> None:
    q: BoundedQueue[int] = BoundedQueue(DEFAULT_RUNTIME, 2)
    assert q.push(1) and q.push(2) and not q.push(3)
    assert len(q) == 2
    assert [q.pop(), q.pop(), q.pop()] == [1, 2, EMPTY]
    with pytest.raises(ValueError, match="capacity"):
        BoundedQueue(DEFAULT_RUNTIME, 0)


@pytest.mark.timeout(30)
def test_posts_run_in_order_and_stop_drain_runs_everything() -> None:
    tracer = RecordingTracer()
    sched, seen, discarded = _make(tracer=tracer)
    handles = [sched.get_lane(i)[1] for i in range(2)]
    assert [sched.try_post(handles[i % 2], i) for i in range(8)] == [Result.SUCCESS] * 8
    assert sched.stop(StopMode.DRAIN) is Result.SUCCESS
    assert seen == [[0, 2, 4, 6], [1, 3, 5, 7]] and discarded == []
    assert sched.stopped and not sched.running
    kinds = [e["event"] for e in tracer.events()]
    assert kinds.count("invoke") == 8 and "stop_begin" in kinds and kinds[-1] == "stop_end"
    # Every accepted post is traced at its push (format v2), and some post's CAS reserved a lane.
    pushes = [e for e in tracer.events() if e["event"] == "push"]
    assert len(pushes) == 8 and all(p["result"] == "ok" for p in pushes)
    assert any(e["event"] == "cas" and e["from"] == "idle" and e["ok"] for e in tracer.events())
    assert sched.stop() is Result.SUCCESS  # already stopped


@pytest.mark.timeout(30)
def test_refusals_leave_the_item_with_the_caller() -> None:
    invoke: Gated[int] = Gated()
    sched: LockFreeScheduler[int] | None
    _, sched = create(
        [LaneSpec(invoke)],
        workers=1,
        lane_capacity=2,
        max_per_drain=1,
    )
    assert sched is not None
    handle = sched.get_lane(0)[1]
    results = [sched.try_post(handle, i) for i in range(4)]  # one runs (blocked), two queue, one refused
    assert Result.CAPACITY_EXCEEDED in results
    assert sched.try_post((sched, 0), 9) is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    other = create([LaneSpec(print)], workers=1, lane_capacity=2, max_per_drain=1)[1]
    assert other is not None
    assert sched.try_post(other.get_lane(0)[1], 9) is Result.INVALID_ARGUMENT
    invoke.gate.set()
    assert sched.stop(StopMode.DRAIN) is Result.SUCCESS
    assert other.stop() is Result.SUCCESS
    assert sched.try_post(handle, 10) is Result.INVALID_STATE
    assert sorted(invoke.seen) == [i for i, r in enumerate(results) if r is Result.SUCCESS]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": True}, "workers"),
        ({"lane_capacity": 3}, "lane_capacity"),
        ({"max_per_drain": 1.5}, "max_per_drain"),
        ({"ready_capacity": 1, "lane_capacity": 2}, "ready_capacity"),
        ({"on_error": 3}, "on_error"),
        ({"tracer": object()}, "tracer"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    options: dict[str, Any] = {"workers": 1, "lane_capacity": 2, "max_per_drain": 1, **kwargs}
    lanes = [LaneSpec(print), LaneSpec(print)]
    with pytest.raises((TypeError, ValueError), match=field):
        LockFreeScheduler(lanes, **options)
    assert create(lanes, **options) == (Result.INVALID_ARGUMENT, None)


@pytest.mark.timeout(30)
def test_handles_and_stop_arguments() -> None:
    sched, _, _ = _make()
    assert sched.get_lane(2)[0] is Result.INVALID_ARGUMENT
    assert sched.get_lane(True)[0] is Result.INVALID_ARGUMENT
    assert sched.stop("drain") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    assert sched.running
    assert sched.stop(StopMode.DISCARD) is Result.SUCCESS
    assert sched.get_lane(0)[0] is Result.INVALID_STATE


@pytest.mark.timeout(30)
def test_stop_discard_reports_every_queued_item() -> None:
    invoke: Gated[int] = Gated()
    ran = invoke.seen  # the stopper appends its result after the items
    discarded: list[tuple[int, int]] = []
    tracer = RecordingTracer()
    sched = LockFreeScheduler(
        [LaneSpec(invoke)],
        workers=1,
        lane_capacity=4,
        max_per_drain=1,
        tracer=tracer,
        on_discard=lambda lane, item: discarded.append((lane, item)),
    )
    handle = sched.get_lane(0)[1]
    assert [sched.try_post(handle, i) for i in range(4)] == [Result.SUCCESS] * 4
    assert invoke.started.wait(10)
    stopper = threading.Thread(target=lambda: ran.append(-int(sched.stop(StopMode.DISCARD))))
    stopper.start()
    while sched.running:  # Stop has closed admission: let the running item finish
        pass
    invoke.gate.set()
    stopper.join(10)
    assert not stopper.is_alive()
    # Item 0 ran; its drain's resubmission was refused or never made; the reset reported the rest.
    assert ran[0] == 0 and ran[-1] == 0  # -SUCCESS == 0
    assert sorted(ran[:-1] + [item for _, item in discarded]) == [0, 1, 2, 3]
    assert [e["event"] for e in tracer.events()][-1] == "stop_end"
    # format v2: the reset that destroyed the queued items names them
    assert any(e["event"] == "reset" and e["items"] for e in tracer.events())


@pytest.mark.timeout(30)
def test_stop_from_a_callback_is_refused() -> None:
    results: list[Result] = []
    holder: list[LockFreeScheduler[int]] = []
    sched: LockFreeScheduler[int] = LockFreeScheduler(
        [LaneSpec(lambda _c, _i: results.append(holder[0].stop()))],
        workers=1,
        lane_capacity=2,
        max_per_drain=1,
    )
    holder.append(sched)
    assert sched.try_post(sched.get_lane(0)[1], 1) is Result.SUCCESS
    assert sched.stop() is Result.SUCCESS
    assert results == [Result.INVALID_STATE]


@pytest.mark.timeout(30)
def test_a_fault_of_our_own_fails_the_scheduler_and_reports_items() -> None:
    invoke: Gated[int] = Gated()
    discarded: list[tuple[int, int]] = []
    sched: LockFreeScheduler[int] = LockFreeScheduler(
        [LaneSpec(invoke)],
        workers=1,
        lane_capacity=4,
        max_per_drain=1,
        on_discard=lambda lane, item: discarded.append((lane, item)),
    )
    handle = sched.get_lane(0)[1]
    assert [sched.try_post(handle, i) for i in range(3)] == [Result.SUCCESS] * 3
    assert invoke.started.wait(10)
    sched._fail(RuntimeError("injected"))  # as if our own code had raised
    assert sched.failed and sched.try_post(handle, 9) is Result.INVALID_STATE
    invoke.gate.set()
    assert sched.stop() is Result.UNKNOWN
    assert sched.failure is not None and "injected" in sched.failure.describe()
    # Item 0 ran; its drain's resubmission may have run item 1 before the failure was seen.
    assert discarded and sorted(item for _, item in discarded) == [i for i in (1, 2) if (0, i) in discarded]
    assert sched.failure.discarded == discarded


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", [StopMode.DRAIN, StopMode.DISCARD])
def test_stress_producers_and_a_concurrent_stop_lose_nothing(mode: StopMode) -> None:
    for _round in range(5):
        _stress_round(mode, lanes=3, producers=4, posts=400)


def _stress_round(mode: StopMode, lanes: int, producers: int, posts: int) -> None:
    invoked: list[list[tuple[int, int]]] = [[] for _ in range(lanes)]
    discarded: list[tuple[int, tuple[int, int]]] = []
    sched: LockFreeScheduler[tuple[int, int]] = LockFreeScheduler(
        [LaneSpec(lambda i, item: invoked[i].append(item), i) for i in range(lanes)],
        workers=3,
        lane_capacity=4,
        max_per_drain=2,
        sizing=Sizing.CHECKING,
        on_discard=lambda lane, item: discarded.append((lane, item)),
    )
    handles = [sched.get_lane(i)[1] for i in range(lanes)]
    accepted: list[list[tuple[int, int]]] = [[] for _ in range(producers)]

    def produce(p: int) -> None:
        for i in range(posts):
            result = sched.try_post(handles[(p + i) % lanes], (p, i))
            if result is Result.SUCCESS:
                accepted[p].append((p, i))
            elif result is Result.INVALID_STATE:
                return  # Stop has begun: every later post is refused too
            else:
                assert result is Result.CAPACITY_EXCEEDED

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    for t in threads:
        t.start()
    assert sched.stop(mode) is Result.SUCCESS
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    every = sorted(item for mine in accepted for item in mine)
    ran = sorted(item for lane in invoked for item in lane)
    dropped = sorted(item for _, item in discarded)
    if mode is StopMode.DRAIN:
        assert ran == every and not dropped
    else:
        assert sorted(ran + dropped) == every
    for lane in range(lanes):
        for p in range(producers):
            order = [i for q, i in invoked[lane] if q == p]
            assert order == sorted(order), f"lane {lane} producer {p} out of order"
