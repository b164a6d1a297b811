"""A tracer whose every event is a step of its own when the harness interleaves threads.

The harness switches threads only at their synchronising operations; the plain Python between two
of them runs as one step. A tracer's ``emit`` is plain Python, so an event is logged in the same
step as the operation before it, and the harness never stops a thread between making a change
visible and logging it. Real threads can be switched there. Where a scheduler logs a step after
the operation that makes it visible, outside any lock that readers also take, a reader on another
thread can act on the change before the log has it. Its own events then come first, and the trace
contradicts the log order it claims. Only a harness that can stop a thread in that window
finds it.

``logged_as_steps(rt, tracer)`` wraps a tracer so that each event is logged right after a write of
one shared cell (``trace.log``). That write is a scheduling point, dependent on every other
event's write (which event comes first is part of what is explored) and on nothing else. The
write stores the same value each time, so a checker that hashes states sees no new state from it.
The price is one more step per event: a traced scenario's search grows, so wrap only what asks
how the log and the memory it describes line up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_checks.harness.runtime import ControlledRuntime
from reference.tracing import Tracer


class LoggedAsSteps:
    """``tracer``, each ``emit`` preceded by a scheduling point (see the module docstring)."""

    def __init__(self, rt: ControlledRuntime, tracer: Tracer) -> None:
        self._inner = tracer
        self._log = rt.atomic_int(0, name="trace.log")

    def begin(self, config: Mapping[str, int]) -> None:
        self._inner.begin(config)  # before any thread runs: not a step

    def emit(self, thread: str, event: str, fields: dict[str, Any]) -> None:
        self._log.store(0)
        self._inner.emit(thread, event, fields)


def logged_as_steps(rt: ControlledRuntime, tracer: Tracer) -> LoggedAsSteps:
    """``tracer`` with each event a step of its own under ``rt``."""
    return LoggedAsSteps(rt, tracer)


__all__ = ["LoggedAsSteps", "logged_as_steps"]
