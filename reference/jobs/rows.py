"""What the stores' rows hold, written once: the parts of a job a claim reads, the changes that
lease one, the parameters of a job or run insert, a run decoded from its row, budgets to and from
their rows, and a status from the rows it counts.

The SQL backends differ in their placeholders and drivers, not in which values go in which
column: keeping the mapping here is what lets ``SqliteStore`` and ``PgStore`` agree on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

from reference.jobs import workflow as wf
from reference.jobs.admission import Profile
from reference.jobs.budgets import Budgets
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.store import Status

SHARED_DDL = """
CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs (priority DESC, available_at, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (lease_until) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_running_queue ON jobs (queue) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_running_group ON jobs (concurrency_group) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_workflow ON jobs (workflow_id) WHERE workflow_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS budgets (kind TEXT NOT NULL, name TEXT NOT NULL, budget INTEGER NOT NULL,
    PRIMARY KEY (kind, name));
"""
"""The indexes on ``jobs`` (claim order, leases, running cost, states, workflows) and the budgets
table: the same SQL on SQLite and PostgreSQL. Each backend's ``SCHEMA`` adds the rest."""
JOB_INSERT_COLUMNS = (
    "queue, handler, payload, priority, state, max_attempts, backoff, concurrency_group,"
    " concurrency_limit, cost_units, available_at, created_at, workflow_id, step, item_index"
)
"""The columns ``job_insert`` gives values for, in its order (``state`` is always pending)."""
CLAIMABLE = (
    "SELECT COUNT(*) AS n FROM jobs WHERE ((state = 'pending' AND available_at <= {p})"
    " OR (state = 'processing' AND lease_until < {p}))"
)
"""How many jobs a claim could take now (pending and due, or a lapsed lease); ``{p}`` is the
backend's placeholder (now, twice); a backend appends its queue filter."""
FAILED_RUNS = "SELECT id FROM workflows WHERE status = 'failed' ORDER BY id DESC LIMIT {p}"
"""The newest failed workflow runs' ids (``{p}``: the backend's placeholder, the limit)."""
RUN_COLUMNS = (
    "id",
    "definition",
    "state",
    "step",
    "pending",
    "results",
    "status",
    "reason",
    "usage",
    "parent",
)
RUN_INSERT = (
    "INSERT INTO workflows (definition, state, step, pending, results, status, reason, usage, parent)"
    " VALUES ({p}, '{{}}', -1, 0, '[]', 'running', NULL, '{{}}', {p})"
)
"""A new run's row; ``{p}`` is the backend's placeholder (definition, parent)."""
RUN_SAVE = (
    "UPDATE workflows SET state = {p}, step = {p}, pending = {p}, results = {p}, status = {p},"
    " reason = {p}, usage = {p} WHERE id = {p}"
)
"""A run's changing columns, in ``run_params``'s order; ``{p}`` is the backend's placeholder."""


_STATES = {state.value: state for state in JobState}
_T = TypeVar("_T")
_new = object.__new__
_set = object.__setattr__


def frozen(cls: type[_T], values: dict[str, Any]) -> _T:
    """An instance of the frozen dataclass ``cls`` holding ``values`` (every field, by name; the
    dict becomes the instance's), built without its ``__init__``: a frozen ``__init__`` sets each
    field through ``object.__setattr__``, which costs a claim more than the rest of its Python.
    Only for classes without ``__post_init__`` or ``__slots__``; the result compares, hashes and
    prints as the constructor's would (``tests/jobs/test_fast_claim.py`` checks the ones used)."""
    instance = _new(cls)
    _set(instance, "__dict__", values)
    return instance


def state_of(value: object) -> JobState:
    """The ``JobState`` a row's ``state`` column holds; ``ValueError`` naming any other value (a
    row written by another version, or by hand)."""
    state = _STATES.get(value) if isinstance(value, str) else None
    if state is None:
        raise ValueError(f"a jobs row has the unknown state {value!r}")
    return state


class Ready(NamedTuple):
    """A claimable job as a claim scans it: only what admission reads (no payload to decode)."""

    id: int
    queue: str
    handler: str
    concurrency_group: str | None
    concurrency_limit: int | None
    cost_units: int
    attempts: int
    denials: int


READY_COLUMNS = ", ".join(Ready._fields)


def ready(job: Job) -> Ready:
    return Ready(
        job.id,
        job.queue,
        job.handler,
        job.concurrency_group,
        job.concurrency_limit,
        job.cost_units,
        job.attempts,
        job.denials,
    )


def lease(worker: str, token: str, attempts: int, lease_until: float) -> dict[str, Any]:
    """The changes that start an admitted job: ``processing``, leased to ``worker`` with ``token``."""
    return {
        "state": JobState.PROCESSING,
        "attempts": attempts,
        "lease_until": lease_until,
        "lease_token": token,
        "worker": worker,
    }


def finished(started: Job, stored: str | None) -> Job:
    """``started`` (a job as a claim started it) once a finish has marked it done with the result
    ``stored`` (its JSON text, or None): what the store's row now holds, built without reading it
    back and without the frozen ``__init__`` (a copy of a ``Job`` is a ``Job``)."""
    values = started.__dict__.copy()
    values["state"] = JobState.DONE
    values["result"] = None if stored is None else json.loads(stored)
    values["lease_until"] = values["lease_token"] = None
    return frozen(Job, values)


def measured(duration: object, peak_memory: object) -> None:
    """A run's duration and peak memory, checked before a step records them as a profile sample:
    a finite number >= 0 each (``ValueError``/``TypeError`` naming the field, nothing changed)."""
    if (
        type(duration) is float
        and type(peak_memory) is int
        and 0.0 <= duration < math.inf
        and peak_memory >= 0
    ):
        return  # what a worker passes, checked first
    for fieldname, value in (("duration", duration), ("peak_memory", peak_memory)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{fieldname} must be a number, got {type(value).__name__}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{fieldname} must be a finite number >= 0, got {value!r}")


def profile_of(samples: list[list[float]]) -> Profile | None:
    if not samples:
        return None
    return Profile(max(s[0] for s in samples), int(max(s[1] for s in samples)), len(samples))


class ProfileCache:
    """Handlers' profiles decoded from their samples as a store holds them (JSON text), each once per
    change of that text: a claim reads its handler's samples every time, they change only when a
    run of that handler ends."""

    LIMIT = 1024
    """Most handlers kept (beyond that it starts over)."""

    def __init__(self) -> None:
        self._decoded: dict[str, tuple[str, Profile | None]] = {}

    def get(self, handler: str, text: str | None) -> Profile | None:
        if text is None:
            return None
        cached = self._decoded.get(handler)
        if cached is not None and cached[0] == text:
            return cached[1]
        profile = profile_of([list(map(float, sample)) for sample in json.loads(text)])
        if len(self._decoded) >= self.LIMIT:
            self._decoded.clear()
        self._decoded[handler] = (text, profile)
        return profile


def job_insert(spec: JobSpec, now: float, workflow: tuple[int, int, int | None] | None) -> tuple[Any, ...]:
    """The values of ``JOB_INSERT_COLUMNS`` but ``state`` (the SQL writes ``'pending'``)."""
    run, step, item = workflow if workflow is not None else (None, None, None)
    return (
        spec.queue,
        spec.handler_name,
        spec.payload_json,
        spec.priority,
        spec.max_attempts,
        spec.backoff,
        spec.concurrency_group,
        spec.concurrency_limit,
        spec.cost_units,
        now + spec.delay,
        now,
        run,
        step,
        item,
    )


def run_of(row: Mapping[str, Any]) -> wf.Run:
    """A workflow run from its row (``RUN_COLUMNS``, JSON columns as text)."""
    return wf.Run(
        int(row["id"]),
        wf.Workflow.from_definition(json.loads(row["definition"])),
        json.loads(row["state"]),
        row["step"],
        row["pending"],
        json.loads(row["results"]),
        row["status"],
        row["reason"],
        json.loads(row["usage"]),
        None if row["parent"] is None else int(row["parent"]),
    )


def run_params(run: wf.Run) -> tuple[Any, ...]:
    """The values of ``RUN_SAVE``."""
    return (
        wf.dumps(run.state),
        run.step,
        run.pending,
        wf.dumps(run.results),
        run.status,
        run.reason,
        wf.dumps(run.usage),
        run.id,
    )


def budget_rows(budgets: Budgets) -> list[tuple[str, str, int]]:
    """The ``budgets`` table's rows: (kind, name, budget)."""
    rows = [("queue", k, v) for k, v in budgets.queues.items()]
    return rows + [("group", k, v) for k, v in budgets.groups.items()]


def budgets_of(rows: Iterable[tuple[str, str, int]]) -> Budgets:
    queues: dict[str, int] = {}
    groups: dict[str, int] = {}
    for kind, label, budget in rows:
        (queues if kind == "queue" else groups)[label] = int(budget)
    return Budgets(queues, groups)


def status_of(
    counts: dict[str, int], processing: list[Job], deferred: list[Job], failed: list[Job], budgets: Budgets
) -> Status:
    """A status from the rows it reports: the active cost is summed over the processing jobs."""
    queues: dict[str, int] = {}
    groups: dict[str, int] = {}
    running: dict[str, int] = {}
    for job in processing:
        queues[job.queue] = queues.get(job.queue, 0) + job.cost_units
        if job.concurrency_group is not None:
            groups[job.concurrency_group] = groups.get(job.concurrency_group, 0) + job.cost_units
            running[job.concurrency_group] = running.get(job.concurrency_group, 0) + 1
    return Status(
        counts,
        {"queues": queues, "groups": groups},
        running,
        budgets,
        [
            {
                "id": j.id,
                "queue": j.queue,
                "denials": j.denials,
                "reason": j.last_denial,
                "retry_at": j.available_at,
            }
            for j in deferred
        ],
        [{"id": j.id, "queue": j.queue, "attempts": j.attempts, "reason": j.reason} for j in failed],
    )
