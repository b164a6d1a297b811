"""Harness programs for the Schedule Gate reference: the scenario each reference mutant fails in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from model_checks.harness.options import Options
from model_checks.harness.rt.runtime import ControlledRuntime
from reference.results import Result
from reference.schedule_gate import GateScheduler
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
    tracer: RecordingTracer | None = None,
) -> Program:
    """Producers p<i> post their scripted events, then main stops the scheduler.

    What must hold: at every step, free permits + actors holding one <= pool (a permit
    released twice shows here); at most one handler of an actor runs at a time; at the
    end, every accepted event ran exactly once and every permit is back. A lost wakeup
    shows as stop() waiting forever while a mailbox holds events.
    """

    def program(rt: ControlledRuntime) -> object:
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
            return tuple(sorted((e, r.name) for e, r in results.items()))

        return final

    return program


# The scenario each reference mutant shows its bug in, and the search that finds it fast.
MUTANT_SCENARIOS: dict[str, tuple[dict[str, Any], Options]] = {
    "check-then-act": ({}, Options(time_limit=30)),
    "release-before-decision": ({}, Options(time_limit=30)),
    "idle-ignoring-producers": ({}, Options(time_limit=30)),
    "second-token": ({"mailbox_capacity": 2}, Options(time_limit=30)),
    "last-outcome-only": ({}, Options(strategy="pct", max_executions=3_000)),
}
