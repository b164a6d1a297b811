"""The words of a schema refusal, for a reader of JSON: values written as JSON (``true``, ``null``,
``"a"``, not Python's ``True``, ``None``, ``'a'``), each keyword's failure said plainly, and the
subschema's ``description``, where the schema gives one, said after it as the reason (a rule that
ties two fields together, such as a post with a lane never being ``invalid_argument``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from model_checks.conformance.reader import clip

_ARTICLE = {
    "integer": "an integer",
    "object": "an object",
    "array": "an array",
    "null": "null",
    "boolean": "a boolean (true or false)",
}


def _json(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return clip(text, 80)


def _type_name(name: object) -> str:
    return _ARTICLE.get(str(name), f"a {name}")


def _got(value: object) -> str:
    """A refused value as JSON, saying so when it is a boolean (``true`` where a number was meant)."""
    return f"{_json(value)} (a boolean)" if isinstance(value, bool) else _json(value)


def _alternatives(error: Any) -> str | None:
    """What an ``anyOf``/``oneOf`` asked, when each alternative refused the value by its type or
    value (``lane``: an integer or null), with the first alternative's ``description``; None when
    one went further (best_match then names that refusal itself)."""
    wants: list[str] = []
    reason = None
    for sub in error.context or ():
        if sub.validator == "type":
            wants += [_type_name(n) for n in _names(sub.validator_value)]
        elif sub.validator in ("const", "enum"):
            wants += [
                _json(v)
                for v in _names(sub.validator_value if sub.validator == "enum" else [sub.validator_value])
            ]
        else:
            return None
        described = sub.schema.get("description") if isinstance(sub.schema, dict) else None
        reason = reason or (described if isinstance(described, str) else None)
    if not wants:
        return None
    said = f"is not {_either(list(dict.fromkeys(wants)))}"
    return f"{said} ({reason})" if reason else said


def _either(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _names(want: Any) -> list[Any]:
    return want if isinstance(want, list) else [want]


# A refusal of these keywords is the value as JSON, then what the schema's value for the keyword
# asked of it.
_ASKED: dict[str, Callable[[Any], str]] = {
    "type": lambda want: f"is not {_either([_type_name(n) for n in _names(want)])}",
    "const": lambda want: f"where {_json(want)} was expected",
    "enum": lambda want: f"is not one of {_either([_json(v) for v in want])}",
    "not": lambda want: "is not allowed here",
    "minimum": lambda want: f"is below the minimum {_json(want)}",
    "maximum": lambda want: f"is above the maximum {_json(want)}",
    "minLength": lambda want: f"is shorter than {want} character{'s' if want != 1 else ''}",
}


def _fields(kind: str, keys: list[Any], error: Any) -> str:
    # No key found (the instance is not an object, say): jsonschema's own message says more.
    return f"{kind} field {_either([_json(k) for k in keys])}" if keys else str(error.message)


def words(error: Any) -> str:
    """One jsonschema ``ValidationError`` in words (without its path)."""
    keyword, want, got = error.validator, error.validator_value, error.instance
    alternatives = _alternatives(error) if keyword in ("anyOf", "oneOf") else None
    if alternatives is not None:
        return clip(f"{_got(got)} {alternatives}", 400)
    if keyword in _ASKED:
        said = f"{_got(got) if keyword == 'type' else _json(got)} {_ASKED[keyword](want)}"
    elif keyword == "required":
        said = _fields("missing", [k for k in want if isinstance(got, dict) and k not in got], error)
    elif keyword == "additionalProperties" and isinstance(got, dict):
        named = error.schema.get("properties", {})
        said = _fields("unknown", [k for k in got if k not in named], error)
    else:
        said = str(error.message)
    schema = error.schema if isinstance(error.schema, dict) else {}
    reason = schema.get("description")
    return clip(f"{said} ({reason})" if isinstance(reason, str) else said, 400)
