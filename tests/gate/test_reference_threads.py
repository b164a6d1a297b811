"""The Schedule Gate reference under real threads: result codes, stress, tracing."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from reference.results import Result
from reference.schedule_gate import GateScheduler, config_error
from reference.tracing import RecordingTracer


def _noop(event: object) -> None:
    return None


@pytest.mark.timeout(30)
def test_config_errors_name_the_field() -> None:
    assert config_error([], 1, 1, 1, 1) == "actors must hold at least one element, got none"
    assert config_error([_noop], 0, 1, 1, 1) == "permits must be at least 1, got 0"
    with pytest.raises(ValueError, match="workers"):
        GateScheduler([_noop], permits=1, workers=0)


@pytest.mark.timeout(30)
def test_refusals_leave_the_event_with_the_caller() -> None:
    release = threading.Event()
    entered = threading.Event()
    ran: list[tuple[int, object]] = []

    def blocking(actor: int) -> Callable[[object], None]:
        def handle(event: object) -> None:
            entered.set()
            release.wait(10)
            ran.append((actor, event))

        return handle

    sched = GateScheduler([blocking(0), blocking(1)], permits=1, workers=2, mailbox_capacity=1)
    try:
        assert sched.post(5, "x") is Result.INVALID_ARGUMENT
        assert sched.post(0, "a") is Result.SUCCESS
        assert entered.wait(10)  # actor 0 runs and holds the only permit
        assert sched.post(1, "b") is Result.REJECTED  # actor 1 is idle: it needs a permit
        assert sched.post(0, "c") is Result.SUCCESS  # actor 0 is runnable: no permit needed
        assert sched.post(0, "d") is Result.CAPACITY_EXCEEDED  # its mailbox is full
        assert sched.free_permits() == 0
    finally:
        release.set()
        assert sched.stop() is Result.SUCCESS
    assert ran == [(0, "a"), (0, "c")]
    assert sched.post(0, "e") is Result.INVALID_STATE
    assert sched.stop() is Result.SUCCESS
    assert sched.free_permits() == 1
    assert sched.gate(0).phase == sched.gate(1).phase == "Idle"


@pytest.mark.timeout(30)
def test_handler_errors_are_reported_and_stop_from_a_handler_is_refused() -> None:
    errors: list[tuple[int, object, str]] = []
    refusals: list[Result] = []
    holder: list[GateScheduler[object]] = []

    def handle(event: object) -> None:
        if event == "boom":
            raise ValueError("boom")
        if event == "stop":
            refusals.append(holder[0].stop())

    sched: GateScheduler[object] = GateScheduler(
        [handle], permits=1, workers=1, on_error=lambda a, e, x: errors.append((a, e, str(x)))
    )
    holder.append(sched)
    for event in ("boom", "stop", "after"):
        assert sched.post(0, event) is Result.SUCCESS
    assert sched.stop() is Result.SUCCESS
    assert errors == [(0, "boom", "boom")]
    assert refusals == [Result.INVALID_STATE]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("permits", "workers", "budget"), [(16, 4, 8), (4, 3, 1), (1, 2, 2)])
def test_stress_conservation_one_drainer_permits(permits: int, workers: int, budget: int) -> None:
    actors, producers, per_producer = 16, 4, 5_000
    lock = threading.Lock()
    running = [0] * actors
    overlaps: list[int] = []
    ran: list[list[tuple[int, int]]] = [[] for _ in range(actors)]

    def handler(actor: int) -> Callable[[tuple[int, int]], None]:
        def handle(event: tuple[int, int]) -> None:
            with lock:
                running[actor] += 1
                if running[actor] > 1:
                    overlaps.append(actor)
            ran[actor].append(event)
            with lock:
                running[actor] -= 1

        return handle

    sched = GateScheduler(
        [handler(a) for a in range(actors)],
        permits=permits,
        workers=workers,
        mailbox_capacity=8,
        max_per_drain=budget,
    )
    accepted: list[list[tuple[int, int]]] = [[] for _ in range(producers)]
    refused = [0] * producers

    def produce(p: int) -> None:
        for n in range(per_producer):
            event = (p, n)
            if sched.post((n * 5 + p) % actors, event) is Result.SUCCESS:
                accepted[p].append(event)
            else:
                refused[p] += 1

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sched.stop() is Result.SUCCESS
    done = [e for box in ran for e in box]
    assert sorted(done) == sorted(e for box in accepted for e in box)  # nothing lost, nothing twice
    assert len(done) + sum(refused) == producers * per_producer
    assert overlaps == []  # one drainer per actor
    assert sched.free_permits() == permits
    for a in range(actors):
        assert sched.gate(a).phase == "Idle" and sched.queued(a) == 0
        # per actor, one producer's events run in the order it posted them
        for p in range(producers):
            mine = [n for q, n in ran[a] if q == p]
            assert mine == sorted(mine)


@pytest.mark.timeout(60)
def test_trace_tells_the_protocol() -> None:
    tracer = RecordingTracer()
    sched: GateScheduler[str] = GateScheduler(
        [_noop, _noop], permits=1, workers=2, mailbox_capacity=2, max_per_drain=1, tracer=tracer
    )
    threads = [
        threading.Thread(target=lambda p=p: [sched.post(k % 2, f"p{p}.{k}") for k in range(200)])
        for p in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sched.stop()
    assert tracer.config == sched.trace_config()
    events = tracer.events()
    names = {e["event"] for e in events}
    assert {"permit_acquire", "admit_begin", "publish", "admit_end", "token_enqueue", "take"} <= names
    assert {"drain_begin", "process", "drain_end", "permit_release"} <= names
    # Permits conserved along the trace: acquired minus released stays within [0, pool].
    held = 0
    for e in events:
        if e["event"] == "permit_acquire" and e["granted"]:
            held += 1
        elif e["event"] == "permit_release":
            held -= 1
        assert 0 <= held <= 1, e
    assert held == 0
    published = [e["item"] for e in events if e["event"] == "publish" and e["result"] == "ok"]
    processed = [e["item"] for e in events if e["event"] == "process"]
    assert sorted(published) == sorted(processed)
