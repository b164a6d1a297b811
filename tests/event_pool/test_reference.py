"""The reference event pool with real threads: posting, the all-busy rule, errors, stop, arguments."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import pytest

from reference.event_pool import EventPool, header
from reference.results import Result
from reference.scheduler import StopMode
from reference.tracing import RecordingTracer


def _events(tracer: RecordingTracer, event: str) -> list[dict[str, Any]]:
    return [e for e in tracer.events() if e["event"] == event]


@pytest.mark.timeout(30)
def test_every_posted_work_runs_exactly_once_and_stop_drains() -> None:
    ran: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        with lock:
            ran.append(i)

    pool = EventPool(3)
    for i in range(500):
        assert pool.post(partial(work, i)) is Result.SUCCESS
    assert pool.stop() is Result.SUCCESS
    assert sorted(ran) == list(range(500))
    assert pool.stopped and pool.post(lambda: None) is Result.INVALID_STATE
    assert pool.stop() is Result.SUCCESS  # already stopped


@pytest.mark.timeout(30)
def test_a_post_wakes_an_idle_thread_first_and_signals_nobody_when_all_are_busy() -> None:
    tracer = RecordingTracer()
    release = threading.Event()
    started = threading.Semaphore(0)

    def blocker() -> None:
        started.release()
        release.wait()

    pool = EventPool(2, tracer=tracer)
    pool.post(blocker)
    pool.post(blocker)
    started.acquire()
    started.acquire()  # both threads are in a callback
    pool.post(lambda: None)
    posts = _events(tracer, "post")
    assert [p["to"] for p in posts] == ["t0", "t1", None]
    assert [s["to"] for s in _events(tracer, "signal")] == ["t0", "t1"]
    release.set()
    assert pool.stop() is Result.SUCCESS
    # The unsignalled work was taken by a thread whose previous event was ``done``: no wait between.
    events = tracer.events()
    take = next(e for e in events if e["event"] == "take" and e["item"] == 2)
    before = [e for e in events if e["thread"] == take["thread"] and e["seq"] < take["seq"]]
    assert before[-1]["event"] == "done"


@pytest.mark.timeout(30)
def test_a_raising_work_is_reported_and_the_thread_carries_on() -> None:
    errors: list[tuple[object, str]] = []
    ran: list[int] = []

    def bad() -> None:
        raise ValueError("boom")

    pool = EventPool(1, on_error=lambda work, exc: errors.append((work, str(exc))))
    pool.post(bad)
    pool.post(lambda: ran.append(1))
    assert pool.stop() is Result.SUCCESS
    assert errors == [(bad, "boom")] and ran == [1]


@pytest.mark.timeout(30)
def test_stop_discard_reports_every_listed_work_and_runs_the_taken_one() -> None:
    entered, release = threading.Event(), threading.Event()
    discarded: list[object] = []
    ran: list[str] = []

    def first() -> None:
        entered.set()
        release.wait()
        ran.append("first")

    rest = [lambda: ran.append("rest") for _ in range(3)]
    pool = EventPool(1, on_discard=discarded.append)
    pool.post(first)
    entered.wait()
    for w in rest:
        pool.post(w)
    threading.Timer(0.05, release.set).start()
    assert pool.stop(StopMode.DISCARD) is Result.SUCCESS
    assert ran == ["first"] and discarded == rest


@pytest.mark.timeout(30)
def test_stop_from_a_pool_thread_is_refused() -> None:
    got: list[Result] = []
    holder: list[EventPool] = []
    pool = EventPool(1)
    holder.append(pool)
    pool.post(lambda: got.append(holder[0].stop()))
    assert pool.stop() is Result.SUCCESS
    assert got == [Result.INVALID_STATE]


@pytest.mark.timeout(30)
def test_bad_arguments_are_refused_naming_the_field() -> None:
    with pytest.raises(TypeError, match="threads"):
        EventPool(True)
    with pytest.raises(ValueError, match="threads"):
        EventPool(0)
    with pytest.raises(TypeError, match="on_error"):
        EventPool(1, on_error=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="wait_timeout"):
        EventPool(1, wait_timeout=float("nan"))
    with pytest.raises(TypeError, match="wait_timeout"):
        EventPool(1, wait_timeout="1")  # type: ignore[arg-type]
    pool = EventPool(1)
    assert pool.post(3) is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    assert pool.stop("drain") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    assert pool.stop() is Result.SUCCESS


@pytest.mark.timeout(30)
def test_a_wait_timeout_changes_nothing_but_the_wakes() -> None:
    tracer = RecordingTracer()
    pool = EventPool(2, tracer=tracer, wait_timeout=0.001)
    threading.Event().wait(0.02)
    ran: list[int] = []
    pool.post(lambda: ran.append(1))
    assert pool.stop() is Result.SUCCESS
    assert ran == [1]
    assert any(e["result"] == "timeout" for e in _events(tracer, "wake"))


def _noops(*, threads: int, posts: int) -> tuple[EventPool, RecordingTracer]:
    """A traced pool of ``threads`` that ran ``posts`` no-op works and stopped."""
    tracer = RecordingTracer()
    pool = EventPool(threads, tracer=tracer)
    for _ in range(posts):
        pool.post(lambda: None)
    pool.stop()
    return pool, tracer


def _taken(tracer: RecordingTracer) -> list[int]:
    return [e["item"] for e in _events(tracer, "take") if e["item"] is not None]


@pytest.mark.timeout(30)
def test_the_trace_follows_the_documented_vocabulary() -> None:
    _, tracer = _noops(threads=2, posts=5)
    assert tracer.config == {"threads": 2}
    assert header(tracer.config)["design"] == "event-pool"
    fields = {
        "post": {"item", "to", "result"},
        "signal": {"to"},
        "wait": set(),
        "wake": {"result"},
        "take": {"item"},
        "run": {"item"},
        "done": {"item", "raised"},
        "stop_begin": {"mode"},
        "stop_end": {"mode", "result"},
    }
    for e in tracer.events():
        assert set(e) - {"seq", "thread", "event"} == fields[e["event"]], e
    assert _taken(tracer) == list(range(5))


@pytest.mark.timeout(60)
def test_the_work_array_drops_its_handed_out_head_and_keeps_the_indices() -> None:
    pool, tracer = _noops(threads=1, posts=3000)
    assert _taken(tracer) == list(range(3000))
    assert len(pool._works) < 3000


class _BrokenPool(EventPool):
    def _after_wake(self, me: Any) -> None:
        raise RuntimeError("a bug of the pool's own")


@pytest.mark.timeout(30)
def test_a_fault_of_the_pool_fails_it_and_stop_reports_what_never_ran() -> None:
    discarded: list[object] = []
    pool = _BrokenPool(1, on_discard=discarded.append)
    works = [lambda: None for _ in range(2)]
    pool.post(works[0])
    while not pool.failed:
        threading.Event().wait(0.001)
    assert pool.post(works[1]) is Result.INVALID_STATE
    assert pool.stop() is Result.UNKNOWN
    assert discarded == [works[0]]
    failure = pool.failure
    assert failure is not None and isinstance(failure.error, RuntimeError)
    assert failure.discarded == [(0, works[0])]
