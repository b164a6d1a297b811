"""The shared reference tracing's deliberate GIL-atomic field, declared for the race detector.

The recording tracer belongs to every design; each design's own fields are declared in its
folder (``model_checks/designs/<design>/declared.py``). Named by string: declaring imports nothing.
"""

from __future__ import annotations

from model_checks.harness.declared import declare_atomic

REFERENCE_FIELDS: tuple[tuple[str, str, str], ...] = (
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
