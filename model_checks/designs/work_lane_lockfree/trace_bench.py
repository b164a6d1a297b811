"""Benchmark of the lock-free lane's trace validator (``lanecheck bench work-lane-lockfree-trace``).

Writes a trace of the real reference on real threads (4 producers retrying on a full lane, 4 lanes,
2 workers, then ``Stop(DRAIN)``; format v2, one event per atomic step) and measures events/s of
the validator reading it the way `lanecheck validate` does, and peak traced memory on a shorter
one (``bench.traces.goal_figures``). The goal is issue 24's 50,000 events/s on a long trace; the
v2 format is judged by the streaming spec search, far below it today (docs/performance.md).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from model_checks.bench.traces import TraceBench
from reference.results import Result
from reference.tracing import JsonlTracer
from reference.work_lane_lockfree import LaneSpec, LockFreeScheduler, StopMode, trace_header

GOAL = 50_000  # events/s (issue 24)
PRODUCERS, LANES, WORKERS = 4, 4, 2


def _noop(_context: object, _item: object) -> None:
    return None


def write_trace(path: Path, posts: int, seed: int = 0) -> int:
    """A trace of ``posts`` posts per producer (real threads: ``seed`` is unused, the interleaving
    varies run to run); the number of events written."""
    with JsonlTracer(str(path), make_header=trace_header) as tracer:
        scheduler: LockFreeScheduler[str] = LockFreeScheduler(
            [LaneSpec(_noop) for _ in range(LANES)],
            workers=WORKERS,
            lane_capacity=8,
            max_per_drain=4,
            tracer=tracer,
        )
        handles = [scheduler.get_lane(i)[1] for i in range(LANES)]

        def produce(p: int) -> None:
            for k in range(posts):
                # A full lane refuses (the item stays here): retry until it is taken.
                while scheduler.try_post(handles[(p + k) % LANES], f"p{p}.{k}") is Result.CAPACITY_EXCEEDED:
                    time.sleep(0)

        threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(PRODUCERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if scheduler.stop(StopMode.DRAIN) is not Result.SUCCESS:
            raise RuntimeError("Stop(DRAIN) of the bench's scheduler did not succeed")
    with open(path, encoding="utf-8") as lines:
        return sum(1 for _ in lines) - 1  # the header is not an event


# Posts per producer of the long and the short trace (about 5.6 events a post: 2,500 posts per
# producer write about 56,000 events; the search judges about a thousand a second).
TRACE_BENCH = TraceBench(write_trace, sizes=(2_500, 250), quick_sizes=(250, 50))
