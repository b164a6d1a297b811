"""Admission: may a claimed job start now? One pure decision, the checks in a fixed order.

The store counts ``Usage`` over the jobs currently ``processing`` inside the same transaction that
claims the job, and the worker measures its ``Conditions`` just before it; ``decide`` needs nothing
else, so the SQLite store, the in-memory store and a port all decide alike. The order:

1. group concurrency limit: ``running in the group >= the job's concurrency_limit``;
2. queue budget: ``active cost of the queue + cost > budget``;
3. group budget: ``active cost of the group + cost > budget``;
4. admission disabled: the shared limits above always hold; the process-level checks below are
   the worker's and it may switch them off (then the job is admitted here);
5. handler profile: the handler's recent peak memory cannot fit this worker even idle, or its
   recent duration outlasts the lease (the job would be claimed again while still running);
6. system memory (cgroup v2, v1 or ``/proc/meminfo``): ``peak + margin > available``; skipped
   without a trustworthy reading;
7. worker memory headroom: ``current + peak + margin > the worker's limit``;
8. time left for a one-shot run: ``recent duration > time left``.

A denial names its reason and a retry-after; the store gives the job back without spending an
attempt. Checks 5-8 need the handler's profile: a handler never seen before passes them (nothing
is known that says it would not fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reference.jobs.budgets import Budgets


class Reason(StrEnum):
    GROUP_CONCURRENCY = "group_concurrency_limit"
    QUEUE_BUDGET = "queue_budget"
    GROUP_BUDGET = "group_budget"
    HANDLER_PROFILE = "handler_profile"
    SYSTEM_MEMORY = "system_memory"
    WORKER_MEMORY = "worker_memory"
    TIME_LEFT = "time_left"


ORDER = tuple(Reason)
"""The checks' order; ``admission disabled`` sits between ``GROUP_BUDGET`` and ``HANDLER_PROFILE``."""


@dataclass(frozen=True)
class Usage:
    """What is running now, counted over ``processing`` jobs in the claim transaction."""

    group_running: int = 0
    queue_cost: int = 0
    group_cost: int = 0


@dataclass(frozen=True)
class Profile:
    """A handler's recent runs: the longest duration and the highest peak memory of the last few."""

    duration: float
    peak_memory: int
    samples: int


@dataclass(frozen=True)
class Conditions:
    """What the worker measured before claiming. ``None`` means "not known": that check is skipped."""

    enabled: bool = True
    system_available: int | None = None
    system_source: str | None = None
    worker_rss: int | None = None
    worker_limit: int | None = None
    memory_margin: int = 64 << 20
    time_left: float | None = None
    lease: float = 300.0
    retry_after: float = 1.0


@dataclass(frozen=True)
class Candidate:
    """The claimed job's part in the decision."""

    queue: str
    concurrency_group: str | None
    concurrency_limit: int | None
    cost_units: int


@dataclass(frozen=True)
class Decision:
    admitted: bool
    reason: Reason | None = None
    detail: str = ""
    retry_after: float = 0.0

    @property
    def label(self) -> str:
        return "admitted" if self.reason is None else self.reason.value


ADMIT = Decision(True)
ADMIT_UNCHECKED = Decision(True, None, "admission disabled: process-level checks skipped")
MB = 1 << 20


def _deny(reason: Reason, detail: str, conditions: Conditions) -> Decision:
    return Decision(False, reason, detail, conditions.retry_after)


