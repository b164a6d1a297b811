"""Reading a spec's own source for reviewers: a function's text, a variable's trailing comment."""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

_FIELD = re.compile(
    r"^\s+(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<type>[^#=]+?)\s*(?:=[^#]*)?(?:#\s*(?P<comment>.*))?$"
)


def source_of(fn: Callable[..., Any] | type) -> str | None:
    """The definition's source text, dedented; ``None`` where Python cannot find it (built at run time)."""
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def field_comments(cls: type) -> dict[str, tuple[str, str]]:
    """``name -> (type text, comment)`` for each annotated field line of a class's source."""
    text = source_of(cls)
    if text is None:
        return {}
    found: dict[str, tuple[str, str]] = {}
    for line in text.splitlines()[1:]:
        match = _FIELD.match(line)
        if match and match["name"] not in found:
            found[match["name"]] = (match["type"].strip(), (match["comment"] or "").strip())
    return found


def domain_name(domain: Callable[..., Any]) -> str:
    """The name a parameter domain was declared under (``Workers``); a lambda has none of its own."""
    name = getattr(domain, "__name__", "")
    if name and name != "<lambda>":
        return name
    text = source_of(domain) or ""
    bound = re.match(r"\s*([A-Za-z_]\w*)\s*=\s*lambda", text)
    return bound[1] if bound else "process"
