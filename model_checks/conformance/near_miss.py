"""What the search says when no behaviour takes an event: the states it held, and the steps of
the event's processes that log the event's name with other field values (near misses)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from model_checks.conformance.action_tables import Labelled
from spec.language import Emitted

State = Any
_MISSING = object()


@dataclass(frozen=True)
class Miss:
    """A near miss: from ``state``, ``action`` of ``process`` logs this event with other field values."""

    state: State
    action: str
    process: Hashable
    fields: Mapping[str, Any]  # what the spec's step would log
    differing: tuple[str, ...]  # the fields whose values differ from the event's


class NoMatch(Exception):
    """No behaviour of the spec takes this event from any of the current states."""

    def __init__(self, states: list[State], misses: list[Miss]) -> None:
        super().__init__("no behaviour of the spec takes this event")
        self.states = states
        self.misses = misses


def near_misses(
    constants: Any,
    states: Iterable[State],
    per: Mapping[Hashable, list[Labelled]],
    ev: Mapping[str, Any],
    processes: Iterable[Hashable],
    optional: frozenset[str],
) -> list[Miss]:
    """The steps of ``processes`` (``per``: their actions that log the event's name) from each of
    ``states``, with the fields they would log and those that differ from ``ev``'s."""
    found: list[Miss] = []
    procs = tuple(processes)
    for s in sorted(states, key=repr):
        for p in procs:
            for name, fn, args in per.get(p, ()):
                r = fn(constants, s, *args)
                if type(r) is not Emitted:
                    continue
                differing = tuple(
                    k
                    for k, v in r.fields.items()
                    if ev.get(k, _MISSING) != v and not (k not in ev and k in optional)
                )
                found.append(Miss(s, name, p, dict(r.fields), differing))
    return found
