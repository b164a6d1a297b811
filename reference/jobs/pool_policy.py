"""The adaptive pool's decisions: one pure function from the pool's state and what it observes to
how many workers to start and to stop.

The controller (``pool.py``) observes, calls ``decide``, and applies the answer; the spec
(``spec/job_pool.py``) states the same rules over small integers, and a test checks that the two
agree on every state the spec reaches (``tests/job_pool/test_spec.py``).

The rules, at every reconcile:

* **shutdown**: once the controller is told to stop, every active worker is told to stop;
* **up**: the target is the backlog on top of the busy workers (the idle ones take jobs first), at
  least ``min_workers`` and at most ``max_workers``; workers told to stop but still alive
  (``draining``) count against ``max_workers`` (they are processes, and hold memory) but not as
  capacity;
* **memory gate**: a start needs room for the workers' recent peak plus the margin on top of every
  worker started before it in the same reconcile: ``k`` starts need ``available >= k * peak +
  margin``. Without a trustworthy reading the gate is open (as admission's system check is
  skipped); without an observed peak the configured estimate stands in. The gate binds the
  minimum too: the pool stays below ``min_workers`` rather than start a process that would not fit,
  and says so (``held_back``);
* **down**: with no claimable job waiting the pool is idle; once it has been idle for
  ``idle_grace`` seconds the idle workers above ``min_workers`` are told to stop (a busy one is
  stopped at a later reconcile, once its job is done), and the grace starts over.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_WORKERS = 1024


@dataclass(frozen=True)
class PoolPolicy:
    min_workers: int
    max_workers: int
    idle_grace: float = 30.0
    """Seconds without a claimable job before the workers above the minimum are stopped."""
    worker_memory: int = 64 << 20
    """Bytes a worker is assumed to peak at until one has been measured."""
    memory_margin: int = 64 << 20
    """Bytes kept free on top of the starts' peaks."""

    def __post_init__(self) -> None:
        for name in ("min_workers", "max_workers", "worker_memory", "memory_margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if not 0 <= self.min_workers <= MAX_WORKERS:
            raise ValueError(f"min_workers must be 0..{MAX_WORKERS}, got {self.min_workers}")
        if not 1 <= self.max_workers <= MAX_WORKERS:
            raise ValueError(f"max_workers must be 1..{MAX_WORKERS}, got {self.max_workers}")
        if self.min_workers > self.max_workers:
            raise ValueError(f"min_workers {self.min_workers} exceeds max_workers {self.max_workers}")
        if not self.idle_grace >= 0:  # also refuses NaN
            raise ValueError(f"idle_grace must be at least 0 seconds, got {self.idle_grace}")
        if self.worker_memory < 1:
            raise ValueError(f"worker_memory must be at least 1 byte, got {self.worker_memory}")
        if self.memory_margin < 0:
            raise ValueError(f"memory_margin must be at least 0, got {self.memory_margin}")


@dataclass(frozen=True)
class Observation:
    """What the controller sees at one reconcile, after reaping the workers that exited."""

    now: float
    active: int
    """Live workers not told to stop."""
    busy: int
    """Of the active workers, those running a job."""
    draining: int
    """Live workers told to stop (finishing their job)."""
    backlog: int
    """Claimable jobs waiting now (``store.claimable``)."""
    available: int | None
    """Bytes the system can still give (``sysmem``), None without a trustworthy reading."""
    peak: int | None
    """The workers' recent peak resident size, None before one was measured."""
    stopping: bool = False


@dataclass(frozen=True)
class PoolState:
    idle_since: float | None = None
    """When the pool was first seen idle (no claimable job) in the current idle stretch."""


@dataclass(frozen=True)
class Actions:
    start: int
    stop: int
    """Active workers to tell to stop: the idle ones first (at shutdown every one)."""
    state: PoolState
    reason: str
    """``shutdown``, ``minimum``, ``backlog``, ``idle``, ``steady``."""
    held_back: str | None = None
    """Why fewer workers were started than wanted: ``memory`` or ``max``; None when none were."""


def fitting(policy: PoolPolicy, available: int | None, peak: int | None) -> int | None:
    """How many more workers the memory gate lets start now; None when it does not bound them."""
    if available is None:
        return None
    per_worker = peak if peak is not None and peak > 0 else policy.worker_memory
    if available < policy.memory_margin:
        return 0
    return (available - policy.memory_margin) // per_worker


def decide(policy: PoolPolicy, state: PoolState, seen: Observation) -> Actions:
    """The reconcile's actions: how many workers to start and how many active ones to stop."""
    if seen.stopping:
        return Actions(0, seen.active, PoolState(None), "shutdown")
    target = max(policy.min_workers, min(policy.max_workers, seen.busy + seen.backlog))
    want = max(target - seen.active, 0)
    room = max(policy.max_workers - seen.active - seen.draining, 0)
    fit = fitting(policy, seen.available, seen.peak)
    start = min(want, room) if fit is None else min(want, room, fit)
    wanted = max(policy.min_workers, seen.busy + seen.backlog) - seen.active  # before the maximum
    held_back = None
    if start < wanted:
        held_back = "memory" if fit is not None and fit < min(want, room) else "max"
    reason = "minimum" if seen.active < policy.min_workers else "backlog" if want else "steady"
    if seen.backlog > 0:
        return Actions(start, 0, PoolState(None), reason, held_back)
    since = seen.now if state.idle_since is None else state.idle_since
    surplus = min(seen.active - policy.min_workers, seen.active - seen.busy)
    if surplus > 0 and seen.now - since >= policy.idle_grace:
        return Actions(0, surplus, PoolState(seen.now), "idle")
    return Actions(start, 0, PoolState(since), reason, held_back)
