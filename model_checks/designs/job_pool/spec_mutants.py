"""Seeded bugs in the pool controller's decision: each must be caught, with a shortest counterexample.

These are the bugs autoscalers ship: a scale-up that forgets the maximum (or forgets that workers
told to stop are still processes), a scale-down that forgets the minimum, a start that ignores
the memory gate, and a pool that never gives workers back. Each replaces only ``Decide``: the
reconcile around it, and the ghosts the invariants read, stay the spec's.
"""

from __future__ import annotations

import dataclasses

from model_checks.mutant import SpecMutant, by_name
from spec import job_pool as jp
from spec.job_pool import SPEC, STOPPING, Constants, Decision, Vars
from spec.language import Spec, variant

UNBOUNDED = 1 << 30


def _mutant(name: str, decide: object) -> Spec:
    return variant(SPEC, name, replace_actions={"Reconcile": jp.ReconcileWith(decide)})  # type: ignore[arg-type]


def IgnoreMax(c: Constants, s: Vars) -> Decision:
    """BUG: scale up to the backlog, memory permitting, whatever the maximum."""
    return jp.Decide(dataclasses.replace(c, max_workers=UNBOUNDED), s)


def DrainingUncounted(c: Constants, s: Vars) -> Decision:
    """BUG: the room under the maximum counts the active workers only, not those still draining."""
    return jp.Decide(dataclasses.replace(c, max_workers=c.max_workers + s.draining), s)


def BelowMin(c: Constants, s: Vars) -> Decision:
    """BUG: an idle pool stops every active worker, the minimum too."""
    start, stop, idle = jp.Decide(c, s)
    return (0, s.active, 0) if stop else (start, stop, idle)


def IgnoreGate(c: Constants, s: Vars) -> Decision:
    """BUG: start as wanted, without asking whether the memory fits."""
    return jp.Decide(dataclasses.replace(c, memory=UNBOUNDED), s)


def NeverDown(c: Constants, s: Vars) -> Decision:
    """BUG: the idle branch never stops a worker."""
    start, stop, idle = jp.Decide(c, s)
    return (start, stop, idle) if s.phase == STOPPING else (start, 0, idle)


MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "ignore-max",
        "scale-up follows the backlog past max_workers",
        _mutant("ignore-max", IgnoreMax),
        expect="NeverAboveMax",
        length=4,
    ),
    SpecMutant(
        "draining-uncounted",
        "workers told to stop are not counted against max_workers while they finish",
        _mutant("draining-uncounted", DrainingUncounted),
        expect="NeverAboveMax",
        length=11,
    ),
    SpecMutant(
        "below-min",
        "the idle scale-down stops every worker, the minimum too",
        _mutant("below-min", BelowMin),
        expect="NeverBelowMin",
        length=9,
    ),
    SpecMutant(
        "ignore-memory-gate",
        "workers are started without checking that one more fits in the memory available",
        _mutant("ignore-memory-gate", IgnoreGate),
        expect="NoStartAgainstGate",
        length=4,
    ),
    SpecMutant(
        "never-scale-down",
        "an idle pool keeps its workers: never gives back what a burst started",
        _mutant("never-scale-down", NeverDown),
        expect="ScalesDownWhenIdle",
        length=10,
    ),
)
