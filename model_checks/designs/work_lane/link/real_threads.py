"""Check 3, real threads: the reference under plain ``threading`` with tracing on, every trace
validated by the fast engine.

Each run builds a scheduler with random sizes, starts producer threads posting to random lanes
(sometimes an invalid handle), sometimes yielding the GIL (``time.sleep(0)``) or sleeping briefly,
with invokes that sometimes sleep, and a Stop in a random mode at a random moment (sometimes racing
the producers, sometimes a second concurrent Stop). ``stress(runs, items)``; CI uses 20 x 5,000.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from dataclasses import dataclass, field

from model_checks.conformance.validator import validate_lines
from reference.results import Result as TkResult
from reference.scheduler import LaneHandle, LaneSpec, Sizing, StopMode, WorkerScheduler
from reference.tracing import RecordingTracer


@dataclass
class StressResult:
    runs: int = 0
    items: int = 0  # posts made
    events: int = 0
    allowed: int = 0
    seconds: float = 0.0
    rejected: list[str] = field(default_factory=list)  # verdict messages, with the run's seed

    @property
    def verdict(self) -> str:
        return "allowed" if self.runs and not self.rejected else "rejected"


def one_run(seed: int, items: int) -> tuple[list[str], int]:
    """One random run; returns the trace lines and the number of posts."""
    rng = random.Random(seed)
    lanes = rng.randint(1, 4)
    producers = rng.randint(1, 4)
    tracer = RecordingTracer()
    slow = rng.random() < 0.3

    def invoke(context: object, item: object) -> None:
        if slow and rng.random() < 0.01:
            time.sleep(0.0001)

    sched: WorkerScheduler[str] = WorkerScheduler(
        [LaneSpec(invoke, context=i) for i in range(lanes)],
        workers=rng.randint(1, 4),
        lane_capacity=rng.choice([1, 2, 8, 64]),
        max_per_drain=rng.choice([1, 2, 4, 16]),
        ready_capacity=lanes + rng.randint(0, 2),
        tracer=tracer,
        sizing=Sizing.CHECKING,  # any size the spec allows, as the trace validator does
    )
    handles = [sched.get_lane(i)[1] for i in range(lanes)]
    per = items // producers
    mode = rng.choice([StopMode.DRAIN, StopMode.DISCARD])
    stop_at = rng.choice([None, None, rng.randint(0, items)])  # post count at which Stop starts
    posted = [0]
    stop_started = threading.Event()

    def producer(p: int) -> None:
        prng = random.Random(seed * 1_000 + p)
        for k in range(per):
            lane = prng.randrange(lanes + 1)
            handle = LaneHandle() if lane == lanes else handles[lane]
            r = sched.try_post(handle, f"p{p}.{k}")
            posted[0] += 1
            if r is TkResult.CAPACITY_EXCEEDED and prng.random() < 0.5:
                time.sleep(0)
            if stop_at is not None and posted[0] >= stop_at:
                stop_started.set()

    def stopper() -> None:
        stop_started.wait()
        sched.stop(mode)

    threads = [threading.Thread(target=producer, args=(p,), name=f"p{p}") for p in range(producers)]
    if stop_at is not None:
        threads.append(threading.Thread(target=stopper, name="s0"))
        if rng.random() < 0.3:
            threads.append(threading.Thread(target=stopper, name="s1"))
    for t in threads:
        t.start()
    for t in threads[:producers]:
        t.join()
    stop_started.set()
    sched.stop(mode)
    for t in threads:
        t.join()
    return list(tracer.lines()), items


def stress(
    runs: int = 20, items: int = 5_000, seed: int = 0, switch_interval: float | None = None
) -> StressResult:
    """``switch_interval`` (seconds, e.g. 1e-6) makes the GIL switch threads far more often."""
    out = StressResult()
    started = time.perf_counter()
    previous = sys.getswitchinterval()
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)
    try:
        _runs(out, runs, items, seed)
    finally:
        sys.setswitchinterval(previous)
    out.seconds = time.perf_counter() - started
    return out


def _runs(out: StressResult, runs: int, items: int, seed: int) -> None:
    for i in range(runs):
        lines, posted = one_run(seed + i, items)
        verdict = validate_lines(lines)
        out.runs += 1
        out.items += posted
        out.events += verdict.events
        if verdict.allowed and not verdict.prefix:
            out.allowed += 1
        else:
            out.rejected.append(f"seed {seed + i}: rule {verdict.rule}: {verdict.message}")


if __name__ == "__main__":  # python -m model_checks.designs.work_lane.link.real_threads RUNS ITEMS [SEED]
    args = sys.argv[1:]
    nums = [int(a) for a in args[:3]] + [20, 5_000, 0][len(args[:3]) :]
    r = stress(nums[0], nums[1], nums[2], switch_interval=float(args[3]) if len(args) > 3 else None)
    head = f"{r.verdict}: {r.runs} runs, {r.items} posts, {r.events} events, {r.allowed} allowed"
    print(f"{head}, {r.seconds:.1f}s")
    for line in r.rejected:
        print("  " + line)
