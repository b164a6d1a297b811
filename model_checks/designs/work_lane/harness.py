"""The Work Lane's harness scenarios as `lanecheck verify` and `lanecheck explore` see them.

The scenarios themselves are ``scenarios.py`` (the real ``WorkerScheduler`` under the
harness); the seeded reference bugs are ``reference_mutants.py``. Correct scenarios
are sampled with PCT, so their rows say "bounded" (sampling is never a proof); each
mutant must be caught by DPOR with the failure kind it names.
"""

from __future__ import annotations

from functools import partial

from model_checks.design import Scenario
from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import SCENARIO_SPECS, LaneScenario, lane_program


def _table() -> dict[str, Scenario]:
    table = {
        name: Scenario(
            name,
            partial(lane_program, spec),
            expect="bounded",
            options={"strategy": "pct", "seed": 1, "max_executions": 500},
            quick_options={"strategy": "pct", "seed": 1, "max_executions": 50},
            subject=f"scenario work-lane/{name} [pct]",
        )
        for name, spec in SCENARIO_SPECS.items()
    }
    for name, m in REFERENCE_MUTANTS.items():
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}",
            partial(lane_program, LaneScenario(**m.scenario), build=m.build),
            expect=m.expect,
            doc=m.doc,
            options={"strategy": "dpor", "spurious_wakeups": m.spurious_wakeups, "time_limit": 60},
            subject=f"work-lane reference --mutant {name}",
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()
