"""Well-formedness of one event line, by hand (the hot path); the schema words a refusal.

``EventFields(workers).checks[event](obj)`` says whether ``obj`` (a dict whose ``event``
is that name) has that event's fields; ``ok(obj)`` checks everything but seq continuity;
``problem(obj)`` says why a line is not well-formed, naming the field. A missing field
raises ``KeyError`` in a check (the caller counts it as not well-formed).
tests/work_stealing/test_trace_fields.py keeps this in agreement with ``trace-schema.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_checks.conformance.fast_format import event_ok, fraction_problem, line_problem
from model_checks.designs.work_stealing.trace.schema import event_problem

Check = Callable[[dict[str, Any]], bool]

SUBMIT_RESULTS = frozenset({"ok", "invalid_state", "invalid_argument"})
TAKE_RESULTS = frozenset({"ok", "empty", "lost"})
STEAL_RESULTS = frozenset({"ok", "empty", "abort"})
OUTCOMES = frozenset({"ok", "raised"})
MODES = frozenset({"drain", "discard"})
STOP_RESULTS = frozenset({"ok", "failed"})


def is_task(v: Any) -> bool:
    t = type(v)
    return t is str or t is int


def _word(v: Any, words: frozenset[str]) -> bool:
    return type(v) is str and v in words


def checks(workers: int) -> dict[str, Check]:
    """Per event: the check of its fields (``worker`` and ``victim`` bounded by ``workers``).

    One function per event, each reading its fields once: this is the validator's hot path."""

    def worker(v: Any) -> bool:
        return type(v) is int and 0 <= v < workers

    def submit(o: dict[str, Any]) -> bool:
        # A submit refused for its arguments may have no id to log (its name is not a str/int): null,
        # as the reference logs it (the third outside review, T8).
        result, task = o["result"], o["task"]
        return _word(result, SUBMIT_RESULTS) and (
            is_task(task) or (task is None and result == "invalid_argument")
        )

    def push(o: dict[str, Any]) -> bool:
        size = o["size"]
        return worker(o["worker"]) and is_task(o["task"]) and type(size) is int and size >= 1

    def resize(o: dict[str, Any]) -> bool:
        capacity = o["capacity"]
        return worker(o["worker"]) and type(capacity) is int and capacity >= 1

    def take(o: dict[str, Any]) -> bool:
        result, task = o["result"], o["task"]
        return (
            worker(o["worker"])
            and _word(result, TAKE_RESULTS)
            and (is_task(task) if result == "ok" else task is None)
        )

    def steal(o: dict[str, Any]) -> bool:
        result, task, victim = o["result"], o["task"], o["victim"]
        return (
            worker(o["worker"])
            and (victim == "injector" if type(victim) is str else worker(victim))
            and _word(result, STEAL_RESULTS)
            and (is_task(task) if result == "ok" else task is None)
        )

    def parking(o: dict[str, Any]) -> bool:
        return worker(o["worker"])

    def run(o: dict[str, Any]) -> bool:
        return worker(o["worker"]) and is_task(o["task"])

    def done(o: dict[str, Any]) -> bool:
        return worker(o["worker"]) and is_task(o["task"]) and _word(o["outcome"], OUTCOMES)

    def join(o: dict[str, Any]) -> bool:
        return is_task(o["task"])

    def stop_begin(o: dict[str, Any]) -> bool:
        return _word(o["mode"], MODES)

    def discard(o: dict[str, Any]) -> bool:
        tasks = o["tasks"]
        return type(tasks) is list and all(is_task(x) for x in tasks)

    def stop_end(o: dict[str, Any]) -> bool:
        return _word(o["mode"], MODES) and _word(o["result"], STOP_RESULTS)

    return {
        "submit": submit,
        "push": push,
        "resize": resize,
        "take": take,
        "steal": steal,
        "park": parking,
        "unpark": parking,
        "run": run,
        "done": done,
        "join": join,
        "stop_begin": stop_begin,
        "discard": discard,
        "stop_end": stop_end,
    }


class EventFields:
    """The hand-written check of event lines against the header's worker count."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.checks = checks(workers)

    def ok(self, obj: Any) -> bool:
        """``obj`` is a well-formed event (its seq aside from continuity)."""
        return event_ok(self.checks, obj)

    def problem(self, obj: Any) -> str:
        """Why ``ok`` refused ``obj``, naming the field."""
        return line_problem("work-stealing", self.checks, obj, self._schema_words, _integer_problem)

    def _schema_words(self, obj: Any) -> str | None:
        return event_problem(obj, self.workers)


INTEGERS = ("seq", "worker", "victim", "size", "capacity")
# JSON Schema would take 2.0 for an integer.
_integer_problem = fraction_problem(INTEGERS, "task", "tasks", "a task id is a string or an integer")
