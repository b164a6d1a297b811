"""The JSON Schema of the trace format (``trace-schema.json``), compiled once.

The schema is the written contract of a *well-formed* line. The validator
checks the header with it, and checks event lines by hand on the hot path
(``parse.check_event``), falling back to the schema only to word an error; a
test keeps the two in agreement.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from model_checks.conformance.reader import clip

SCHEMA_FILE = "trace-schema.json"


@cache
def schema() -> dict[str, Any]:
    """The schema document as a dict (do not mutate)."""
    text = resources.files(__package__ or "").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _validator(definition: str, lanes: int | None = None) -> Draft202012Validator:
    doc = copy.deepcopy(schema())
    if lanes is not None:
        doc["$defs"]["lane"]["maximum"] = lanes - 1
    root = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
    Draft202012Validator.check_schema(root)
    return Draft202012Validator(root)


@cache
def header_validator() -> Draft202012Validator:
    return _validator("header")


@cache
def event_validator(lanes: int) -> Draft202012Validator:
    """The event schema with ``lane`` bounded by the header's lane count."""
    return _validator("event", lanes)


def _path(error: Any) -> str:
    return clip("/".join(str(p) for p in error.absolute_path), 200) or "(the object)"


def header_problem(obj: object) -> str | None:
    """Why ``obj`` is not a trace header, or None."""
    error = best_match(header_validator().iter_errors(obj))
    if error is None:
        return None
    return f"not a lanecheck work-lane header: {_path(error)}: {clip(error.message)}"


def event_problem(obj: object, lanes: int) -> str | None:
    """Why ``obj`` is not a well-formed event line (schema wording), or None."""
    error = best_match(event_validator(lanes).iter_errors(obj))
    if error is None:
        return None
    return f"{_path(error)}: {clip(error.message)}"
