"""Trace events: header, fields, seq, emission points, JSONL, and tracing off."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from reference import JsonlTracer, LaneHandle, RecordingTracer, Result, Sizing, StopMode, Tracer

from .refsched_helpers import Recorder, assert_valid, make

EVENT_FIELDS = {
    "post": {"lane", "item", "result", "submit"},
    "submit": {"lane"},
    "take": {"lane"},
    "drain_begin": {"lane"},
    "invoke": {"lane", "item"},
    "drain_end": {"lane", "outcome", "invoked"},
    "stop_begin": {"mode"},
    "stop_rejected": {"mode", "reason"},
    "discard": {"lane", "items"},
    "stop_end": {"mode", "result"},
}


def _run_small(tracer: Tracer) -> None:
    scheduler = make(Recorder(), lanes=2, workers=2, lane_capacity=2, max_per_drain=2, tracer=tracer)
    handles = [scheduler.get_lane(i)[1] for i in range(2)]
    for i in range(12):
        scheduler.try_post(handles[i % 2], i)  # some may be capacity_exceeded
    scheduler.try_post(LaneHandle(), "bad")
    scheduler.stop(StopMode.DRAIN)
    scheduler.try_post(handles[0], "late")


@pytest.mark.timeout(10)
def test_header_and_event_shapes() -> None:
    tracer = RecordingTracer()
    _run_small(tracer)
    assert tracer.header() == {
        "trace": "lanecheck",
        "version": 1,
        "design": "work-lane",
        "config": {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2},
    }
    events = tracer.events()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for e in events:
        assert set(e) == {"seq", "thread", "event"} | EVENT_FIELDS[str(e["event"])], e
        assert isinstance(e["thread"], str)
    posts = [e for e in events if e["event"] == "post"]
    assert {"lane": None, "result": "invalid_argument", "item": "bad", "submit": False}.items() <= posts[
        -2
    ].items()
    assert {"lane": 0, "result": "invalid_state", "item": "late", "submit": False}.items() <= posts[
        -1
    ].items()
    workers = {e["thread"] for e in events if e["event"] in ("take", "drain_begin", "invoke", "drain_end")}
    assert workers <= {"w0", "w1"}
    assert_valid(tracer)


@pytest.mark.timeout(10)
def test_submit_follows_its_post_on_the_producer_thread() -> None:
    tracer = RecordingTracer()
    _run_small(tracer)
    events = tracer.events()
    for i, e in enumerate(events):
        if e["event"] == "post" and e["submit"]:
            mine = [later for later in events[i + 1 :] if later["thread"] == e["thread"]]
            assert mine[0]["event"] == "submit" and mine[0]["lane"] == e["lane"]


@pytest.mark.timeout(10)
def test_item_labels_default_and_custom() -> None:
    tracer = RecordingTracer()
    scheduler = make(Recorder(), lanes=1, workers=1, lane_capacity=8, tracer=tracer)
    handle = scheduler.get_lane(0)[1]
    for item in (7, "s", (1, 2), None):
        scheduler.try_post(handle, item)
    scheduler.stop()
    assert [e["item"] for e in tracer.events() if e["event"] == "invoke"] == [7, "s", "(1, 2)", "None"]

    tracer = RecordingTracer()
    scheduler = make(Recorder(), lanes=1, workers=1, tracer=tracer, item_label=lambda item: f"#{item['id']}")
    scheduler.try_post(scheduler.get_lane(0)[1], {"id": 3})
    scheduler.stop()
    assert [e["item"] for e in tracer.events() if e["event"] in ("post", "invoke")] == ["#3", "#3"]


@pytest.mark.timeout(10)
def test_tracing_off_emits_nothing_and_labels_nothing() -> None:
    labelled: list[Any] = []

    def label(item: Any) -> object:
        labelled.append(item)
        return str(item)

    scheduler = make(Recorder(), lanes=2, workers=2, lane_capacity=2, item_label=label)
    handles = [scheduler.get_lane(i)[1] for i in range(2)]
    for i in range(10):
        scheduler.try_post(handles[i % 2], i)
    scheduler.try_post(LaneHandle(), "bad")
    scheduler.stop(StopMode.DISCARD)
    scheduler.try_post(handles[0], "late")
    assert labelled == []


@pytest.mark.timeout(10)
def test_jsonl_writer_header_then_one_event_per_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with JsonlTracer(path) as tracer:
        _run_small(tracer)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == (
        '{"trace":"lanecheck","version":1,"design":"work-lane","config":'
        '{"lanes":2,"workers":2,"lane_capacity":2,"max_per_drain":2,"ready_capacity":2}}'
    )
    events = [json.loads(line) for line in lines[1:]]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(line for line in lines)
    assert list(json.loads(lines[1]))[:3] == ["seq", "thread", "event"]

    recording = RecordingTracer()
    _run_small(recording)
    stream = io.StringIO()
    recording.write_jsonl(stream)
    assert stream.getvalue().splitlines()[0] == lines[0]


@pytest.mark.timeout(10)
def test_jsonl_flush_is_incremental() -> None:
    stream = io.StringIO()
    tracer = JsonlTracer(stream)
    scheduler = make(Recorder(), lanes=1, workers=1, tracer=tracer)
    handle = scheduler.get_lane(0)[1]
    scheduler.try_post(handle, 1)
    tracer.flush()
    first = stream.getvalue().splitlines()
    scheduler.try_post(handle, 2)
    scheduler.stop()
    tracer.close()
    lines = stream.getvalue().splitlines()
    assert lines[: len(first)] == first
    assert [json.loads(line)["seq"] for line in lines[1:]] == list(range(1, len(lines)))


@pytest.mark.timeout(10)
def test_a_tracer_serves_one_scheduler() -> None:
    tracer = JsonlTracer(io.StringIO())
    make(Recorder(), tracer=tracer).stop()
    with pytest.raises(RuntimeError):
        make(Recorder(), tracer=tracer)


@pytest.mark.timeout(20)
def test_traces_of_concurrent_runs_satisfy_the_rules() -> None:
    for mode in (StopMode.DRAIN, StopMode.DISCARD) * 3:
        tracer = RecordingTracer()
        scheduler = make(
            Recorder(),
            lanes=3,
            workers=2,
            lane_capacity=3,
            max_per_drain=2,
            ready_capacity=3,
            tracer=tracer,
            sizing=Sizing.CHECKING,  # odd sizes exercise the trace rules' capacity checks
        )
        handles = [scheduler.get_lane(i)[1] for i in range(3)]

        def produce(p: int, scheduler: Any = scheduler, handles: list[LaneHandle] = handles) -> None:
            for i in range(200):
                scheduler.try_post(handles[(i * 7 + p) % 3], f"p{p}-{i}")

        producers = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(3)]
        for t in producers:
            t.start()
        for t in producers[:2]:
            t.join()
        assert scheduler.stop(mode) is Result.SUCCESS
        producers[2].join()
        assert_valid(tracer)
