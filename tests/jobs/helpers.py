"""Shared pieces of the job-queue tests: a settable clock, both stores, the multi-process stress run.

Traces are judged by the admission design's trace format through ``lanecheck validate``'s own entry
point (``validate_events``, ``run_stress``); ``check_trace`` is a quick replay for hand-made
fragments of a trace (no enqueues, no threads) that the full format would refuse as malformed.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_checks.conformance.validator import validate_lines
from model_checks.conformance.verdict import Verdict
from model_checks.designs.admission.trace import merged_lines, trace_lines
from reference.jobs import Budgets, Conditions, JobSpec, Worker, WorkerOptions, load_handlers
from reference.jobs.core import StoreCore
from reference.jobs.inmemory import InMemoryStore
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.tracing import Event, JsonlTraceFile, RecordingTracer


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_store(kind: str, tmp_path: Path, clock: Clock, tracer: RecordingTracer | None = None) -> StoreCore:
    if kind == "sqlite":
        return SqliteStore(tmp_path / "jobs.db", clock=clock, tracer=tracer, process="t")
    return InMemoryStore(clock=clock, tracer=tracer, process="t")


def check_trace(events: Sequence[Event]) -> list[str]:
    """Replay a merged trace: the admission invariants in every state it passes through.

    No job admitted while processing (a double claim), no group over its concurrency limit, no
    queue or group over its budget, and every admitted job leaves ``processing`` only by finish,
    fail, retry or lease expiry. Returns the violations found (empty: the trace is fine)."""
    problems: list[str] = []
    budgets: dict[str, dict[str, int]] = {"queues": {}, "groups": {}}
    running: dict[int, dict[str, Any]] = {}
    for event in events:
        kind, seq = event["event"], event["seq"]
        if kind == "budgets":
            budgets = {"queues": event["queues"], "groups": event["groups"]}
        elif kind == "admit":
            job = event["job"]
            if job in running:
                problems.append(f"seq {seq}: job {job} admitted while processing (double claim)")
            spec = running[job] = event  # an admit carries the job's queue, group, limit and cost
            queue_cost = sum(j["cost"] for j in running.values() if j["queue"] == spec["queue"])
            if queue_cost > budgets["queues"].get(spec["queue"], queue_cost):
                problems.append(f"seq {seq}: queue {spec['queue']} at {queue_cost}, over budget")
            group = spec["group"]
            if group is not None:
                members = [j for j in running.values() if j["group"] == group]
                if spec["limit"] is not None and len(members) > spec["limit"]:
                    problems.append(f"seq {seq}: group {group} runs {len(members)} > limit {spec['limit']}")
                cost = sum(j["cost"] for j in members)
                if cost > budgets["groups"].get(group, cost):
                    problems.append(f"seq {seq}: group {group} at {cost}, over budget")
        elif kind in ("finish", "retry", "lease_expire") and running.pop(event["job"], None) is None:
            problems.append(f"seq {seq}: {kind} of job {event['job']}, which was not processing")
        elif kind == "fail":
            running.pop(event["job"], None)  # a final failure; a pending job refused at claim was not running
    return problems


def small_traced_run(store: StoreCore, claim: Conditions) -> None:
    """A queue and a group with budgets, six jobs of mixed cost, three workers claiming once each
    and finishing what they got: a trace with enqueues, admissions, denials and finishes."""
    store.set_budgets(Budgets({"q": 3}, {"g": 2}))
    for n in range(6):
        store.enqueue(
            JobSpec("q", {"n": n}, concurrency_group="g", concurrency_limit=1, cost_units=1 + n % 2)
        )
    claims = [store.claim(f"w{i}", claim).claim for i in range(3)]
    for got in claims:
        if got is not None:
            store.finish(got.job.id, got.token, None, 0.0, 0)


def assert_clean_stress(run: Stress, jobs: int = 0) -> None:
    """What every multi-process stress run must show: every worker exited 0; every job ran once and
    is done; the processes really raced and the budgets bit; the merged trace validates whole."""
    jobs = jobs or STRESS_JOBS
    assert run.exit_codes == [0] * len(run.exit_codes)
    assert sorted(run.ran) == list(range(jobs))  # every job ran, and only once
    assert run.counts["done"] == jobs
    assert len({e["process"] for e in run.events if e["event"] == "admit"}) > 1  # they really raced
    assert any(e["event"] == "deny" for e in run.events)  # the budgets were tight enough to bite
    assert run.verdict.code == 0 and not run.verdict.prefix, run.verdict.message
    assert run.verdict.design == "admission"


def validate_events(
    events: Sequence[Event], *, end: Mapping[str, int] | None = None, complete: bool = False
) -> Verdict:
    """One store's events (seq order, from its first step) judged by `lanecheck validate`."""
    return validate_lines(trace_lines(events, end=end), complete=complete)


