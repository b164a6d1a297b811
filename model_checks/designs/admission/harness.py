"""The job store's harness scenarios, for `lanecheck explore` and `lanecheck verify`.

Clean scenarios run ``InMemoryStore`` with 1-3 workers under tight budgets (exhaustive DPOR);
``mutant/<name>`` runs a reference mutant in the setup that shows its bug. Their verify rows are
``rows.py``'s (a mutant's failing trace must also be rejected by the validator), hence
``verify=False`` here.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial

from model_checks.design import Scenario
from model_checks.designs.admission.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.admission.scenarios import CLEAN_OPTIONS, MUTANT_SCENARIOS, SETUPS, jobs_program
from reference.jobs.inmemory import InMemoryStore

_EXPLORE_FIELDS = ("strategy", "time_limit", "max_executions", "preemption_bound", "races")


def _options(name: str, options: object) -> dict[str, object]:
    return {k: v for k, v in asdict(options).items() if k in _EXPLORE_FIELDS}  # type: ignore[call-overload]


def _table() -> dict[str, Scenario]:
    table: dict[str, Scenario] = {}
    for name, setup in SETUPS.items():
        table[name] = Scenario(
            name,
            partial(jobs_program, InMemoryStore, setup),
            doc=f"{setup.workers} worker(s), {len(setup.jobs)} jobs; state invariants and the trace checked"
            " after every step",
            options=_options(name, CLEAN_OPTIONS[name]),
            verify=False,
        )
    for name, mutant in REFERENCE_MUTANTS.items():
        setup_name, options = MUTANT_SCENARIOS[name]
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}",
            partial(jobs_program, mutant.build(InMemoryStore), SETUPS[setup_name]),
            expect=mutant.expect,
            doc=mutant.doc,
            options=_options(name, options),
            verify=False,
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()
