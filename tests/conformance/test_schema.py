"""The JSON Schema and the hand-written hot-path check agree on every event line."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_checks.conformance.streamed import DesignFormat
from model_checks.designs.akka_mailbox.trace import FORMAT as AKKA_FORMAT
from model_checks.designs.schedule_gate.trace import FORMAT as GATE_FORMAT
from model_checks.designs.work_lane.trace.parse import Config, EventChecker
from model_checks.designs.work_lane.trace.schema import event_validator, header_problem
from tests.conformance.corpus_steps import EVENTS as WORK_LANE_EVENTS

STREAMED_FORMATS: dict[str, DesignFormat] = {"schedule-gate": GATE_FORMAT, "akka-mailbox": AKKA_FORMAT}

CONFIG = Config(lanes=2, workers=2, lane_capacity=2, max_per_drain=2, ready_capacity=2)


def field_values(lowest: int, words: list[str]) -> st.SearchStrategy[object]:
    """Values an event field might hold, right or wrong: the format's words among odd ones."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(lowest, 3),
        st.sampled_from(words),
        st.lists(st.one_of(st.integers(0, 2), st.text(max_size=2), st.booleans()), max_size=2),
    )


VALUES = field_values(
    -2,
    [
        "ok",
        "capacity_exceeded",
        "invalid_state",
        "invalid_argument",
        "drain",
        "discard",
        "idle",
        "resubmit",
        "in_callback",
        "stop_in_progress",
        "a",
        "0",
    ],
)
EVENTS = st.sampled_from([*WORK_LANE_EVENTS, "bogus"])
FIELDS = ["lane", "item", "result", "submit", "outcome", "invoked", "mode", "reason", "items"]


@st.composite
def events(draw: st.DrawFn) -> Any:
    obj: dict[str, Any] = {
        "seq": draw(st.sampled_from([1, 0, "1"])),
        "thread": draw(st.sampled_from(["t", 3])),
    }
    obj["event"] = draw(EVENTS)
    for name in FIELDS:
        if draw(st.booleans()):
            obj[name] = draw(VALUES)
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from([[], "x", 1, None]))
    return obj


@settings(max_examples=3000, deadline=None)
@given(events())
def test_schema_and_hand_check_agree(obj: Any) -> None:
    hand = EventChecker(CONFIG).ok(obj)
    schema = event_validator(CONFIG.lanes).is_valid(obj)
    assert hand == schema, obj


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["post", "submit", "invoke", "drain_end", "discard", "stop_end", "stop_rejected"]),
    st.data(),
)
def test_well_formed_events_pass_both(kind: str, data: st.DataObject) -> None:
    table: dict[str, dict[str, Any]] = {
        "post": {"lane": data.draw(st.sampled_from([0, 1])), "item": "a", "result": "ok", "submit": True},
        "submit": {"lane": 1},
        "invoke": {"lane": 0, "item": data.draw(st.one_of(st.text(), st.integers()))},
        "drain_end": {"lane": 0, "outcome": "idle", "invoked": data.draw(st.integers(0, 9))},
        "discard": {"lane": 1, "items": data.draw(st.lists(st.one_of(st.text(), st.integers())))},
        "stop_end": {"mode": "drain", "result": "ok"},
        "stop_rejected": {"mode": "discard", "reason": "in_callback"},
    }
    fields = table[kind]
    obj = {"seq": 1, "thread": "w", "event": kind, "extra": {"ts": 1.5}, **fields}
    assert EventChecker(CONFIG).ok(obj)
    assert event_validator(CONFIG.lanes).is_valid(obj)


def test_header_schema() -> None:
    good = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG.as_dict()}
    assert header_problem(good) is None
    assert header_problem({**good, "version": 2}) is not None
    assert header_problem({**good, "config": {**CONFIG.as_dict(), "lanes": 0}}) is not None


def test_docs_copy_of_the_schema_is_current() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert (root / "docs/trace-schema.json").read_text() == (
        root / "model_checks/designs/work_lane/trace/trace-schema.json"
    ).read_text()


# ------------------------------------------------------------------ the other designs' formats