def decide(
    job: Candidate,
    usage: Usage,
    budgets: Budgets,
    profile: Profile | None,
    conditions: Conditions,
    *,
    probe: bool = False,
) -> Decision:
    """Admit ``job`` or name the first check it fails (the module's docstring gives the order).

    ``probe``: skip check 5 (the handler's profile against this worker's lease and limit). That
    denial predicts from past runs and only a run can revise it, so the store stops making it for
    a job it has denied often enough (``core.PROFILE_PROBE_AFTER``)."""
    group = job.concurrency_group
    if (
        group is not None
        and job.concurrency_limit is not None
        and usage.group_running >= job.concurrency_limit
    ):
        detail = f"group {group!r} runs {usage.group_running} of its limit {job.concurrency_limit}"
        return _deny(Reason.GROUP_CONCURRENCY, detail, conditions)
    budget = budgets.queues.get(job.queue)
    if budget is not None and usage.queue_cost + job.cost_units > budget:
        detail = f"queue {job.queue!r}: active {usage.queue_cost} + cost {job.cost_units} > budget {budget}"
        return _deny(Reason.QUEUE_BUDGET, detail, conditions)
    budget = budgets.groups.get(group) if group is not None else None
    if budget is not None and usage.group_cost + job.cost_units > budget:
        detail = f"group {group!r}: active {usage.group_cost} + cost {job.cost_units} > budget {budget}"
        return _deny(Reason.GROUP_BUDGET, detail, conditions)
    if not conditions.enabled:
        return ADMIT_UNCHECKED
    if profile is None:
        return ADMIT
    need = profile.peak_memory + conditions.memory_margin
    limit = conditions.worker_limit
    if limit is not None and need > limit and not probe:
        detail = (
            f"recent peak {profile.peak_memory // MB} MiB + margin exceeds the worker limit {limit // MB} MiB"
        )
        # it would not fit even in an idle worker: one with a larger limit may take it
        return _deny(Reason.HANDLER_PROFILE, detail, conditions)
    if profile.duration > conditions.lease and not probe:
        detail = f"recent duration {profile.duration:.3g} s outlasts the lease {conditions.lease:.3g} s"
        return _deny(Reason.HANDLER_PROFILE, detail, conditions)
    available = conditions.system_available
    if available is not None and need > available:
        detail = (
            f"recent peak {profile.peak_memory // MB} MiB + margin > {available // MB} MiB available"
            f" ({conditions.system_source})"
        )
        return _deny(Reason.SYSTEM_MEMORY, detail, conditions)
    if limit is not None and conditions.worker_rss is not None and conditions.worker_rss + need > limit:
        detail = (
            f"worker at {conditions.worker_rss // MB} MiB + recent peak {profile.peak_memory // MB} MiB"
            f" + margin > its limit {limit // MB} MiB"
        )
        return _deny(Reason.WORKER_MEMORY, detail, conditions)
    left = conditions.time_left
    if left is not None and profile.duration > left:
        detail = f"recent duration {profile.duration:.3g} s > {left:.3g} s left in this one-shot run"
        return _deny(Reason.TIME_LEFT, detail, conditions)
    return ADMIT


@dataclass(frozen=True)
class ProfileBounds:
    """Checks 5-8 as two bounds on a handler's profile, for a store that admits without Python
    (``PgStore``'s claim function): ``decide`` admits a job whose checks 1-3 pass iff admission is
    disabled, or there is no profile, or ``profile.peak_memory <= max_peak`` and
    ``profile.duration <= max_duration`` (None: no bound). ``tests/jobs/test_admission.py`` checks
    the equivalence against ``decide`` on random conditions and profiles."""

    check: bool
    max_peak: int | None
    max_duration: float | None


def profile_bounds(conditions: Conditions) -> ProfileBounds:
    """The bounds ``decide``'s checks 5-8 put on a profile under ``conditions``."""
    if not conditions.enabled:
        return ProfileBounds(False, None, None)
    margin = conditions.memory_margin
    peaks: list[int] = []
    limit = conditions.worker_limit
    if limit is not None:
        peaks.append(limit - margin)  # 5: need > limit
        if conditions.worker_rss is not None:
            peaks.append(limit - conditions.worker_rss - margin)  # 7: rss + need > limit
    if conditions.system_available is not None:
        peaks.append(conditions.system_available - margin)  # 6: need > available
    durations = [conditions.lease]  # 5: duration outlasts the lease
    if conditions.time_left is not None:
        durations.append(conditions.time_left)  # 8
    return ProfileBounds(True, min(peaks) if peaks else None, min(durations))
