"""Harness programs for the job store: the in-memory store on the runtime seam, workers racing.

``jobs_program`` runs ``InMemoryStore`` (or a reference mutant of it) under the controlled
runtime: its one lock is the runtime's, so each store step is one critical section and the harness
explores every order of the workers' steps. After every step the program checks, on the store's
own rows, the spec's state invariants (``GroupWithinLimit``, ``QueueWithinBudget``,
``GroupWithinBudget``, ``NoJobLost``) and validates the trace so far with the admission trace format
(a prefix); at the end, the whole trace closed by the store's counts must be a complete run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission import declared  # noqa: F401  (the tracer's GIL-atomic field)
from model_checks.designs.admission.trace import trace_lines
from model_checks.harness.options import Failure, Options
from model_checks.harness.runtime import ControlledRuntime
from reference.jobs.admission import Conditions
from reference.jobs.budgets import Budgets
from reference.jobs.core import StoreCore
from reference.jobs.inmemory import InMemoryStore
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.store import StaleLease
from reference.jobs.tracing import Event, RecordingTracer

Program = Callable[[ControlledRuntime], object]
LEASE = 60.0
START = 1000


@dataclass(frozen=True)
class Setup:
    """A scenario's store: the budgets, the jobs enqueued before the workers start, the workers."""

    jobs: tuple[JobSpec, ...]
    budgets: Budgets = field(default_factory=Budgets)
    workers: int = 2
    rounds: int = 2  # claims each worker makes (a claim that admits is followed by its finish)
    stall: bool = False  # a thread moves the clock past every lease once (leases expire)


def _job(cost: int, group: str | None = None, limit: int | None = None, attempts: int = 3) -> JobSpec:
    return JobSpec(
        "q",
        handler="h",
        concurrency_group=group,
        concurrency_limit=limit,
        cost_units=cost,
        max_attempts=attempts,
    )


SETUPS: dict[str, Setup] = {
    # The livelock configuration of the spec: two jobs of cost 2, a queue budget of 3.
    "contended-budget": Setup((_job(2), _job(2)), Budgets({"q": 3}), rounds=3),
    # A group limit of 1 and a group budget that only one of the two costs fits beside the other.
    "group-limit": Setup((_job(1, "g", 1), _job(2, "g", 1), _job(1)), Budgets({"q": 4}, {"g": 2})),
    # Three workers on a queue budget of 2 and three jobs of cost 1.
    "three-workers": Setup((_job(1), _job(1), _job(1)), Budgets({"q": 2}), workers=3, rounds=1),
    # One job, one attempt left after the first lease expires: the stale finish is fenced off.
    "lease-expiry": Setup((_job(1, attempts=2),), Budgets({"q": 1}), workers=2, rounds=1, stall=True),
    # One worker, no contention: every job must run within its claims (no job deferred for ever).
    "uncontended": Setup((_job(1), _job(1)), Budgets({"q": 2}), workers=1, rounds=2),
}


def _violations(jobs: Sequence[Job], budgets: Budgets) -> str | None:
    """The spec's state invariants on the store's rows: the first one broken, in words."""
    running = [j for j in jobs if j.state is JobState.PROCESSING]
    for queue, budget in budgets.queues.items():
        cost = sum(j.cost_units for j in running if j.queue == queue)
        if cost > budget:
            return f"QueueWithinBudget: queue {queue!r} runs cost {cost} > budget {budget}"
    groups = {j.concurrency_group for j in running if j.concurrency_group is not None}
    for group in sorted(groups):
        members = [j for j in running if j.concurrency_group == group]
        limits: list[int] = [j.concurrency_limit for j in members if j.concurrency_limit is not None]
        if limits and len(members) > min(limits):
            return f"GroupWithinLimit: group {group!r} runs {len(members)} > limit {min(limits)}"
        group_budget = budgets.groups.get(group)
        cost = sum(j.cost_units for j in members)
        if group_budget is not None and cost > group_budget:
            return f"GroupWithinBudget: group {group!r} runs cost {cost} > budget {group_budget}"
    for j in jobs:
        if j.state is JobState.PROCESSING and j.lease_token is None:
            return f"NoJobLost: job {j.id} is processing with no lease (nobody runs it, nothing expires it)"
        if j.state in (JobState.FAILED, JobState.DISCARDED) and not j.reason:
            return f"NoJobLost: job {j.id} is {j.state.value} without a reason"
    return None


def committed(events: Sequence[Event]) -> list[Event]:
    """The trace so far: the events handed to the tracer, in ``seq`` order, up to the first seq
    not there yet. A batch is handed over after its transaction commits, outside the store's
    lock, so a later transaction's batch may arrive first; the missing one is still on its way,
    as a merge of per-process files reads it (``reference/jobs/tracing.py``)."""
    ordered = sorted(events, key=lambda e: int(e["seq"]))
    for i, event in enumerate(ordered):
        if event["seq"] != i + 1:
            return ordered[:i]
    return ordered


