"""Well-formedness of one event line, by hand (the hot path); the schema words a refusal.

``CHECKS[event](obj)`` says whether ``obj`` (a dict whose ``event`` is that name) has that
event's fields; ``problem(obj)`` says why a line is not well-formed, naming the field. A
missing field raises ``KeyError`` in a check (the caller counts it as not well-formed).
tests/event_pool/test_trace_fields.py keeps this in agreement with ``trace-schema.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_checks.conformance.fast_format import event_ok, fraction_problem, line_problem
from model_checks.designs.event_pool.trace.schema import event_problem

Check = Callable[[dict[str, Any]], bool]

POST_RESULTS = frozenset({"ok", "invalid_state", "invalid_argument"})
WAKE_RESULTS = frozenset({"event", "stop", "timeout"})
MODES = frozenset({"drain", "discard"})
STOP_RESULTS = frozenset({"ok", "failed"})


def is_item(v: Any) -> bool:
    return type(v) is int and v >= 0


def is_items(v: Any) -> bool:
    return type(v) is list and all(type(x) is int and x >= 0 for x in v)


def _word(v: Any, words: frozenset[str]) -> bool:
    return type(v) is str and v in words


def _post(o: dict[str, Any]) -> bool:
    result, item, to = o["result"], o["item"], o["to"]
    if result == "ok":
        return is_item(item) and (to is None or type(to) is str)
    return _word(result, POST_RESULTS) and item is None and to is None


def _signal(o: dict[str, Any]) -> bool:
    return type(o["to"]) is str


def _nothing(o: dict[str, Any]) -> bool:
    return True


def _wake(o: dict[str, Any]) -> bool:
    return _word(o["result"], WAKE_RESULTS)


def _take(o: dict[str, Any]) -> bool:
    item = o["item"]
    return item is None or is_item(item)


def _run(o: dict[str, Any]) -> bool:
    return is_item(o["item"])


def _done(o: dict[str, Any]) -> bool:
    return is_item(o["item"]) and type(o["raised"]) is bool


def _cancel(o: dict[str, Any]) -> bool:
    return is_items(o["items"]) and type(o["work"]) is str


def _stop_begin(o: dict[str, Any]) -> bool:
    return _word(o["mode"], MODES)


def _discard(o: dict[str, Any]) -> bool:
    return is_items(o["items"])


def _stop_end(o: dict[str, Any]) -> bool:
    return _word(o["mode"], MODES) and _word(o["result"], STOP_RESULTS)


CHECKS: dict[str, Check] = {
    "post": _post,
    "signal": _signal,
    "wait": _nothing,
    "wake": _wake,
    "take": _take,
    "run": _run,
    "done": _done,
    "cancel": _cancel,
    "stop_begin": _stop_begin,
    "discard": _discard,
    "stop_end": _stop_end,
}


def ok(obj: Any) -> bool:
    """``obj`` is a well-formed event (its seq aside from continuity)."""
    return event_ok(CHECKS, obj)


def problem(obj: Any) -> str:
    """Why ``ok`` refused ``obj``, naming the field."""
    return line_problem("event-pool", CHECKS, obj, event_problem, _integer_problem)


# ``seq`` and the works' indices are integers; JSON Schema would take 2.0 for one.
_integer_problem = fraction_problem(("seq",), "item", "items", "a work's index is an integer")
