"""MODULE JobPool — the adaptive worker pool's controller: when it starts and stops workers.

``lanecheck jobs pool`` runs worker processes against one job store. A controller
**reconciles** on an interval: it reaps the workers that exited, reads the backlog
(claimable jobs waiting) and the memory still available, and decides:

* below ``min_workers`` it starts workers up to the minimum;
* while jobs wait it starts workers up to ``busy + backlog`` (the idle workers take jobs
  first), at most ``max_workers``; workers told to stop but still alive (``draining``) count
  against the maximum;
* a start must pass the **memory gate**: ``k`` starts need ``free >= k * peak + margin``
  (the workers' recent peak, in abstract units here). The gate binds the minimum too;
* with no job waiting the pool is idle; idle for ``grace`` ticks, it tells the idle workers
  above the minimum to stop (they exit) and the grace starts over;
* told to shut down (SIGTERM), it tells every worker to stop and ends once none is alive.

The environment is bounded so that "eventually" means something: at most ``arrivals``
jobs arrive, ``pressure`` changes of the memory other processes use, ``crashes`` worker
deaths (kill -9) and, with ``terminate``, one SIGTERM. The controller, the clock, the
workers taking jobs and the draining workers exiting are weakly fair; the environment
is not.

``Decide`` is the decision alone (on the state after reaping); the reference's
``reference.jobs.pool_policy.decide`` must agree with it on every reachable state
(``tests/job_pool/test_spec.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from spec.language import WF, LeadsTo, SpecBuilder, emit

# ============================================================================ CONSTANTS


@dataclass(frozen=True)
class Constants:
    min_workers: int = 1
    max_workers: int = 2
    grace: int = 1  # clock ticks idle before scaling down
    peak: int = 2  # memory units one worker peaks at
    margin: int = 1  # memory units kept free on top of the starts
    memory: int = 8  # memory units of the machine
    other: tuple[int, ...] = (0, 5)  # the memory other processes may use; the first at start
    pressure: int = 1  # changes of the memory others use
    arrivals: int = 2  # jobs that arrive
    crashes: int = 1  # workers killed (kill -9)
    terminate: bool = True  # the controller may get one SIGTERM


def Pool(c: Constants) -> tuple[str, ...]:
    return ("pool",)


def Clock(c: Constants) -> tuple[str, ...]:
    return ("clock",)


def Runners(c: Constants) -> tuple[str, ...]:
    """The active workers, as one process: they take the claimable jobs and finish them."""
    return ("workers",)


def Exits(c: Constants) -> tuple[str, ...]:
    """The draining workers, as one process: each finishes its job and exits."""
    return ("exits",)


def Env(c: Constants) -> tuple[str, ...]:
    return ("env",)


def Levels(c: Constants) -> tuple[int, ...]:
    return c.other


def Busy(c: Constants) -> tuple[bool, ...]:
    """Whether the worker a crash kills was running a job."""
    return (False, True)


JobPool = SpecBuilder("job-pool", __doc__ or "")


@JobPool.assume
def Sizes(c: Constants) -> str | None:
    """0 <= min <= max, max >= 1; positive peak; bounds never negative."""
    if not 0 <= c.min_workers <= c.max_workers or c.max_workers < 1:
        return (
            f"need 0 <= min_workers <= max_workers and max_workers >= 1, not {c.min_workers}..{c.max_workers}"
        )
    if c.peak < 1 or min(c.grace, c.margin, c.memory, c.pressure, c.arrivals, c.crashes, *c.other) < 0:
        return "peak must be at least 1; grace, margin, memory, bounds and levels at least 0"
    return None


# ============================================================================ VARIABLES


class Vars(NamedTuple):
    phase: str  # starting | running | stopping | stopped
    active: int  # live workers not told to stop
    busy: int  # of them, those running a job
    crashed: int  # workers that died (kill -9), not yet reaped
    draining: int  # live workers told to stop
    exited: int  # workers that stopped as told, not yet reaped
    backlog: int  # claimable jobs waiting
    arrivals: int  # jobs still to arrive
    other: int  # memory units other processes use
    pressure: int  # changes of ``other`` left
    crashes: int  # crashes left
    idle_for: int | None  # ticks the controller has seen the pool idle (saturates at grace)
    # ghosts: what the last reconcile read and did
    seen_free: int  # the free memory it read
    started: int  # the workers it started


STARTING, RUNNING, STOPPING, STOPPED = "starting", "running", "stopping", "stopped"


def Free(c: Constants, s: Vars) -> int:
    """What the system reports available: the machine less others less the live workers' peaks."""
    return max(c.memory - s.other - (s.active + s.draining) * c.peak, 0)


