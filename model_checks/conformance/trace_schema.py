"""A design's JSON Schema of its trace lines (its folder's ``trace-schema.json``), compiled once.

The schema is the written contract of a well-formed line: a validator checks the header with
it and words a bad event line with it, while its hot path checks event lines by hand (and a
test keeps the two in agreement).

jsonschema costs about a third of `lanecheck validate`'s start-up, so it is imported only when
a line needs its words: a header is first read by ``conforms``, which knows the few keywords
these schemas use and says "conforms" only when jsonschema would too; anything else (a problem,
a keyword it does not know, a float where an integer is asked) goes to jsonschema, which then
gives the same refusal and message as before.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from model_checks.conformance.reader import clip
from model_checks.conformance.schema_words import words

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]


@dataclass(frozen=True)
class TraceSchema:
    """The schema of one design's traces: ``$defs`` ``header`` and ``event``."""

    package: str  # the design's folder (as a package), which holds ``file``
    design: str  # its name, for the words of a refused header
    # A ``$defs`` entry that a header's count bounds (``worker``: below ``workers``), or none.
    index: str = ""
    file: str = "trace-schema.json"

    def document(self) -> dict[str, Any]:
        """The schema document (do not mutate); ``SchemaUnreadable`` when the design's own file
        cannot be read (a broken design, never the user's trace)."""
        try:
            return _document(self.package, self.file)
        except (OSError, ImportError, ValueError) as problem:
            raise SchemaUnreadable(self, problem) from problem

    def header_problem(self, obj: object) -> str | None:
        """Why ``obj`` is not a header of this design, or None."""
        doc = self.document()
        if conforms(doc["$defs"]["header"], obj, doc["$defs"]):
            return None
        from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

        error = best_match(_validator(self, "header", 0).iter_errors(obj))
        if error is None:
            return None
        return f"not a lanecheck {self.design} header: {_path(error)}: {words(error)}"

    def validator(self, definition: str, bound: int = 0) -> Any:
        """The compiled jsonschema validator of ``$defs`` ``definition`` (``index`` bounded by
        ``bound`` when it is not 0), for tests that compare a hand check with the schema."""
        return _validator(self, definition, bound)

    def event_problem(self, obj: object, bound: int = 0) -> str | None:
        """Why ``obj`` is not a well-formed event line (the schema's words), or None; ``bound``: the
        header's count that bounds ``index`` (0: unbounded)."""
        from jsonschema.exceptions import best_match

        error = best_match(_validator(self, "event", bound).iter_errors(obj))
        if error is None:
            return None
        path = _path(error)
        if path == _WHOLE and isinstance(obj, dict) and isinstance(obj.get("event"), str):
            path = clip(obj["event"], 80)  # the event is named: `post: missing field "item"`
        return f"{path}: {words(error)}"


class SchemaUnreadable(Exception):
    """A design's trace schema that cannot be read or parsed: the design is broken (its
    ``DesignFormat.schema_package`` / ``schema_file``), which callers must not word as "cannot
    read" the user's trace (an ``OSError`` would be)."""

    def __init__(self, schema: TraceSchema, problem: BaseException) -> None:
        why = getattr(problem, "strerror", None) or str(problem) or type(problem).__name__
        super().__init__(
            f"design {schema.design} is broken: cannot read its trace schema {_where(schema)}: {why}"
            f" (DesignFormat.schema_package {schema.package!r}, schema_file {schema.file!r})"
        )


def _where(schema: TraceSchema) -> str:
    try:
        return str(resources.files(schema.package).joinpath(schema.file))
    except (ImportError, TypeError, ValueError):  # no such package: its name is all there is
        return f"{schema.file} in package {schema.package!r}"


@cache
def _document(package: str, file: str) -> dict[str, Any]:
    text = resources.files(package).joinpath(file).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(schema: TraceSchema, definition: str, bound: int) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    doc = schema.document()
    if schema.index and bound:
        doc = copy.deepcopy(doc)
        doc["$defs"][schema.index]["maximum"] = bound - 1
    root = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
    Draft202012Validator.check_schema(root)
    return Draft202012Validator(root)


_WHOLE = "(the object)"


def _path(error: Any) -> str:
    return clip("/".join(str(p) for p in error.absolute_path), 200) or _WHOLE


# ------------------------------------------------------------------ the fast reading of a header


