"""The work array of the spec states an event-pool trace search keeps: the spec numbers every work
ever posted, so the settled head is dropped and the live states renumbered (``spec_search``)."""

from __future__ import annotations

from typing import Any

from spec import event_pool as ep
from spec.language import Function


def settled_head(s: ep.Vars) -> int:
    """How many works at the head of ``s``'s array were handed out and settled."""
    i = 0
    while i < s.next and s.fate[i] is not None:
        i += 1
    return i


class Renumbering:
    """One renumbering of the live states: works ``0 .. k-1`` (settled) dropped, ``n`` slots kept.

    The states share their ghosts' values, so each distinct ghost is renumbered once."""

    def __init__(self, k: int, n: int) -> None:
        self.k, self.n = k, n
        self.keys = tuple(range(n))
        self.index = {i: i for i in range(n)}
        self.memo: dict[Function[int, Any], Function[int, Any]] = {}

    def window(self, f: Function[int, Any], empty: Any) -> Function[int, Any]:
        found = self.memo.get(f)
        if found is None:
            values = f.values()[self.k : self.k + self.n]
            padded = values + (empty,) * (self.n - len(values))
            found = self.memo[f] = Function(self.keys, padded, self.index)
        return found

    def state(self, s: ep.Vars) -> ep.Vars:
        k = self.k
        runs, fate = self.window(s.runs, 0), self.window(s.fate, None)
        if not k:
            return s._replace(runs=runs, fate=fate)
        thread = s.thread.with_values(
            me if me.item is None else me._replace(item=me.item - k) for me in s.thread.values()
        )
        return s._replace(
            posted=s.posted - k,
            next=s.next - k,
            runs=runs,
            fate=fate,
            handed=tuple(i - k for i in s.handed if i >= k),
            thread=thread,
        )
