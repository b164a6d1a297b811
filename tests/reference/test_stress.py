"""Real threads: many producers, random lanes, Stop in a random mode at a random time.

Checked after each run: accepted = invoked + discarded, nothing invoked twice,
each lane in FIFO order, at most one invoke per lane at a time, every worker
joined, and (when traced) the trace rules.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from model_checks.bench.workload import run_producers
from reference import LaneSpec, RecordingTracer, Result, Sizing, StopMode, WorkerScheduler

from .refsched_helpers import assert_valid


class Lane:
    """The context of one lane: what ran on it, and a lock that proves callbacks never overlap."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.invoked: list[tuple[int, int]] = []
        self.overlaps = 0


def invoke(lane: Lane, item: tuple[int, int]) -> None:
    if not lane.busy.acquire(blocking=False):
        lane.overlaps += 1
        return
    try:
        lane.invoked.append(item)
        if item[1] % 97 == 0:
            time.sleep(0.0002)  # now and then a slow callback, so lanes back up
        if item[1] % 251 == 0:
            raise ValueError("an invoke that fails must not stall the lane")
    finally:
        lane.busy.release()


def run_once(seed: int, traced: bool) -> None:
    rng = random.Random(seed)
    lanes = rng.randint(1, 8)
    workers = rng.randint(1, 4)
    producers = rng.randint(2, 6)
    per_producer = rng.randint(100, 1500)
    mode = rng.choice([StopMode.DRAIN, StopMode.DISCARD])
    contexts = [Lane() for _ in range(lanes)]
    discarded: list[tuple[int, tuple[int, int]]] = []
    errors: list[BaseException] = []
    tracer = RecordingTracer() if traced else None
    scheduler: WorkerScheduler[tuple[int, int]] = WorkerScheduler(
        [LaneSpec(invoke, ctx) for ctx in contexts],
        workers=workers,
        lane_capacity=rng.choice([1, 2, 16, 256]),
        max_per_drain=rng.choice([1, 3, 16]),
        ready_capacity=lanes + rng.randint(0, 2),
        tracer=tracer,
        on_error=lambda lane, item, exc: errors.append(exc),
        on_discard=lambda lane, item: discarded.append((lane, item)),
        sizing=Sizing.CHECKING,  # every size the trace rules allow, capacity 1 included
    )
    handles = [scheduler.get_lane(i)[1] for i in range(lanes)]
    accepted: list[list[tuple[int, tuple[int, int]]]] = [[] for _ in range(producers)]

    def produce(p: int) -> None:
        local = random.Random(seed * 1000 + p)
        for i in range(per_producer):
            lane = local.randrange(lanes)
            item = (p, i)
            for _attempt in range(50):
                result = scheduler.try_post(handles[lane], item)
                if result is not Result.CAPACITY_EXCEEDED:
                    break
                time.sleep(0)
            if result is Result.SUCCESS:
                accepted[p].append((lane, item))
            elif result is Result.INVALID_STATE:
                return
            else:
                assert result is Result.CAPACITY_EXCEEDED

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(producers)]
    for t in threads:
        t.start()
    delay = rng.choice([0.0, 0.001, 0.005, 0.02, None])
    if delay is None:  # Stop only after every producer is done
        for t in threads:
            t.join()
    else:
        time.sleep(delay)
    # Sometimes a second Stop races the first: exactly one of them does the work.
    results: list[Result] = []
    rival = threading.Thread(target=lambda: results.append(scheduler.stop(StopMode.DRAIN)), name="rival")
    racing = rng.random() < 0.3
    if racing:
        rival.start()
    results.append(scheduler.stop(mode))
    if racing:
        rival.join()
        assert sorted(results) == sorted([Result.SUCCESS, Result.SUCCESS]) or sorted(results) == sorted(
            [Result.INVALID_STATE, Result.SUCCESS]
        )
        assert scheduler.stop(mode) is Result.SUCCESS  # whichever won has finished by now
    else:
        assert results == [Result.SUCCESS]
    for t in threads:
        t.join()

    invoked = [(lane, item) for lane, ctx in enumerate(contexts) for item in ctx.invoked]
    all_accepted = [pair for per in accepted for pair in per]
    assert sum(ctx.overlaps for ctx in contexts) == 0, "two callbacks of one lane overlapped"
    assert len(invoked) == len(set(invoked)), "an item ran twice"
    assert sorted(invoked + discarded) == sorted(all_accepted), "accepted != invoked + discarded"
    if mode is StopMode.DRAIN and not racing:
        assert discarded == []
    for lane, ctx in enumerate(contexts):
        # Per lane, each producer's items run in the order it posted them.
        for p in range(producers):
            ran = [i for (q, i) in ctx.invoked if q == p]
            assert ran == sorted(ran), f"lane {lane} ran producer {p}'s items out of order"
        queued = [item for (lane_, item) in discarded if lane_ == lane]
        for p in range(producers):
            ran = [i for (q, i) in queued if q == p]
            assert ran == sorted(ran)
    assert all(isinstance(e, ValueError) for e in errors)
    assert scheduler.try_post(handles[0], (0, -1)) is Result.INVALID_STATE
    if tracer is not None:
        assert_valid(tracer)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(40))
def test_stress_untraced(seed: int) -> None:
    run_once(seed, traced=False)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(100, 120))
def test_stress_traced(seed: int) -> None:
    run_once(seed, traced=True)


@pytest.mark.timeout(60)
def test_many_producers_one_lane_keeps_global_fifo() -> None:
    tracer = RecordingTracer()
    ctx = Lane()
    scheduler: WorkerScheduler[tuple[int, int]] = WorkerScheduler(
        [LaneSpec(invoke, ctx)], workers=3, lane_capacity=8, max_per_drain=2, tracer=tracer
    )
    handle = scheduler.get_lane(0)[1]

    def produce(p: int) -> None:
        for i in range(300):
            while scheduler.try_post(handle, (p, i)) is Result.CAPACITY_EXCEEDED:
                time.sleep(0)

    run_producers(produce, 4)
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    accepted_order = [e["item"] for e in tracer.events() if e["event"] == "post" and e["result"] == "ok"]
    assert [repr(item) for item in ctx.invoked] == accepted_order
    assert len(ctx.invoked) == 1200
    assert_valid(tracer)