# ---------------------------------------------------------------------- the multi-process stress run

STRESS_JOBS = 120
STRESS_PROCESSES = 4


@dataclass
class Stress:
    verdict: Verdict
    ran: list[int]  # the job numbers the handlers ran, in order, once per execution
    counts: dict[str, int]  # the store's final jobs per state
    events: list[Event]
    exit_codes: list[int | None]


def _work(
    db: str, traces: str, index: int, store_class: type[SqliteStore], time_budget: float | None
) -> None:
    name = f"w{index}"
    with JsonlTraceFile(Path(traces) / f"trace-{name}.jsonl", name, {}) as tracer:
        store = store_class(db, tracer=tracer, process=name)
        options = WorkerOptions(
            name=name, until_done=True, poll=0.005, retry_after=0.005, lease=60.0, time_budget=time_budget
        )
        Worker(store, load_handlers("tests.jobs.handlers"), options).run()
        store.close()


def run_stress(
    tmp_path: Path,
    store_class: type[SqliteStore] = SqliteStore,
    *,
    jobs: int = STRESS_JOBS,
    processes: int = STRESS_PROCESSES,
    time_budget: float | None = None,
) -> Stress:
    """``processes`` workers (real processes, one ``store_class`` each) on one SQLite file, tight budgets.

    Queue ``q`` has budget 4, groups ``g`` 3 and ``h`` 2, each with a concurrency limit of 2; costs
    alternate 1 and 2. Every process traces its own file; the merged trace, closed by the store's
    final counts, is judged as a complete run by the real validator. ``time_budget`` bounds each
    worker (a buggy store may never let the run drain)."""
    db = str(tmp_path / "jobs.db")
    log = tmp_path / "ran.log"
    traces = tmp_path / "traces"
    traces.mkdir()
    setup_trace = JsonlTraceFile(traces / "trace-setup.jsonl", "setup", {})
    setup = store_class(db, tracer=setup_trace, process="setup")
    setup.set_budgets(Budgets({"q": 4}, {"g": 3, "h": 2}))
    for n in range(jobs):
        setup.enqueue(
            JobSpec(
                "q",
                {"n": n, "log": str(log), "sleep": 0.002},
                handler="work",
                concurrency_group="g" if n % 3 else "h",
                concurrency_limit=2,
                cost_units=1 + n % 2,
            )
        )
    setup.close()
    setup_trace.close()
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_work, args=(db, str(traces), i, store_class, time_budget))
        for i in range(processes)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(50)
    for process in workers:
        if process.is_alive():  # never left running: the test reports its exit code as None
            process.kill()
            process.join()
    ran = [int(line) for line in log.read_text().split()] if log.exists() else []
    store = SqliteStore(db)
    counts = dict(store.status(0).counts)
    store.close()
    lines = merged_lines(traces.glob("*.jsonl"), end=counts)
    events = [e for e in (json.loads(line) for line in lines[1:]) if e["event"] != "end"]
    verdict = validate_lines(lines, complete=True)
    return Stress(verdict, ran, counts, events, [p.exitcode for p in workers])
