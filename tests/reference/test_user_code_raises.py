"""User code the scheduler calls besides ``invoke`` (item labels, tracers, ``on_discard``) may raise.

None of it may strand a lane, lose an accepted item or wedge Stop: a label or tracer that raises
while a post or an invoke is logged is logged itself and changes nothing the scheduler does (the
trace lacks that event); a raising ``on_discard`` is logged and Stop goes on.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference import RecordingTracer, Result, StopMode

from .refsched_helpers import Recorder, make


class _FailingTracer(RecordingTracer):
    """Raises whenever it is given ``event`` for ``bad_item``."""

    def __init__(self, event: str, bad_item: object) -> None:
        super().__init__()
        self.event = event
        self.bad_item = bad_item

    def emit(self, thread: str, event: str, fields: Any) -> None:
        if event == self.event and fields.get("item") == self.bad_item:
            raise OSError(f"trace sink failed on {event}")
        super().emit(thread, event, fields)


def _label(item: object) -> object:
    if item == "bad":
        raise ValueError("no label for this item")
    return item


def _logged(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records)


@pytest.mark.timeout(10)
def test_a_raising_label_is_logged_and_the_item_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder()
    tracer = RecordingTracer()
    scheduler = make(recorder, lanes=1, workers=1, tracer=tracer, item_label=_label)
    handle = scheduler.get_lane(0)[1]
    assert scheduler.try_post(handle, "bad") is Result.SUCCESS  # accepted: the decision stands
    assert scheduler.try_post(handle, "good") is Result.SUCCESS
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS  # no submission left owed
    assert recorder.items(0) == ["bad", "good"]
    assert _logged(caplog, "tracing a post on lane 0 failed") == 1
    assert _logged(caplog, "tracing an invoke on lane 0 failed") == 1
    assert [e["item"] for e in tracer.events() if e["event"] == "invoke"] == ["good"]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("event", ["post", "invoke"])
def test_a_raising_tracer_changes_nothing_the_scheduler_does(
    event: str, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder()
    errors: list[Any] = []
    scheduler = make(
        recorder,
        lanes=1,
        workers=1,
        tracer=_FailingTracer(event, "b"),
        on_error=lambda lane, item, exc: errors.append(item),
    )
    handle = scheduler.get_lane(0)[1]
    for item in ("a", "b", "c"):
        assert scheduler.try_post(handle, item) is Result.SUCCESS
    assert scheduler.stop(StopMode.DRAIN) is Result.SUCCESS
    assert recorder.items(0) == ["a", "b", "c"]
    assert errors == []  # on_error is for invoke's exceptions
    assert _logged(caplog, f"tracing a{'n' if event == 'invoke' else ''} {event} on lane 0 failed") == 1


@pytest.mark.timeout(10)
def test_a_raising_on_discard_is_logged_and_stop_reports_every_item(caplog: pytest.LogCaptureFixture) -> None:
    entered, release = threading.Event(), threading.Event()

    def invoke(context: Any, item: Any) -> None:
        entered.set()
        release.wait(5)

    offered: list[Any] = []

    def on_discard(lane: int, item: Any) -> None:
        offered.append(item)
        raise RuntimeError(f"hook failed on {item}")

    scheduler = make(invoke, lanes=1, workers=1, max_per_drain=1, on_discard=on_discard)
    handle = scheduler.get_lane(0)[1]
    for item in range(4):
        assert scheduler.try_post(handle, item) is Result.SUCCESS
    assert entered.wait(5)  # the worker is inside item 0; items 1..3 are queued
    result: list[Result] = []
    stopper = threading.Thread(target=lambda: result.append(scheduler.stop(StopMode.DISCARD)))
    stopper.start()
    release.set()
    stopper.join(5)
    assert result == [Result.SUCCESS]
    assert scheduler.stopped
    assert offered == [1, 2, 3]  # every dropped item reached the hook, though it raised each time
    assert sum("on_discard raised" in r.getMessage() for r in caplog.records) == 3