DESIGN_VALUES = field_values(
    -1,
    [
        "ok",
        "full",
        "dead_letter",
        "no_action",
        "enqueue_ready_token",
        "release_permit",
        "finalization_deferred",
        "idle",
        "surplus",
        "a",
    ],
)
DESIGN_FIELDS = [
    "actor",
    "mailbox",
    "item",
    "items",
    "granted",
    "permit",
    "result",
    "directive",
    "deferred",
    "processed",
    "reason",
    "status",
]


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(["schedule-gate", "akka-mailbox"]), st.data())
def test_design_schemas_and_hand_checks_agree(design: str, data: st.DataObject) -> None:
    from model_checks.conformance.streamed import event_ok, schema_event_problem

    fmt = STREAMED_FORMATS[design]
    obj: dict[str, Any] = {
        "seq": data.draw(st.sampled_from([1, 0, "1"])),
        "thread": data.draw(st.sampled_from(["t", 3])),
        "event": data.draw(st.sampled_from([*fmt.fields, "bogus"])),
    }
    for name in DESIGN_FIELDS:
        if data.draw(st.booleans()):
            obj[name] = data.draw(DESIGN_VALUES)
    bound = data.draw(st.sampled_from([0, 2]))  # 0: the header gives no bound (akka's mailboxes)
    assert event_ok(fmt, obj, bound) == (schema_event_problem(fmt, obj, bound) is None), obj


def test_a_bad_optional_status_is_malformed_by_both() -> None:
    from model_checks.conformance.streamed import event_ok, schema_event_problem

    fmt = STREAMED_FORMATS["akka-mailbox"]
    obj = {"seq": 1, "thread": "w0", "event": "run_end", "mailbox": 0, "processed": 1, "status": "open"}
    assert not event_ok(fmt, obj, 0) and schema_event_problem(fmt, obj, 0) is not None
    obj["status"] = 1
    assert event_ok(fmt, obj, 0) and schema_event_problem(fmt, obj, 0) is None


def test_design_headers() -> None:
    from model_checks.conformance.streamed import header_problem as design_header_problem

    gate = STREAMED_FORMATS["schedule-gate"]
    config = {"actors": 2, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 1}
    good = {"trace": "lanecheck", "version": 1, "design": "schedule-gate", "config": config}
    assert design_header_problem(gate, good) is None
    assert design_header_problem(gate, {**good, "config": {**config, "actors": 0}}) is not None
    akka = STREAMED_FORMATS["akka-mailbox"]
    good = {
        "trace": "lanecheck",
        "version": 1,
        "design": "akka-mailbox",
        "config": {"workers": 2, "throughput": 1},
    }
    assert design_header_problem(akka, good) is None
    assert design_header_problem(akka, {**good, "config": {"workers": 2}}) is not None
    # A port configured with throughput <= 0 runs max(throughput, 1): its header states the 1.
    for throughput in (0, -5):
        bad = {**good, "config": {"workers": 2, "throughput": throughput}}
        assert "throughput" in (design_header_problem(akka, bad) or "")


DELETE = object()
LANE_INDEX = "(a lane index, 0 to config.lanes - 1)"


@pytest.mark.parametrize(
    "fields,words",
    [
        (
            {"lane": 0, "result": "invalid_argument"},
            'result: "invalid_argument" is not allowed here (invalid_argument is the result of a post '
            "on an invalid handle, whose lane is null)",
        ),
        (
            {"lane": None, "result": "ok", "submit": True},
            'result: "ok" where "invalid_argument" was expected (a post with lane null was made on '
            "an invalid handle: its result is invalid_argument)",
        ),
        ({"item": True}, "item: true (a boolean) is not a string or an integer"),
        ({"submit": None}, "submit: null is not a boolean (true or false)"),
        ({"lane": 7}, "lane: 7 is above the maximum 1 (a lane index, 0 to config.lanes - 1)"),
        ({"item": DELETE}, 'post: missing field "item"'),
        # session 37's review: "lane: True is not valid under any of the given schemas" (jsonschema's)
        ({"lane": True}, f"lane: true (a boolean) is not an integer or null {LANE_INDEX}"),
        ({"lane": "0"}, f'lane: "0" is not an integer or null {LANE_INDEX}'),
        ({"submit": 1}, "submit: 1 is not a boolean (true or false)"),
        (
            {"result": "done"},
            'result: "done" is not one of "ok", "capacity_exceeded", "invalid_state" or "invalid_argument"',
        ),
    ],
)
def test_a_refusal_is_worded_in_json_with_its_reason(fields: dict[str, object], words: str) -> None:
    """A review found Python's ``True``/``None`` and raw keyword dumps in these words."""
    from model_checks.designs.work_lane.trace.schema import event_problem

    post = {
        "seq": 1,
        "thread": "p0",
        "event": "post",
        "lane": 0,
        "item": "a",
        "result": "ok",
        "submit": False,
    }
    post.update(fields)
    obj = {k: v for k, v in post.items() if v is not DELETE}
    assert event_problem(obj, 2) == words
