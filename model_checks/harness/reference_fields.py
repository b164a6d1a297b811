"""The reference's deliberate GIL-atomic fields, declared for the race detector (``declared.py``).

Each is documented in docs/reference.md as an unlocked access the design relies on; the harness
makes every load and store of it a scheduling point. Named by string: declaring imports nothing.
"""

from __future__ import annotations

from model_checks.harness.declared import declare_atomic

REFERENCE_FIELDS: tuple[tuple[str, str, str], ...] = (
    (
        "reference.work_lane:WorkLane",
        "probing",
        "Dekker's protocol between a publishing producer and the lock-free drainer "
        "(docs/reference.md, 'Trace order against lock-free pops')",
    ),
    (
        "reference.schedule_gate:GateScheduler",
        "_stopping",
        "written under the state lock, read without a lock by a worker returning a permit; Dekker's "
        "pattern with Stop's quiescence check under the ready lock (permit count, then flag)",
    ),
    (
        "reference.tracing:RecordingTracer",
        "_raw",
        "emit appends without a lock: list.append is atomic under the GIL (reference/tracing.py)",
    ),
)


def declare_reference_fields() -> None:
    for cls, attribute, reason in REFERENCE_FIELDS:
        declare_atomic(cls, attribute, reason)


declare_reference_fields()
