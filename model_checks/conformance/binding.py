"""Helpers for binding a trace's threads to a spec's processes, shared by every design's engine."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from spec.language import Function

V = TypeVar("V")


def with_entry(f: Function[Any, Any], key: Hashable, value: Any) -> Function[Any, Any]:
    """``f`` with ``key`` added (or set), keys kept sorted so that equal states compare equal."""
    d = f.as_dict()
    d[key] = value
    keys = sorted(d, key=str)
    return Function(keys, [d[k] for k in keys])


def grown(f: Function[int, V], new: tuple[int, ...], value: V) -> Function[int, V]:
    """``f`` with the indices ``new`` added, each mapped to ``value``: an actor, mailbox or lane a
    trace names for the first time joins every state as it always was."""
    return Function((*f.domain(), *new), (*f.values(), *([value] * len(new))))
