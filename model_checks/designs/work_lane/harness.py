"""The Work Lane's harness scenarios as `lanecheck verify` and `lanecheck explore` see them.

The scenarios themselves are ``scenarios.py`` (the real ``WorkerScheduler`` under the
harness); the seeded reference bugs are ``reference_mutants.py``. Correct scenarios
are sampled with PCT, so their rows say "bounded" (sampling is never a proof); each
mutant must be caught by DPOR with the failure kind it names.

The correct scenarios run the data-race detector (``races``): a plain shared access the
reference leaves unsynchronised fails their rows. The mutant rows keep it off: they measure
how fast each seeded bug is found, and the detector costs several times the executions/s.
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
            build_for_states=partial(lane_program, spec, keep_trace=False),
            expect="bounded",
            options={"strategy": "pct", "seed": 1, "max_executions": 500, "races": True},
            quick_options={"strategy": "pct", "seed": 1, "max_executions": 50, "races": True},
            subject=f"scenario work-lane/{name} [pct]",
        )
        for name, spec in SCENARIO_SPECS.items()
    }
    for name, m in REFERENCE_MUTANTS.items():
        scenario = LaneScenario(**m.scenario)
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}",
            partial(lane_program, scenario, build=m.build),
            build_for_states=partial(lane_program, scenario, build=m.build, keep_trace=False),
            expect=m.expect,
            doc=m.doc,
            options={"strategy": "dpor", "spurious_wakeups": m.spurious_wakeups, "time_limit": 60},
            subject=f"work-lane reference --mutant {name}",
        )
    # Two mutants on the standard 2 lanes x 2 workers scenario, where plain DPOR spends its budget
    # deep in one subtree (measured: idle-before-recheck not found in 20 s) and the portfolio's
    # PCT part finds them in tens of executions (docs/performance.md, "Time to first bug").
    # On two lanes idle-before-recheck's second submission of a lane is seen first, overflowing
    # the ready queue (Stop returns UNKNOWN): with one wake-up on its way at a time, no second
    # worker is awake to take the first copy before the overflow (the double drain came first
    # while every submission woke a worker).
    for name, expect in (("idle-before-recheck", "assertion"), ("notify-before-publish", "lost_wakeup")):
        m = REFERENCE_MUTANTS[name]
        table[f"mutant-2x2/{name}"] = Scenario(
            f"mutant-2x2/{name}",
            partial(lane_program, LaneScenario(), build=m.build),
            build_for_states=partial(lane_program, LaneScenario(), build=m.build, keep_trace=False),
            expect=expect,
            doc=f"{m.doc}, on 2 lanes x 2 workers",
            options={"strategy": "portfolio", "seed": 1, "time_limit": 60},
            subject=f"work-lane reference --mutant {name} [2x2, portfolio]",
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()
