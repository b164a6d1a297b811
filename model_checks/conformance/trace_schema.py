"""A design's JSON Schema of its trace lines (its folder's ``trace-schema.json``), compiled once.

The schema is the written contract of a well-formed line: a validator checks the header with
it and words a bad event line with it, while its hot path checks event lines by hand (and a
test keeps the two in agreement).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from model_checks.conformance.reader import clip


@dataclass(frozen=True)
class TraceSchema:
    """The schema of one design's traces: ``$defs`` ``header`` and ``event``."""

    package: str  # the design's folder (as a package), which holds ``file``
    design: str  # its name, for the words of a refused header
    # A ``$defs`` entry that a header's count bounds (``worker``: below ``workers``), or none.
    index: str = ""
    file: str = "trace-schema.json"

    def document(self) -> dict[str, Any]:
        """The schema document (do not mutate)."""
        return _document(self.package, self.file)

    def header_problem(self, obj: object) -> str | None:
        """Why ``obj`` is not a header of this design, or None."""
        error = best_match(_validator(self, "header", 0).iter_errors(obj))
        if error is None:
            return None
        return f"not a lanecheck {self.design} header: {_path(error)}: {clip(error.message)}"

    def event_problem(self, obj: object, bound: int = 0) -> str | None:
        """Why ``obj`` is not a well-formed event line (the schema's words), or None; ``bound``: the
        header's count that bounds ``index`` (0: unbounded)."""
        error = best_match(_validator(self, "event", bound).iter_errors(obj))
        if error is None:
            return None
        return f"{_path(error)}: {clip(error.message)}"


@cache
def _document(package: str, file: str) -> dict[str, Any]:
    text = resources.files(package).joinpath(file).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(schema: TraceSchema, definition: str, bound: int) -> Draft202012Validator:
    doc = schema.document()
    if schema.index and bound:
        doc = copy.deepcopy(doc)
        doc["$defs"][schema.index]["maximum"] = bound - 1
    root = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
    Draft202012Validator.check_schema(root)
    return Draft202012Validator(root)


def _path(error: Any) -> str:
    return clip("/".join(str(p) for p in error.absolute_path), 200) or "(the object)"


__all__ = ["TraceSchema"]
