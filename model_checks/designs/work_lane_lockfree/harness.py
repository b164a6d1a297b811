"""The lock-free Work Lane's harness scenarios as `lanecheck verify` and `lanecheck explore` see them.

The scenarios are ``scenarios.py`` (the real ``LockFreeScheduler`` under the harness, every
atomic step a scheduling point); the seeded reference bugs are ``reference_mutants.py``.

Two producers on one lane with Stop(drain) are explored exhaustively by DPOR (the execution count
is recorded in tests/work_lane_lockfree/test_reference_harness.py); the other scenarios are
sampled with PCT, so their rows say "bounded". The race
detector is off in the exhaustive rows, whose verdict then says "synchronisation points only"
(it costs several times the executions/s); the PCT rows run it, and the reference has no
unsynchronised shared field (every flag is an atomic). Every row validates each execution's
trace, the PCT rows under the race detector too; the spec judges each distinct trace of a search
once (``scenarios.TraceJudge``: most executions repeat a trace already judged). Each mutant must
be caught by DPOR with the failure kind it names.
"""

from __future__ import annotations

from functools import partial

from model_checks.design import Scenario
from model_checks.designs.work_lane_lockfree.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane_lockfree.scenarios import (
    SCENARIO_SPECS,
    LockFreeScenario,
    lockfree_program,
)
from model_checks.mutant_scenarios import mutant_scenarios

# Exhaustive under DPOR: 12,715 executions with the trace locks (54,424, 84 s, before), 270 s on a
# loaded 2-core machine with every trace validated; 18 s of CPU at load 10 once each distinct
# trace is judged once (about 1 execution in 19 emits a new one) (so also under
# --quick, where sampling would make the verdict "bounded"). The Stop(discard) scenarios on one
# lane were still open after 26,739 executions (60 s), so they are sampled like the two-lane ones.
EXHAUSTIVE = frozenset({"one-producer", "one-lane-drain"})
QUICK_PROOFS = frozenset({"one-producer"})
_PCT = {"strategy": "pct", "seed": 1, "max_executions": 300, "races": True}
_PCT_QUICK = {"strategy": "pct", "seed": 1, "max_executions": 30, "races": True}
_SAMPLE_QUICK = {"strategy": "pct", "seed": 1, "max_executions": 30, "races": False}
# one-producer's proof runs the race detector (100 executions, 2 s at load 5, against 22 without);
# one-lane-drain's (13,159 executions, 20 s, without it) is at synchronisation points only.
_PROOF = {"strategy": "dpor", "time_limit": 600}


def _strategies(name: str, exhaustive: bool) -> str:
    """What the row runs, as its subject says it: a proof that --quick samples must not read "dpor"."""
    if not exhaustive:
        return "pct"
    return "dpor" if name in QUICK_PROOFS else "dpor; --quick samples it with pct"


def _table() -> dict[str, Scenario]:
    table: dict[str, Scenario] = {}
    for name, spec in SCENARIO_SPECS.items():
        exhaustive = name in EXHAUSTIVE
        table[name] = Scenario(
            name,
            # Every row validates its traces, the PCT rows under the race detector too (each step
            # and its event are one step under the lane's trace locks: see lockfree_program).
            partial(lockfree_program, spec, validate=True),
            expect="exhaustive" if exhaustive else "bounded",
            options={**_PROOF, "races": name in QUICK_PROOFS} if exhaustive else _PCT,
            # the 2-producer proof takes minutes: `verify --quick` samples it (a bounded row)
            quick_options=None if name in QUICK_PROOFS else _PCT_QUICK if not exhaustive else _SAMPLE_QUICK,
            quick_expect="bounded" if exhaustive and name not in QUICK_PROOFS else None,
            subject=f"scenario work-lane-lockfree/{name} [{_strategies(name, exhaustive)}]",
        )
    # Validated (DPOR, no race detector): the mutant's trace is judged by the spec before the
    # scenario's own checks, so the failure names the step the spec cannot make.
    table.update(
        mutant_scenarios(
            "work-lane-lockfree",
            REFERENCE_MUTANTS,
            lambda m: partial(lockfree_program, LockFreeScenario(**m.scenario), build=m.build, validate=True),
        )
    )
    return table


SCENARIOS: dict[str, Scenario] = _table()
