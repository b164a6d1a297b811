"""The words of a schema refusal, for a reader of JSON: values written as JSON (``true``, ``null``,
``"a"``, not Python's ``True``, ``None``, ``'a'``), each keyword's failure said plainly, and the
subschema's ``description``, where the schema gives one, said after it as the reason (a rule that
ties two fields together, such as a post with a lane never being ``invalid_argument``)."""

from __future__ import annotations

import json
from typing import Any

from model_checks.conformance.reader import clip

_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}


def _json(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, 80)


def _type_name(name: object) -> str:
    return _ARTICLE.get(str(name), f"a {name}")


def _either(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def words(error: Any) -> str:
    """One jsonschema ``ValidationError`` in words (without its path)."""
    keyword, want, got = error.validator, error.validator_value, error.instance
    if keyword == "type":
        names = want if isinstance(want, list) else [want]
        said = f"{_json(got)} is not {_either([_type_name(n) for n in names])}"
    elif keyword == "const":
        said = f"{_json(got)} where {_json(want)} was expected"
    elif keyword == "enum":
        said = f"{_json(got)} is not one of {_either([_json(v) for v in want])}"
    elif keyword == "not":
        said = f"{_json(got)} is not allowed here"
    elif keyword == "minimum":
        said = f"{_json(got)} is below the minimum {_json(want)}"
    elif keyword == "maximum":
        said = f"{_json(got)} is above the maximum {_json(want)}"
    elif keyword == "minLength":
        said = f"{_json(got)} is shorter than {want} character{'s' if want != 1 else ''}"
    elif keyword == "required":
        missing = [k for k in want if isinstance(got, dict) and k not in got]
        said = f"missing field {_either([_json(k) for k in missing])}" if missing else str(error.message)
    elif keyword == "additionalProperties" and isinstance(got, dict):
        named = error.schema.get("properties", {})
        extra = [k for k in got if k not in named]
        said = f"unknown field {_either([_json(k) for k in extra])}" if extra else str(error.message)
    else:
        said = str(error.message)
    schema = error.schema if isinstance(error.schema, dict) else {}
    reason = schema.get("description")
    return clip(f"{said} ({reason})" if isinstance(reason, str) else said, 400)
