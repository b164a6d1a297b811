"""Harness programs of the event pool whose traces are read as trace files: validated, or collected.

``scenarios.pool_program`` records every execution's trace for its own invariants and shows it
as text in a failure report; this wraps it (through its ``build`` seam, which receives the
runtime and the tracer) so that each execution's trace is also

* validated at the end of the execution as a complete trace (``validate=True``): an execution
  whose trace the format refuses fails the search with the verdict;
* reported as trace events (dicts) in a failure, so ``failure_lines`` gives the failing
  trace as JSON Lines for ``lanecheck validate``;
* returned as the execution's outcome (``collect=True``): the set of distinct traces of a
  search, for comparing the reference with the spec (``trace.link``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from model_checks.designs.event_pool.scenarios import Build, PoolScenario, Program, pool_program
from model_checks.designs.event_pool.trace.validate import validate_lines
from model_checks.harness.options import Failure
from model_checks.harness.runtime import ControlledRuntime
from reference.event_pool import EventPool, header
from reference.tracing import RecordingTracer


def trace_lines(tracer: RecordingTracer) -> list[str]:
    """The JSON Lines of an event-pool trace recorded by ``tracer`` (header first)."""
    assert tracer.config is not None, "the tracer was never attached to a pool"
    return [json.dumps(header(tracer.config))] + [json.dumps(e) for e in tracer.events()]


def failure_lines(failure: Failure, threads: int) -> list[str]:
    """The JSON Lines trace of a failing execution of ``traced_program`` (the events it reported)."""
    events = [e for e in failure.trace_events if isinstance(e, dict)]
    return [json.dumps(header({"threads": threads}))] + [json.dumps(e) for e in events]


def event_words(e: dict[str, Any]) -> str:
    """One event as ``thread event k=v ...`` (the fields in the order they were logged)."""
    rest = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("seq", "thread", "event"))
    return f"{e['thread']} {e['event']} {rest}".rstrip()


def traced_program(
    sc: PoolScenario, *, build: Build = EventPool, validate: bool = True, collect: bool = False
) -> Program:
    """``pool_program(sc, build=build)`` whose traces are validated and/or collected (see the module)."""

    def program(rt: ControlledRuntime) -> object:
        tracers: list[RecordingTracer] = []

        def make(threads: int, **options: Any) -> EventPool:
            tracer = options["tracer"]
            tracers.append(tracer)
            rt.trace(lambda: tracer.events())
            return build(threads, **options)

        final = pool_program(sc, build=make)(rt)
        assert callable(final) and len(tracers) == 1

        def judged() -> tuple[str, ...] | None:
            lines = trace_lines(tracers[0])
            if validate:
                verdict = validate_lines(lines)
                assert verdict.code == 0 and not verdict.prefix, f"trace not allowed: {verdict.message}"
            if collect:
                return tuple(event_words(json.loads(line)) for line in lines[1:])
            return None

        checks: list[Callable[[], object]] = [final, judged]
        return checks

    return program
