"""The JSON Schema of the trace format (``trace-schema.json``), compiled on first need.

The schema is the written contract of a *well-formed* line. The validator
checks the header with it (a fast reading first, jsonschema only to decide or
word a refusal: ``conformance.trace_schema``), and checks event lines by hand on
the hot path (``parse.check_event``), falling back to the schema only to word an
error; a test keeps the two in agreement.
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.trace_schema import TraceSchema

SCHEMA = TraceSchema("model_checks.designs.work_lane.trace", "work-lane", index="lane")


def header_problem(obj: object) -> str | None:
    """Why ``obj`` is not a trace header, or None."""
    return SCHEMA.header_problem(obj)


def event_problem(obj: object, lanes: int) -> str | None:
    """Why ``obj`` is not a well-formed event line (schema wording), or None."""
    return SCHEMA.event_problem(obj, lanes)


def event_validator(lanes: int) -> Any:
    """The event schema with ``lane`` bounded by the header's lane count."""
    return SCHEMA.validator("event", lanes)
