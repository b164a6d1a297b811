"""Reading a trace: one line at a time, checking well-formedness (exit code 2) as it goes.

The header is checked with the JSON Schema; event lines are checked by hand
(``check_event``), which is several times faster and agrees with the schema
(tests/conformance/test_schema.py); the schema words the error when a line fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from model_checks.conformance.fast_format import fraction_problem, nameless_problem
from model_checks.conformance.header_config import HeaderConfig
from model_checks.conformance.reader import clip, known_fields, parse_line, required_ok
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.conformance.verdict import Malformed
from model_checks.designs.work_lane.trace.schema import event_problem, header_problem

Event = dict[str, Any]

POST_RESULTS = frozenset({"ok", "capacity_exceeded", "invalid_state", "invalid_argument"})
MODES = frozenset({"drain", "discard"})
OUTCOMES = frozenset({"idle", "resubmit"})
REASONS = frozenset({"in_callback", "stop_in_progress"})
# "failed": the scheduler's own code raised (the reference's failed state); no behaviour of the spec.
STOP_RESULTS = frozenset({"ok", "failed"})


# The header's config: the numbers the reference's ``SchedulerConfig`` writes, but the trace
# format's own record: a header comes from any implementation (a port), is bounded by the
# reader's limits only (the checking configurations use capacity 1, which the ToolKit refuses),
# and does not change when the reference's API does.
@dataclass(frozen=True)
class Config:
    lanes: int
    workers: int
    lane_capacity: int
    max_per_drain: int
    ready_capacity: int

    def as_dict(self) -> dict[str, int]:
        """The header's ``config`` object."""
        return asdict(self)


# The header's sizes: the fast engine holds state per lane and per worker.
HEADER = HeaderConfig(
    index="lane",
    units="lanes",
    indexed=("workers",),
    sizes=("lane_capacity", "max_per_drain", "ready_capacity"),
)
HEADER_LIMITS: Mapping[str, int] = HEADER.limits


def parse_header(obj: Any) -> Config:
    """The header's config from line 1 (already parsed); ``Malformed`` (line 1) when it is not a header."""
    reason = limits_problem(obj, HEADER_LIMITS) or header_problem(obj)
    if reason is not None:
        raise Malformed(1, f"line 1: {reason}")
    return Config(**{k: obj["config"][k] for k in Config.__dataclass_fields__})


Check = Callable[[Any], bool]


def _is_int(v: Any) -> bool:
    return type(v) is int


def _checks(lanes: int) -> dict[str, tuple[tuple[str, Check], ...]]:
    def lane(v: Any) -> bool:
        return type(v) is int and 0 <= v < lanes

    def lane_or_null(v: Any) -> bool:
        return v is None or lane(v)

    def item(v: Any) -> bool:
        t = type(v)
        return t is str or t is int

    def items(v: Any) -> bool:
        return type(v) is list and all(item(x) for x in v)

    return {
        "post": (
            ("lane", lane_or_null),
            ("item", item),
            ("result", lambda v: type(v) is str and v in POST_RESULTS),
            ("submit", lambda v: type(v) is bool),
        ),
        "submit": (("lane", lane),),
        "take": (("lane", lane),),
        "drain_begin": (("lane", lane),),
        "invoke": (("lane", lane), ("item", item)),
        "drain_end": (
            ("lane", lane),
            ("outcome", lambda v: type(v) is str and v in OUTCOMES),
            ("invoked", lambda v: type(v) is int and v >= 0),
        ),
        "stop_begin": (("mode", lambda v: type(v) is str and v in MODES),),
        "stop_rejected": (
            ("mode", lambda v: type(v) is str and v in MODES),
            ("reason", lambda v: type(v) is str and v in REASONS),
        ),
        "discard": (("lane", lane), ("items", items)),
        "stop_end": (
            ("mode", lambda v: type(v) is str and v in MODES),
            ("result", lambda v: type(v) is str and v in STOP_RESULTS),
        ),
    }


class EventChecker:
    """The hand-written well-formedness check of one event line (everything but seq continuity)."""

    def __init__(self, config: Config) -> None:
        self.lanes = config.lanes
        self.fields = _checks(config.lanes)

    def ok(self, obj: Any) -> bool:
        if required_ok(self.fields, obj) is None:
            return False
        if obj["event"] == "post":
            result = obj["result"]
            if (obj["lane"] is None) != (result == "invalid_argument"):
                return False
            if obj["submit"] and result != "ok":
                return False
        return True

    def problem(self, obj: Any) -> str:
        """Words for a line that ``ok`` refused, taken from the schema (and for ``1.0``, an integer
        to the schema and not to a trace, from ``fraction_problem``)."""
        return event_problem(obj, self.lanes) or _fraction(obj) or "not a well-formed event"


# The events of trace format version 2 (work-lane-lockfree) that version 1 does not have.
VERSION_2_EVENTS = frozenset({"push", "cas", "pop", "recheck", "submit_refused", "reset"})
VERSION_2_ONLY = (
    "is an event of trace format version 2 (design work-lane-lockfree, one event per atomic step), "
    "not of a work-lane trace (version 1), whose post and drain_end are each one critical section"
)

_fraction = fraction_problem(("seq", "lane", "invoked"), "item", "items", "an item is a string or an integer")


@dataclass
class Trace:
    """A trace being read: the header's config and an iterator of checked events."""

    config: Config
    events: Iterator[Event]


def read(header: Any, rest: Iterable[str]) -> Trace:
    """Check the header (line 1, parsed) now and the event lines lazily; ``Malformed`` names the line."""
    config = parse_header(header)
    return Trace(config, _events(iter(rest), EventChecker(config)))


def _events(it: Iterator[str], checker: EventChecker) -> Iterator[Event]:
    ok = checker.ok
    expected = 1
    line_no = 1
    for raw in it:
        line_no += 1
        obj = parse_line(raw, line_no)
        if not ok(obj):
            nameless = nameless_problem(obj)
            if nameless is not None:
                raise Malformed(line_no, f"line {line_no}: {nameless}")
            if type(obj) is dict and obj.get("event") is not None and not isinstance(obj.get("event"), str):
                raise Malformed(line_no, f"line {line_no}: `event` must be a string")
            if type(obj) is dict and isinstance(obj.get("event"), str) and obj["event"] not in checker.fields:
                kind = obj["event"]
                if kind in VERSION_2_EVENTS:
                    raise Malformed(line_no, f"line {line_no}: {kind} {VERSION_2_ONLY}")
                raise Malformed(line_no, f"line {line_no}: unknown event {clip(repr(kind), 80)}")
            raise Malformed(line_no, f"line {line_no}: {checker.problem(obj)}")
        if obj["seq"] != expected:
            raise Malformed(
                line_no,
                f"line {line_no}: seq {obj['seq']} where {expected} was expected (a gap or reorder in seq)",
            )
        expected += 1
        yield known_fields(obj, checker.fields[obj["event"]])
