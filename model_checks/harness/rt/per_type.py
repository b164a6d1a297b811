"""A decision made once per type (``_kind``, the state fingerprint's kind of a type;
``race_items.subscripted``, whether a subscript is an access of an item)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

Decision = TypeVar("Decision")


class PerType(dict[type, Decision]):
    """``decide(t)`` for each type ``t`` looked up, decided at its first lookup. A plain dict to
    readers that must not decide (C code reading it as a table: a type not in it is undecided);
    ``table[t]`` decides, and a known type costs a dict lookup only (``__missing__``)."""

    def __init__(self, decide: Callable[[type], Decision]) -> None:
        super().__init__()
        self._decide = decide

    def __missing__(self, t: type) -> Decision:
        found = self[t] = self._decide(t)
        return found
