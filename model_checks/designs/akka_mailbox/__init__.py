"""The Akka/Pekko mailbox design: one atomic status word per mailbox, scheduled on a dispatcher."""

from __future__ import annotations

from model_checks.design import Design
from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.spec_mutants import MUTANTS
from spec.akka_mailbox import SPEC, ShowWord

DESIGN = Design(
    name="akka-mailbox",
    spec=SPEC,
    configs=CONFIGS,
    mutants=MUTANTS,
    summary="Akka/Pekko's Mailbox: a CAS status word, throughput-bounded runs, suspend and close",
    verify_rows=(("akka-mailbox", "model_checks.designs.akka_mailbox.trace:rows"),),
    trace_format="model_checks.designs.akka_mailbox.trace:FORMAT",
    scenarios="model_checks.designs.akka_mailbox.harness:SCENARIOS",
    reference_modules=("reference.akka_mailbox",),
    projections={
        "mailbox": lambda c, s: ShowWord(s.status[0]),
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "supervisor": lambda c, s: s.supervisor[c.supervisor_names()[0]][0],
    },
)
