"""Benchmark of the trace validator (``python -m model_checks.bench.validate [--quick]``).

Generates a long valid work-lane trace with a small randomised scheduler
simulation (its traces are checked by the validator itself, and short ones by
the generic spec engine in tests/conformance), writes it to a temporary file,
and measures events/s of ``validate_file`` and peak traced memory at two
lengths, to show that memory does not grow with the trace.

``generic_engine``: the streaming spec search (``conformance/search.py``) on
traces of the real Schedule Gate and Akka references (real threads, so the
interleavings vary run to run): events/s, and peak traced memory of a gate
trace at two lengths.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from model_checks.conformance import validate_file

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
    seq = 0
    item = 0
    stopping = False

    def ev(thread: str, event: str, **fields: object) -> dict[str, object]:
        nonlocal seq
        seq += 1
        return {"seq": seq, "thread": thread, "event": event, **fields}

    while True:
        if not stopping and seq >= n and not owes:
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
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        header = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG}
        out.write(json.dumps(header) + "\n")
        for event in synthetic_events(n, seed):
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
            count += 1
    return count


def _peak_memory(path: Path) -> int:
    tracemalloc.start()
    try:
        verdict = validate_file(path)
        assert verdict.code == 0, verdict.message
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench(
    quick: bool = False,
    *,
    sizes: tuple[int, int] | None = None,
    generic_sizes: tuple[int, int] | None = None,
) -> dict[str, object]:
    """Events/s on a long trace, and peak traced memory at two trace lengths (long, short)."""
    long_n, short_n = sizes or ((200_000, 20_000) if quick else (1_000_000, 100_000))
    with tempfile.TemporaryDirectory() as tmp:
        long_path, short_path = Path(tmp) / "long.jsonl", Path(tmp) / "short.jsonl"
        events = write_trace(long_path, long_n)
        short_events = write_trace(short_path, short_n, seed=1)
        started = time.perf_counter()
        verdict = validate_file(long_path)
        seconds = time.perf_counter() - started
        assert verdict.code == 0, verdict.message
        memory_short = _peak_memory(short_path)
        memory_long = _peak_memory(long_path)
        size = os.path.getsize(long_path)
    return {
        "generic_engine": bench_generic(quick, sizes=generic_sizes),
        "events": events,
        "trace_bytes": size,
        "seconds": round(seconds, 3),
        "events_per_second": round(events / seconds),
        "peak_memory_bytes": {f"{short_events}_events": memory_short, f"{events}_events": memory_long},
        "memory_ratio_long_over_short": round(memory_long / memory_short, 3),
    }


def write_gate_trace(path: Path, posts: int) -> int:
    """A trace of the Schedule Gate reference: 4 producer threads, 16 actors, 4 workers."""
    from reference.results import Result
    from reference.schedule_gate import GateScheduler, header
    from reference.tracing import RecordingTracer

    tracer = RecordingTracer()
    sched: GateScheduler[str] = GateScheduler(
        [lambda e: None] * 16, permits=8, workers=4, mailbox_capacity=8, max_per_drain=4, tracer=tracer
    )

    def produce(p: int) -> None:
        for k in range(posts):
            while sched.post((k * 7 + p) % 16, f"p{p}.{k}") is not Result.SUCCESS:
                time.sleep(0.0001)

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sched.stop()
    assert tracer.config is not None
    return _dump(path, header(tracer.config), tracer.events())


def write_akka_trace(path: Path, sends: int) -> int:
    """A trace of the Akka-mailbox reference: 2 producer threads, 3 mailboxes, 2 workers, a suspend/close."""
    from reference.akka_mailbox import trace_header

    config, events = akka_real_threads(sends)
    return _dump(path, trace_header(config), events)


def akka_real_threads(sends: int) -> tuple[Any, list[dict[str, Any]]]:
    """Run the Akka-mailbox reference on real threads with tracing on: ``(config, events)``."""
    from reference.akka_mailbox import ActorRef, Dispatcher
    from reference.tracing import RecordingTracer

    tracer = RecordingTracer()
    d = Dispatcher(throughput=2, workers=2, tracer=tracer)
    refs: list[ActorRef[str]] = [d.spawn(lambda m: None) for _ in range(3)]

    def produce(p: int) -> None:
        for k in range(sends):
            refs[(k + p) % 3].tell(f"p{p}.{k}")

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(2)]
    for t in threads:
        t.start()
    refs[1].suspend()
    refs[1].resume()
    refs[2].close()
    for t in threads:
        t.join()
    d.shutdown()
    assert tracer.config is not None
    return tracer.config, tracer.events()


def _dump(path: Path, header: dict[str, object], events: list[dict[str, object]]) -> int:
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for event in events:
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
    return len(events)


def _timed(path: Path, *, complete: bool = False) -> float:
    started = time.perf_counter()
    verdict = validate_file(path, complete=complete)
    seconds = time.perf_counter() - started
    assert verdict.code == 0, verdict.message
    return seconds


def bench_generic(quick: bool = False, *, sizes: tuple[int, int] | None = None) -> dict[str, object]:
    """The generic (streaming spec search) engine on gate and Akka traces of the real references.

    ``sizes``: posts per gate producer and sends per Akka producer.
    """
    gate_posts, akka_sends = sizes or ((500, 300) if quick else (2_500, 1_000))
    with tempfile.TemporaryDirectory() as tmp:
        gate_long, gate_short, akka = (
            Path(tmp) / "gate.jsonl",
            Path(tmp) / "gate-short.jsonl",
            Path(tmp) / "a.jsonl",
        )
        gate_events = write_gate_trace(gate_long, gate_posts)
        short_events = write_gate_trace(gate_short, gate_posts // 10)
        akka_events = write_akka_trace(akka, akka_sends)
        gate_seconds = _timed(gate_long)
        akka_seconds = _timed(akka, complete=True)
        memory_short = _peak_memory(gate_short)
        memory_long = _peak_memory(gate_long)
    return {
        "schedule_gate": {
            "events": gate_events,
            "seconds": round(gate_seconds, 3),
            "events_per_second": round(gate_events / gate_seconds),
            "peak_memory_bytes": {
                f"{short_events}_events": memory_short,
                f"{gate_events}_events": memory_long,
            },
            "memory_ratio_long_over_short": round(memory_long / memory_short, 3),
        },
        "akka_mailbox": {
            "events": akka_events,
            "seconds": round(akka_seconds, 3),
            "events_per_second": round(akka_events / akka_seconds),
        },
    }


if __name__ == "__main__":
    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
