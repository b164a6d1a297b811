"""Growing a streaming search (``search.TraceSearch``) as its trace reveals more: a process when a
thread first shows a role, units (actors, lanes, mailboxes) when an event first names them, and
the script entries the live states can no longer read, dropped so that memory stays bounded.

A design's state is a ``NamedTuple`` whose components are ``Function``s: what joins, joins each
state in the value every behaviour would give it, so the search goes on as if it had been there
from the start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from model_checks.conformance.binding import grown, with_entry
from model_checks.conformance.search import TraceSearch

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C", bound="DataclassInstance")  # a spec's frozen constants
S = TypeVar("S")


def add_process(search: TraceSearch, constants: Any, local: str, name: Hashable, start: Any) -> None:
    """Bind process ``name`` (the constants already list it): every state's ``local`` function
    (``producer``, ``worker``, ...) maps it to ``start``, where a process begins."""
    search.rebind(constants, lambda s: s._replace(**{local: with_entry(getattr(s, local), name, start)}))


def joined(s: Any, new: tuple[int, ...], start: Mapping[str, Any]) -> Any:
    """``s`` with the units ``new`` in each of its functions named in ``start``, mapped to its value there."""
    return s._replace(**{name: grown(getattr(s, name), new, value) for name, value in start.items()})


def add_units(search: TraceSearch, constants: C, count: str, index: int, start: Mapping[str, Any]) -> C:
    """Units up to ``index`` join: the constants' ``count`` grows to ``index + 1`` and every state
    holds the new units as ``start`` says (each function's value for a unit never named).
    Returns the new constants; nothing changes when ``index`` is below the count already."""
    old = getattr(constants, count)
    if index < old:
        return constants
    new = tuple(range(old, index + 1))
    grown_constants = dataclasses.replace(constants, **{count: index + 1})
    search.rebind(grown_constants, lambda s: joined(s, new, start))
    return grown_constants


def forget_read(script: dict[int, Any], states: Iterable[S], position: Callable[[S], int]) -> None:
    """Drop the entries of ``script`` (k -> the k-th step of one process) that no live state can
    read again: those before every state's ``position`` in it (a script of one entry is kept)."""
    if len(script) > 1:
        low = min(position(s) for s in states)
        for k in [k for k in script if k < low]:
            del script[k]


__all__ = ["add_process", "add_units", "forget_read", "joined"]
