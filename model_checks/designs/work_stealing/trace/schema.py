"""The JSON Schema of the work-stealing trace format (``../trace-schema.json``), compiled once.

The schema is the written contract of a well-formed line: the validator checks the header
with it and words a bad event line with it; the hot path checks event lines by hand
(``fields.py``), and a test keeps the two in agreement.
"""

from __future__ import annotations

from model_checks.conformance.trace_schema import TraceSchema

# ``worker`` (and a victim) is below the header's ``workers``.
SCHEMA = TraceSchema("model_checks.designs.work_stealing", "work-stealing", index="worker")


def event_problem(obj: object, workers: int) -> str | None:
    """Why ``obj`` is not a well-formed event line (the schema's words), or None."""
    return SCHEMA.event_problem(obj, workers)
