"""The Schedule Gate design (the older PrivateServer scheduler): runnable permits + a CAS gate per actor."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "schedule-gate",
    summary="PrivateServer's runnable permits and a lock-free Schedule Gate word per actor",
    verify_rows=(("harness", ".rows:rows"),),
    reference_modules=(
        "reference.schedule_gate",
        "reference.gate_permits",
        "reference.gate_word",
        "reference.gate_config",
    ),
    benches={
        "schedule-gate": (
            ".bench",
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
