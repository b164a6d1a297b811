"""The Work Lane's trace for `lanecheck bench validate`: a long valid trace, generated fast.

A small randomised scheduler simulation writes about ``n`` events of a valid
behaviour (its traces are checked by the validator itself, and short ones by the
generic spec engine in tests/conformance).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from model_checks.bench.traces import TraceBench, dump
from model_checks.conformance.numbering import Numbering

CONFIG = {"lanes": 8, "workers": 4, "lane_capacity": 4, "max_per_drain": 3, "ready_capacity": 8}
PRODUCERS = 4


def synthetic_events(n: int, seed: int = 0) -> Iterator[dict[str, object]]:
    """About ``n`` events of a valid behaviour ending with Stop(drain) (plus the drain-out)."""
    rng = random.Random(seed)
    lanes, cap, budget = CONFIG["lanes"], CONFIG["lane_capacity"], CONFIG["max_per_drain"]
    queue: list[deque[str]] = [deque() for _ in range(lanes)]
    idle = [True] * lanes
    ready: deque[int] = deque()
    owes: dict[str, int] = {}
    workers: dict[str, list[int]] = {f"w{i}": [0, -1, 0] for i in range(CONFIG["workers"])}  # pc, lane, n
    numbering = Numbering()
    item = 0
    stopping = False

    ev = numbering.event

    while True:
        if not stopping and numbering.seq >= n and not owes:
            stopping = True
            yield ev("main", "stop_begin", mode="drain")
        busy = any(w[0] for w in workers.values())
        if stopping and not busy and not ready and not any(queue):
            yield ev("main", "stop_end", mode="drain", result="ok")
            return
        actor = rng.randrange(PRODUCERS + len(workers))
        if actor < PRODUCERS:
            p = f"p{actor}"
            if p in owes:
                ready.append(owes.pop(p))
                yield ev(p, "submit", lane=ready[-1])
            elif stopping:
                continue
            else:
                lane = rng.randrange(lanes)
                item += 1
                if len(queue[lane]) >= cap:
                    yield ev(p, "post", lane=lane, item=f"i{item}", result="capacity_exceeded", submit=False)
                else:
                    queue[lane].append(f"i{item}")
                    submit = idle[lane]
                    if submit:
                        idle[lane] = False
                        owes[p] = lane
                    yield ev(p, "post", lane=lane, item=f"i{item}", result="ok", submit=submit)
            continue
        name = f"w{actor - PRODUCERS}"
        w = workers[name]
        if w[0] == 0 and ready:
            w[:] = [1, ready.popleft(), 0]
            yield ev(name, "take", lane=w[1])
        elif w[0] == 1:
            w[0] = 2
            yield ev(name, "drain_begin", lane=w[1])
        elif w[0] == 2:
            q = queue[w[1]]
            if q and w[2] < budget:
                w[2] += 1
                yield ev(name, "invoke", lane=w[1], item=q.popleft())
            elif q:
                yield ev(name, "drain_end", lane=w[1], outcome="resubmit", invoked=w[2])
                w[0] = 3
            else:
                idle[w[1]] = True
                yield ev(name, "drain_end", lane=w[1], outcome="idle", invoked=w[2])
                w[:] = [0, -1, 0]
        elif w[0] == 3:
            ready.append(w[1])
            yield ev(name, "submit", lane=w[1])
            w[:] = [0, -1, 0]


def write_trace(path: Path, n: int, seed: int = 0) -> int:
    """Write a synthetic trace of about ``n`` events; the number of events written."""
    header = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG}
    return dump(path, header, synthetic_events(n, seed))


# Events of a long and a short trace: a full run, and a quick one.
TRACE_BENCH = TraceBench.own_engine(write_trace, sizes=(1_000_000, 100_000), quick_sizes=(200_000, 20_000))
