"""The Windows thread-pool work API on the event pool, with real threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference.event_pool import EventPool
from reference.event_pool_api import ThreadpoolWork
from reference.results import Result
from reference.scheduler import StopMode
from reference.tracing import RecordingTracer


class Blocking:
    """A callback that says it entered, then goes on only once released; ``runs``: how many ended."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.runs: list[int] = []

    def __call__(self, context: Any, work: ThreadpoolWork) -> None:
        self.entered.set()
        self.release.wait()
        self.runs.append(1)


@pytest.mark.timeout(30)
def test_a_work_object_submitted_n_times_runs_n_callbacks() -> None:
    seen: list[tuple[Any, ThreadpoolWork]] = []
    lock = threading.Lock()

    def callback(context: Any, work: ThreadpoolWork) -> None:
        with lock:
            seen.append((context, work))

    pool = EventPool(3)
    work = ThreadpoolWork(pool, callback, "ctx", name="w")
    for _ in range(10):
        assert work.submit() is Result.SUCCESS
    waited = work.wait_for_callbacks()
    assert waited.result is Result.SUCCESS and waited.cancelled == 0
    assert len(seen) == 10 and all(c == "ctx" and w is work for c, w in seen)
    assert (work.submitted, work.returned, work.pending) == (10, 10, 0)
    assert work.close() is Result.SUCCESS
    assert pool.stop() is Result.SUCCESS


@pytest.mark.timeout(30)
def test_wait_with_cancel_cancels_the_pending_and_waits_for_the_running() -> None:
    tracer = RecordingTracer()
    callback = Blocking()
    finished = callback.runs
    pool = EventPool(1, tracer=tracer)
    work = ThreadpoolWork(pool, callback, name="w")
    for _ in range(4):
        work.submit()
    callback.entered.wait()
    threading.Timer(0.05, callback.release.set).start()
    waited = work.wait_for_callbacks(cancel_pending=True)
    assert waited.result is Result.SUCCESS and waited.cancelled == 3
    assert finished == [1]  # the running one was waited for
    assert (work.returned, work.cancelled) == (1, 3)
    cancels = [e for e in tracer.events() if e["event"] == "cancel"]
    assert cancels == [
        {"seq": cancels[0]["seq"], "thread": "MainThread", "event": "cancel", "items": [1, 2, 3], "work": "w"}
    ]
    assert pool.stop() is Result.SUCCESS
    assert finished == [1]  # the cancelled ones never ran


@pytest.mark.timeout(30)
def test_a_raising_callback_goes_to_the_error_callback_and_the_pool_keeps_running() -> None:
    errors: list[str] = []
    pool = EventPool(1)
    bad = ThreadpoolWork(pool, lambda c, w: 1 / 0, on_error=lambda w, e: errors.append(type(e).__name__))
    good_runs: list[int] = []
    good = ThreadpoolWork(pool, lambda c, w: good_runs.append(1))
    bad.submit()
    bad.submit()
    good.submit()
    assert bad.wait_for_callbacks().result is Result.SUCCESS
    assert good.wait_for_callbacks().result is Result.SUCCESS
    assert errors == ["ZeroDivisionError", "ZeroDivisionError"] and bad.raised == 2 and good_runs == [1]
    assert pool.stop() is Result.SUCCESS


@pytest.mark.timeout(30)
def test_close_with_pending_callbacks_lets_them_run_and_refuses_later_use() -> None:
    callback = Blocking()
    pool = EventPool(1)
    work = ThreadpoolWork(pool, callback)
    work.submit()
    work.submit()
    callback.entered.wait()
    assert work.close() is Result.SUCCESS
    assert work.submit() is Result.INVALID_STATE
    assert work.wait_for_callbacks().result is Result.INVALID_STATE
    assert work.close() is Result.INVALID_STATE
    callback.release.set()
    assert pool.stop() is Result.SUCCESS
    assert callback.runs == [1, 1]  # closing cancelled nothing


@pytest.mark.timeout(30)
def test_wait_from_a_callback_is_refused_and_discarded_submissions_are_counted() -> None:
    got: list[Result] = []
    pool = EventPool(1)
    work = ThreadpoolWork(pool, lambda c, w: got.append(w.wait_for_callbacks().result))
    work.submit()
    assert work.wait_for_callbacks().result is Result.SUCCESS
    assert got == [Result.INVALID_STATE]
    assert work.wait_for_callbacks(cancel_pending=1).result is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    block = Blocking()
    blocker = ThreadpoolWork(pool, block)
    blocker.submit()
    block.entered.wait()
    work.submit()
    threading.Timer(0.05, block.release.set).start()
    assert pool.stop(StopMode.DISCARD) is Result.SUCCESS
    assert work.discarded == 1 and work.pending == 0
    assert work.submit() is Result.INVALID_STATE
    assert work.wait_for_callbacks().result is Result.SUCCESS  # nothing pending


def test_bad_arguments_name_the_field() -> None:
    pool = EventPool(1)
    with pytest.raises(TypeError, match="pool"):
        ThreadpoolWork(object(), lambda c, w: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callback"):
        ThreadpoolWork(pool, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name"):
        ThreadpoolWork(pool, lambda c, w: None, name=3)  # type: ignore[arg-type]
    assert pool.stop() is Result.SUCCESS