class _Unsure(Exception):
    """``conforms`` cannot tell without jsonschema."""


# Keywords that say nothing about validity.
_NOTES = frozenset({"description", "title", "$id", "$schema", "$comment", "examples", "default"})
_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "null": type(None),
}


def conforms(schema: object, obj: object, defs: dict[str, Any]) -> bool:
    """True only when ``obj`` is valid under ``schema`` (``$ref`` into ``defs``) as JSON Schema
    2020-12 says; False when it is not or when this reading is unsure (jsonschema then decides)."""
    try:
        return _valid(schema, obj, defs)
    except (_Unsure, RecursionError):
        return False


def _valid(schema: object, obj: object, defs: dict[str, Any]) -> bool:
    """Exactly jsonschema's answer for the keywords below; ``_Unsure`` for anything else."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise _Unsure
    for key, want in schema.items():
        if key in _NOTES:
            continue
        if key == "additionalProperties":  # the keys that none of ``properties`` names
            if "patternProperties" in schema:
                raise _Unsure
            named = schema.get("properties", {})
            if isinstance(obj, dict) and not all(
                _valid(want, v, defs) for k, v in obj.items() if k not in named
            ):
                return False
            continue
        check = _KEYWORDS.get(key)
        if check is None:
            raise _Unsure
        if not check(want, obj, defs):
            return False
    return True


def _is_type(name: object, obj: object) -> bool:
    if isinstance(obj, float):
        raise _Unsure  # 1.0 is an integer to JSON Schema: left to jsonschema
    if name == "boolean":
        return isinstance(obj, bool)
    if isinstance(obj, bool):
        return False
    if name in ("integer", "number"):
        return isinstance(obj, int)
    if not isinstance(name, str) or name not in _TYPES:
        raise _Unsure
    return isinstance(obj, _TYPES[name])


def _equal(a: object, b: object) -> bool:
    """JSON equality (a boolean is never a number), for the values ``const``/``enum`` take."""
    if isinstance(a, float) or isinstance(b, float):
        raise _Unsure
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_equal(v, b[k]) for k, v in a.items())
    if a is None or isinstance(a, (bool, int, str)):
        return a == b
    raise _Unsure


def _number(obj: object) -> bool:
    return isinstance(obj, (int, float)) and not isinstance(obj, bool)


def _type(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return any(_is_type(n, obj) for n in want) if isinstance(want, list) else _is_type(want, obj)


def _const(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return _equal(want, obj)


def _enum(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    if not isinstance(want, list):
        raise _Unsure
    return any(_equal(w, obj) for w in want)


def _minimum(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    if not _number(want):
        raise _Unsure
    return not _number(obj) or obj >= want


def _maximum(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    if not _number(want):
        raise _Unsure
    return not _number(obj) or obj <= want


def _min_length(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    if not isinstance(want, int):
        raise _Unsure
    return not isinstance(obj, str) or len(obj) >= want


def _required(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return not isinstance(obj, dict) or all(k in obj for k in want)


def _properties(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    if not isinstance(obj, dict):
        return True
    return all(_valid(sub, obj[k], defs) for k, sub in want.items() if k in obj)


def _items(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return not isinstance(obj, list) or all(_valid(want, item, defs) for item in obj)


def _ref(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    prefix = "#/$defs/"
    if not isinstance(want, str) or not want.startswith(prefix) or want[len(prefix) :] not in defs:
        raise _Unsure
    return _valid(defs[want[len(prefix) :]], obj, defs)


def _all_of(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return all([_valid(sub, obj, defs) for sub in want])  # each one read: an unsure one is unsure


def _any_of(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return any([_valid(sub, obj, defs) for sub in want])


def _one_of(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return [_valid(sub, obj, defs) for sub in want].count(True) == 1


def _not(want: Any, obj: object, defs: dict[str, Any]) -> bool:
    return not _valid(want, obj, defs)


# ``if``/``then``, ``patternProperties`` and the others are left to jsonschema: the header
# schemas do not use them.
_KEYWORDS: dict[str, Any] = {
    "type": _type,
    "const": _const,
    "enum": _enum,
    "minimum": _minimum,
    "maximum": _maximum,
    "minLength": _min_length,
    "required": _required,
    "properties": _properties,
    "items": _items,
    "$ref": _ref,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
}

__all__ = ["TraceSchema", "conforms"]