def Fit(c: Constants, free: int) -> int:
    """How many starts the memory gate allows: k with k * peak + margin <= free."""
    return 0 if free < c.margin else (free - c.margin) // c.peak


def Reaped(s: Vars) -> Vars:
    """The controller's view once it polled its workers: the exited ones are gone."""
    return s._replace(crashed=0, exited=0)


# ============================================================================ INIT


@JobPool.init
def Init(c: Constants) -> list[Vars]:
    """No worker yet; the first reconcile brings up the minimum."""
    return [Vars(STARTING, 0, 0, 0, 0, 0, 0, c.arrivals, c.other[0], c.pressure, c.crashes, None, 0, 0)]


# ============================================================================ THE DECISION

Decision = tuple[int, int, int | None]  # (start, stop, idle_for')


def Decide(c: Constants, s: Vars) -> Decision:
    """The controller's decision on the reaped view ``s``: starts, stops, the idle timer."""
    if s.phase == STOPPING:
        return 0, s.active, None
    target = max(c.min_workers, min(c.max_workers, s.busy + s.backlog))
    room = c.max_workers - s.active - s.draining
    start = max(min(target - s.active, room, Fit(c, Free(c, s))), 0)
    if s.backlog > 0:
        return start, 0, None
    idle = 0 if s.idle_for is None else s.idle_for
    surplus = min(s.active - c.min_workers, s.active - s.busy)  # idle workers above the minimum
    if surplus > 0 and idle >= c.grace:
        return 0, surplus, 0
    return start, 0, idle


def ReconcileWith(decide: Callable[[Constants, Vars], Decision]) -> Callable[..., Any]:
    """The reconcile step around a decision function (the mutants swap the decision)."""

    def Reconcile(c: Constants, s: Vars, p: str) -> Any:
        """Reap the exited workers, read backlog and memory, start and stop as decided."""
        if s.phase == STOPPED:
            return None
        view = Reaped(s)._replace(phase=RUNNING if s.phase == STARTING else s.phase)
        if view.phase == STOPPING and view.active == view.draining == 0:
            return emit(view._replace(phase=STOPPED), start=0, stop=0)
        start, stop, idle = decide(c, view)
        nxt = view._replace(
            active=view.active + start - stop,
            busy=min(view.busy, view.active - stop),  # idle workers are stopped first
            draining=view.draining + stop,
            idle_for=idle,
            seen_free=Free(c, view),
            started=start,
        )
        return None if nxt == s else emit(nxt, start=start, stop=stop)

    return Reconcile


JobPool.action(Pool, event="reconcile")(ReconcileWith(Decide))

# ============================================================================ THE WORLD


@JobPool.action(Clock)
def Tick(c: Constants, s: Vars, p: str) -> Vars | None:
    """Time passes while the controller's idle timer runs."""
    if s.idle_for is None or s.idle_for >= c.grace:
        return None
    return s._replace(idle_for=s.idle_for + 1)


@JobPool.action(Runners)
def Take(c: Constants, s: Vars, p: str) -> Vars | None:
    """An idle active worker claims a waiting job."""
    return s._replace(backlog=s.backlog - 1, busy=s.busy + 1) if s.busy < s.active and s.backlog else None


@JobPool.action(Runners)
def Finish(c: Constants, s: Vars, p: str) -> Vars | None:
    """A busy worker finishes its job."""
    return s._replace(busy=s.busy - 1) if s.busy > 0 else None


@JobPool.action(Exits)
def Exit(c: Constants, s: Vars, p: str) -> Vars | None:
    """A worker told to stop finishes its job (or gives it back) and exits."""
    return s._replace(draining=s.draining - 1, exited=s.exited + 1) if s.draining > 0 else None


@JobPool.action(Env)
def Arrive(c: Constants, s: Vars, p: str) -> Vars | None:
    """A job is enqueued."""
    return s._replace(backlog=s.backlog + 1, arrivals=s.arrivals - 1) if s.arrivals > 0 else None


