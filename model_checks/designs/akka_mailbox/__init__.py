"""The Akka/Pekko mailbox design: one atomic status word per mailbox, scheduled on a dispatcher."""

from __future__ import annotations

from typing import Any

from model_checks.design import Design


def _mailbox(c: Any, s: Any) -> Any:
    from spec.akka_mailbox import ShowWord  # with the spec, when a diagram is drawn

    return ShowWord(s.status[0])


DESIGN = Design(
    name="akka-mailbox",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.akka_mailbox:SPEC",
    configs="model_checks.designs.akka_mailbox.configs:CONFIGS",
    mutants="model_checks.designs.akka_mailbox.spec_mutants:MUTANTS",
    summary="Akka/Pekko's Mailbox: a CAS status word, throughput-bounded runs, suspend and close",
    verify_rows=(("akka-mailbox", "model_checks.designs.akka_mailbox.trace:rows"),),
    trace_format="model_checks.designs.akka_mailbox.trace:FORMAT",
    scenarios="model_checks.designs.akka_mailbox.harness:SCENARIOS",
    reference_modules=("reference.akka_mailbox", "reference.akka_actor"),
    benches={
        "akka-mailbox": (
            "model_checks.designs.akka_mailbox.bench",
            "the Akka-mailbox reference on the shared workload of `bench designs`, against a direct loop",
        )
    },
    projections={
        "mailbox": _mailbox,
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "supervisor": lambda c, s: s.supervisor[c.supervisor_names()[0]][0],
    },
)
