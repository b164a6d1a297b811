"""The Akka mailbox's harness scenarios, for `lanecheck explore`.

Their `lanecheck verify` rows are ``trace.rows``: each mutant's failing trace must also
be rejected by the validator, so the rows need more than the harness's verdict
(``verify=False`` here).
"""

from __future__ import annotations

from functools import partial

from model_checks.design import Scenario
from model_checks.designs.akka_mailbox.reference_mutants import REFERENCE_MUTANTS, program
from spec.akka_mailbox import Constants

# The scenario of the akka-mailbox reference row: a suspend and a resume race two posts.
SUPERVISED = Constants(
    mailboxes=2, workers=1, throughput=1, script=((0, 0, 1),), supervise=((("suspend", 0), ("resume", 0)),)
)


def _table() -> dict[str, Scenario]:
    table = {
        "supervised": Scenario(
            "supervised",
            partial(program, SUPERVISED),
            expect="bounded",
            doc="two posts raced by a suspend and a resume",
            options={"preemption_bound": 2, "max_executions": 6_000, "races": True},
            verify=False,
        )
    }
    for name, m in REFERENCE_MUTANTS.items():
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}", partial(program, m.constants, m.build), expect=m.expect, doc=m.doc, verify=False
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()
