"""The Schedule Gate's harness scenarios, for `lanecheck explore`.

Their `lanecheck verify` rows are ``rows.py``'s: every trace of the clean scenarios is
validated, and each mutant's failing trace must be rejected at a located seq, so the
rows need more than the harness's verdict (``verify=False`` here).
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial

from model_checks.design import Scenario
from model_checks.designs.schedule_gate.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.schedule_gate.scenarios import MUTANT_SCENARIOS, gate_program
from reference.schedule_gate import GateScheduler

# The options each mutant's row runs with that matter to a rerun from `lanecheck explore`.
_EXPLORE_FIELDS = ("strategy", "time_limit", "max_executions")


def _table() -> dict[str, Scenario]:
    table = {
        "one-producer": Scenario(
            "one-producer",
            partial(gate_program, GateScheduler, script=((0,),), validate=True),
            doc="one producer; every trace validated against the spec",
            options={"races": True},
            verify=False,
        ),
        "two-producers": Scenario(
            "two-producers",
            partial(gate_program, GateScheduler, yield_in_handler=True, validate=True),
            expect="bounded",
            doc="two producers; every trace validated against the spec",
            options={"preemption_bound": 1, "races": True},
            verify=False,
        ),
    }
    for name, m in REFERENCE_MUTANTS.items():
        kwargs, options = MUTANT_SCENARIOS[name]
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}",
            partial(gate_program, m.build, traced=True, **kwargs),
            expect=m.expect,
            options={
                k: v for k, v in asdict(options).items() if k in ("strategy", "time_limit", "max_executions")
            },
            verify=False,
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()
