"""The Schedule Gate design (the older PrivateServer scheduler): runnable permits + a CAS gate per actor."""

from __future__ import annotations

from model_checks.design import Design

DESIGN = Design(
    name="schedule-gate",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.schedule_gate:SPEC",
    configs="model_checks.designs.schedule_gate.configs:CONFIGS",
    mutants="model_checks.designs.schedule_gate.spec_mutants:MUTANTS",
    summary="PrivateServer's runnable permits and a lock-free Schedule Gate word per actor",
    verify_rows=(("harness", "model_checks.designs.schedule_gate.rows:rows"),),
    trace_format="model_checks.designs.schedule_gate.trace:FORMAT",
    scenarios="model_checks.designs.schedule_gate.harness:SCENARIOS",
    reference_modules=("reference.schedule_gate", "reference.gate_word", "reference.gate_config"),
    benches={
        "schedule-gate": (
            "model_checks.designs.schedule_gate.bench",
            "the Schedule Gate reference on the shared workload of `bench designs`, against a direct loop",
        )
    },
    projections={
        "gate": lambda c, s: s.gate[0].phase,
        "gate-word": lambda c, s: s.gate[0].show(),
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "permits": lambda c, s: s.free,
    },
)