def jobs_program(
    store_class: Callable[..., StoreCore] = InMemoryStore, setup: Setup | None = None
) -> Program:
    """Workers ``w<i>`` each make ``rounds`` claims on one store (finishing what they are admitted to).

    ``store_class`` is ``InMemoryStore`` or a reference mutant built on it. Checked after every step:
    the state invariants on the store's rows and the trace so far (``lanecheck validate``, a prefix);
    at the end, the trace closed by the store's counts is a complete run, and in ``uncontended``
    every job ran."""
    chosen = setup or SETUPS["contended-budget"]
    # The validator's first use imports the trace formats (the registry's designs); made inside
    # an execution, that import is a change of process-wide state (``sys.modules``), and every
    # step that makes one is ordered both ways against every other thread's steps.
    validate_lines(trace_lines([]))

    def program(rt: ControlledRuntime) -> object:
        tracer = RecordingTracer()
        now = rt.atomic_int(START, "clock")
        store = store_class(runtime=rt, tracer=tracer, process="main", clock=lambda: float(now.load()))
        assert isinstance(store, InMemoryStore)
        store.set_budgets(chosen.budgets)
        for spec in chosen.jobs:
            store.enqueue(spec)
        conditions = Conditions(lease=LEASE, retry_after=0.0)
        rows: dict[int, Job] = store._jobs

        def state_ok() -> object:
            problem = _violations(list(rows.values()), chosen.budgets)
            assert problem is None, problem
            return True

        def trace_ok() -> object:
            verdict = validate_lines(trace_lines(committed(tracer.events)))
            assert verdict.code == 0, f"trace rejected: {verdict.message}"
            return True

        rt.invariant(state_ok, "StateInvariants")
        rt.invariant(trace_ok, "TraceValid")
        rt.trace(lambda: list[object](committed(tracer.events)))

        def worker(name: str) -> Callable[[], None]:
            def body() -> None:
                for _ in range(chosen.rounds):
                    claim = store.claim(name, conditions).claim
                    if claim is None:
                        continue
                    # A lease that expired meanwhile (the job moved on): the finish changes nothing.
                    with contextlib.suppress(StaleLease):
                        store.finish(claim.job.id, claim.token, None, 0.0, 0)

            return body

        threads = [rt.start_thread(worker(f"w{i}"), f"w{i}") for i in range(chosen.workers)]

        def stall() -> None:
            now.store(START + int(LEASE) + 1)  # every lease taken so far has lapsed

        if chosen.stall:
            threads.append(rt.start_thread(stall, "stall"))
        for t in threads:
            t.join()

        def final() -> tuple[tuple[int, str, int], ...]:
            counts = {s.value: 0 for s in JobState}
            for j in rows.values():
                counts[j.state.value] += 1
            verdict = validate_lines(trace_lines(committed(tracer.events), end=counts), complete=True)
            assert verdict.code == 0 and not verdict.prefix, f"trace rejected: {verdict.message}"
            if chosen.workers == 1:
                stuck = [j.id for j in rows.values() if j.state is not JobState.DONE]
                assert not stuck, f"jobs {stuck} never ran though one worker had room for each"
            return tuple(sorted((j.id, j.state.value, j.attempts) for j in rows.values()))

        return final

    return program


def failure_lines(failure: Failure) -> list[str]:
    """The JSON Lines trace of a failing execution (its events, without an end: a prefix)."""
    events = [e for e in failure.trace_events if isinstance(e, dict)]
    return trace_lines(events)


# The setup each reference mutant shows its bug in, and the search that finds it.
MUTANT_SCENARIOS: dict[str, tuple[str, Options]] = {
    "check-then-claim": ("contended-budget", Options(time_limit=60)),
    "denial-spends-attempt": ("contended-budget", Options(time_limit=60)),
    "denial-drops-job": ("contended-budget", Options(time_limit=60)),
    "budget-counts-queued": ("uncontended", Options(time_limit=60)),
}

# Options of the clean scenarios: exhaustive DPOR unless a time limit cuts it. The race detector
# runs where it costs little (two workers racing a lease: 26 executions; it found the store's
# shared event buffer emptied outside the transaction, session 48); with it the contended setups
# take 10-15 times the executions (contended-budget 329 and 34 s, group-limit 502 and 68 s,
# three-workers over 120 s, at load 5), so their rows are proofs at synchronisation points only.
RACES = {"lease-expiry": True, "uncontended": True}
CLEAN_OPTIONS: dict[str, Options] = {
    name: Options(time_limit=120, races=RACES.get(name, False)) for name in SETUPS
}


def dumps(events: Sequence[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(e) for e in events)
