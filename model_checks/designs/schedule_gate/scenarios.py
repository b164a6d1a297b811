"""Harness programs for the Schedule Gate reference: the scenario each reference mutant fails in."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from model_checks.conformance.judged_once import JudgedOnce
from model_checks.conformance.validator import validate_lines
from model_checks.conformance.verdict import Verdict
from model_checks.designs.schedule_gate import declared  # noqa: F401  (the design's GIL-atomic field)
from model_checks.harness.options import Failure, Options
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result
from reference.schedule_gate import GateScheduler, header
from reference.tracing import RecordingTracer

Build = Callable[..., GateScheduler[Any]]
Program = Callable[[ControlledRuntime], object]


def gate_program(
    build: Build = GateScheduler,
    *,
    actors: int = 1,
    permits: int = 1,
    workers: int = 1,
    mailbox_capacity: int = 1,
    max_per_drain: int = 2,
    script: Sequence[Sequence[int]] = ((0,), (0,)),
    yield_in_handler: bool = False,
    traced: bool = False,
    validate: bool = False,
) -> Program:
    """Producers p<i> post their scripted events, then main stops the scheduler.

    What must hold: at every step, free permits + actors holding one <= pool (a permit
    released twice shows here); at most one handler of an actor runs at a time; at the
    end, every accepted event ran exactly once and every permit is back. A lost wakeup
    shows as stop() waiting forever while a mailbox holds events.

    ``traced``: each execution records its trace (a fresh tracer; a failure carries the
    events). ``validate`` (implies ``traced``): at the end of each execution its trace must
    be a complete behaviour of the spec (``lanecheck validate``), so a search checks the
    trace of every execution it explores; each distinct trace is judged once a search (most
    executions differ only in steps that log nothing, ``conformance.judged_once``).
    """
    judge = JudgedOnce(validate_lines, _allowed_whole) if validate else None

    def program(rt: ControlledRuntime) -> object:
        tracer = RecordingTracer() if traced or validate else None
        ran: list[list[str]] = [[] for _ in range(actors)]
        running = [0] * actors

        def handler(actor: int) -> Callable[[str], None]:
            def handle(event: str) -> None:
                running[actor] += 1
                assert running[actor] == 1, f"two handlers of actor {actor} run at once"
                if yield_in_handler:
                    rt.yield_point("inside the handler")
                ran[actor].append(event)
                running[actor] -= 1

            return handle

        sched = build(
            [handler(a) for a in range(actors)],
            permits=permits,
            workers=workers,
            mailbox_capacity=mailbox_capacity,
            max_per_drain=max_per_drain,
            runtime=rt,
            tracer=tracer,
        )
        results: dict[str, Result] = {}

        def permits_conserved() -> bool:
            held = sum(1 for a in range(actors) if sched.gate(a).phase != "Idle")
            return sched.free_permits() + held <= permits

        rt.invariant(permits_conserved, "PermitsConserved")
        rt.pending_work(lambda: any(sched.queued(a) for a in range(actors)))
        if tracer is not None:
            rt.trace(lambda: list(tracer.events()))

        def producer(i: int) -> Callable[[], None]:
            def body() -> None:
                for k, actor in enumerate(script[i]):
                    event = f"p{i}.{k}"
                    results[event] = sched.post(actor, event)

            return body

        threads = [rt.start_thread(producer(i), f"p{i}") for i in range(len(script))]
        for t in threads:
            t.join()
        assert sched.stop() is Result.SUCCESS

        def final() -> tuple[tuple[str, str], ...]:
            accepted = sorted(e for e, r in results.items() if r is Result.SUCCESS)
            done = sorted(e for box in ran for e in box)
            assert done == accepted, f"accepted {accepted} but ran {done}"
            assert sched.free_permits() == permits, f"{sched.free_permits()} permits free of {permits}"
            if judge is not None:
                assert tracer is not None
                verdict = judge(trace_lines(tracer))
                assert _allowed_whole(verdict), f"trace not allowed: {verdict.message}"
            return tuple(sorted((e, r.name) for e, r in results.items()))

        return final

    return program


def _allowed_whole(verdict: Verdict) -> bool:
    """The verdict a finished run's trace must get: allowed as a complete behaviour."""
    return verdict.code == 0 and not verdict.prefix


def trace_lines(tracer: RecordingTracer) -> list[str]:
    """The JSON Lines of a schedule-gate trace recorded by ``tracer``."""
    assert tracer.config is not None
    return [json.dumps(header(tracer.config))] + [json.dumps(e) for e in tracer.events()]


def failure_lines(failure: Failure, **scenario: Any) -> list[str]:
    """The JSON Lines trace of a failing execution of ``gate_program(..., traced=True, **scenario)``."""
    config = {
        "actors": scenario.get("actors", 1),
        "workers": scenario.get("workers", 1),
        "permits": scenario.get("permits", 1),
        "mailbox_capacity": scenario.get("mailbox_capacity", 1),
        "max_per_drain": scenario.get("max_per_drain", 2),
    }
    events = [e for e in failure.trace_events if isinstance(e, dict)]
    return [json.dumps(header(config))] + [json.dumps(e) for e in events]


# The scenario each reference mutant shows its bug in, and the search that finds it fast.
MUTANT_SCENARIOS: dict[str, tuple[dict[str, Any], Options]] = {
    "check-then-act": ({}, Options(time_limit=30)),
    "release-before-decision": ({}, Options(time_limit=30)),
    "idle-ignoring-producers": ({}, Options(time_limit=30)),
    "second-token": ({"mailbox_capacity": 2}, Options(time_limit=30)),
    "last-outcome-only": ({}, Options(strategy="pct", max_executions=3_000)),
}
