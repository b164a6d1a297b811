"""Helpers for binding a trace's threads to a spec's processes, shared by every design's engine."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from spec.language import Function


def with_entry(f: Function[Any, Any], key: Hashable, value: Any) -> Function[Any, Any]:
    """``f`` with ``key`` added (or set), keys kept sorted so that equal states compare equal."""
    d = f.as_dict()
    d[key] = value
    keys = sorted(d, key=str)
    return Function(keys, [d[k] for k in keys])
