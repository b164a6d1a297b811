"""The JSON Schema of the work-stealing trace format (``../trace-schema.json``), compiled once.

The schema is the written contract of a well-formed line: the validator checks the header
with it and words a bad event line with it; the hot path checks event lines by hand
(``fields.py``), and a test keeps the two in agreement.
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

PACKAGE = "model_checks.designs.work_stealing"
SCHEMA_FILE = "trace-schema.json"


@cache
def schema() -> dict[str, Any]:
    """The schema document (do not mutate)."""
    text = resources.files(PACKAGE).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(definition: str, workers: int = 0) -> Draft202012Validator:
    doc = copy.deepcopy(schema())
    if workers:
        doc["$defs"]["worker"]["maximum"] = workers - 1
    root = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
    Draft202012Validator.check_schema(root)
    return Draft202012Validator(root)


def _path(error: Any) -> str:
    return clip("/".join(str(p) for p in error.absolute_path), 200) or "(the object)"


def header_problem(obj: object) -> str | None:
    """Why ``obj`` is not a work-stealing header, or None."""
    error = best_match(_validator("header").iter_errors(obj))
    if error is None:
        return None
    return f"not a lanecheck work-stealing header: {_path(error)}: {clip(error.message)}"


def event_problem(obj: object, workers: int) -> str | None:
    """Why ``obj`` is not a well-formed event line (the schema's words), or None."""
    error = best_match(_validator("event", workers).iter_errors(obj))
    if error is None:
        return None
    return f"{_path(error)}: {clip(error.message)}"