@JobPool.action(Env, Levels)
def Pressure(c: Constants, s: Vars, p: str, level: int) -> Vars | None:
    """Other processes take or give back memory."""
    if s.pressure == 0 or level == s.other:
        return None
    return s._replace(other=level, pressure=s.pressure - 1)


@JobPool.action(Env, Busy)
def Crash(c: Constants, s: Vars, p: str, busy: bool) -> Vars | None:
    """A worker is killed; the controller notices at its next reconcile. A busy one's job comes
    back when its lease expires (here at once: the expiry's delay is the admission spec's concern)."""
    if s.crashes == 0 or (s.busy if busy else s.active - s.busy) == 0:
        return None
    s = s._replace(active=s.active - 1, crashed=s.crashed + 1, crashes=s.crashes - 1)
    return s._replace(busy=s.busy - 1, backlog=s.backlog + 1) if busy else s


@JobPool.action(Env)
def Terminate(c: Constants, s: Vars, p: str) -> Vars | None:
    """SIGTERM to the controller."""
    return s._replace(phase=STOPPING) if c.terminate and s.phase in (STARTING, RUNNING) else None


# ============================================================================ INVARIANTS


def Processes(s: Vars) -> int:
    """Every worker in the controller's table: alive, or exited and not yet reaped."""
    return s.active + s.crashed + s.draining + s.exited


@JobPool.invariant(reads=("active", "crashed", "draining", "exited"))
def NeverAboveMax(c: Constants, s: Vars) -> str | None:
    """The pool never holds more than ``max_workers`` worker processes."""
    n = Processes(s)
    return None if n <= c.max_workers else f"{n} worker processes, above max_workers {c.max_workers}"


@JobPool.invariant(reads=("phase", "active", "crashed", "seen_free", "started"))
def NeverBelowMin(c: Constants, s: Vars) -> str | None:
    """While running, fewer than ``min_workers`` only when the last reading could not fit one more."""
    n = s.active + s.crashed
    if s.phase != RUNNING or n >= c.min_workers or s.seen_free < (s.started + 1) * c.peak + c.margin:
        return None
    return f"{n} workers below min_workers {c.min_workers} though {s.seen_free} units were free"


@JobPool.invariant(reads=("seen_free", "started"))
def NoStartAgainstGate(c: Constants, s: Vars) -> str | None:
    """A reconcile starts ``k`` workers only when ``k * peak + margin`` units were free."""
    need = s.started * c.peak + c.margin
    if s.started == 0 or s.seen_free >= need:
        return None
    return f"started {s.started} workers on {s.seen_free} free units, needing {need}"


@JobPool.invariant(reads=("phase", "active", "crashed", "draining", "exited"))
def StoppedMeansNoWorker(c: Constants, s: Vars) -> str | None:
    """A stopped pool has no worker left."""
    return None if s.phase != STOPPED or Processes(s) == 0 else f"stopped with {Processes(s)} workers"


# ============================================================================ FAIRNESS, LIVENESS

JobPool.fairness(WF(Pool), WF(Clock), WF(Runners), WF(Exits))
JobPool.property(
    LeadsTo(
        "ScalesDownWhenIdle",
        lambda c, s: s.phase == RUNNING and s.backlog == 0 and s.active > c.min_workers,
        lambda c, s: s.phase != RUNNING or s.backlog > 0 or s.active <= c.min_workers,
        "an idle pool above its minimum eventually stops the surplus (or work arrives, or it shuts down)",
    )
)
JobPool.property(
    LeadsTo(
        "ShutdownCompletes",
        lambda c, s: s.phase == STOPPING,
        lambda c, s: s.phase == STOPPED,
        "after SIGTERM every worker finishes its job and exits, and the controller ends",
    )
)


@JobPool.terminal
def Stopped(c: Constants, s: Vars) -> bool:
    return s.phase == STOPPED


@JobPool.describe
def Show(c: Constants, s: Vars) -> Mapping[str, Any]:
    return {
        "phase": s.phase,
        "workers": f"{s.active} active ({s.busy} busy), {s.draining} draining",
        "to reap": s.crashed + s.exited,
        "backlog": s.backlog,
        "free": Free(c, s),
        "idle_for": s.idle_for,
    }


SPEC = JobPool.spec
