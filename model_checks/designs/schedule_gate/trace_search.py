"""The schedule-gate spec's options for the streaming search (``search.TraceSearch``): where its
internal actions can be enabled, which of them are deferred, and what a deferred step is about.

A worker's drain ends with a step no event shows: the pop that finds the mailbox empty
(``FoundEmpty``) or its budget spent (``BudgetSpent``), before its logged ``drain_end``. Taken at
once, each worker past its last ``process`` doubled the states held (drained or not yet), and a
trace in which several drains end together held 2^n of them (a real-thread bench trace: a mean of
2.6 states, up to 64). They are deferred until an event needs them: the worker's own
``drain_end``, or a ``publish`` to the actor it drains (the empty pop does not move past a push to
its own mailbox; it moves past every other step, checked on the spec's reachable states by
``conformance.movers``: tests/gate/test_deferred_drains.py).

The producers' internal steps stay eager. Deferring them too was measured (they move past the
steps named in the test's ``PRODUCER_READS``): it held no fewer states on the bench's traces,
whose remaining ambiguity is real (a producer's lost admission CAS made before or after the gate
went Idle again), and cost a third more time per event.
"""

from __future__ import annotations

from typing import Any, Final

from model_checks.designs import internal_at
from spec import schedule_gate as sg

# The program counters at which each internal action of the spec can be enabled: its ``at=``
# (its first guard); the search calls an action only there. tests/gate checks this against the spec.
ENABLED_AT = internal_at(sg.SPEC)

# Each deferred action moves right past every step of another process but those named here about
# the same actor (``unit``): an empty pop does not move past a push to its mailbox.
DEFERRED: dict[str, frozenset[str]] = {
    "FoundEmpty": frozenset({"Publish"}),
    "BudgetSpent": frozenset(),
}
UNIT_FIELD = "actor"  # every event names the actor it is about

# A producer idle before a post the trace has not shown yet: its ``SeeIdle`` (the one internal step
# at ``P_IDLE``) reads that post and cannot be enabled, so the search need not try it there.
P_IDLE_UNANNOUNCED = "idle, next post not shown yet"


def local_pc(s: sg.Vars, process: Any) -> str:
    local = s.producer[process] if process in s.producer.domain() else s.worker[process]
    return str(local[0])


def announced_pc(c: Any, s: sg.Vars, process: Any) -> str:
    """``local_pc``, with ``P_IDLE_UNANNOUNCED`` for a producer idle before a post that ``c``
    (``post_of``) does not hold yet: no internal step is enabled there (``ENABLED_AT``)."""
    if process in s.producer.domain():
        pc, k, _ = s.producer[process]
        return P_IDLE_UNANNOUNCED if pc == sg.P_IDLE and c.post_of(process, k) is None else str(pc)
    return str(s.worker[process][0])


WORKER_ACTOR: Final = 1  # the item of a worker's local tuple naming the actor it took or drains


def drained_actor(s: sg.Vars, process: Any) -> int | None:
    """The actor a worker's step is about (the search's ``unit``): the one it took or drains; None
    for an idle worker and for a producer (whose steps are not deferred)."""
    if process in s.worker.domain():
        actor: int | None = s.worker[process][WORKER_ACTOR]
        return actor
    return None


__all__ = [
    "DEFERRED",
    "ENABLED_AT",
    "P_IDLE_UNANNOUNCED",
    "UNIT_FIELD",
    "WORKER_ACTOR",
    "announced_pc",
    "drained_actor",
    "local_pc",
]
