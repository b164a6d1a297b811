"""Rule 4's "nothing duplicated" for item ids in the lane designs' traces: ``item`` is unique per
trace (the contract, ``shared/design/trace-format.md``; docs/trace-format.md).

The engines match items by position (per-lane FIFO) and the specs treat an item as an opaque
value, so uniqueness is a rule of the trace format, checked here once for every engine: each
design's driver around its engines calls ``ItemIds.see`` before the engine steps, so every engine
says the same.

An id is *in flight* from the event that accepted it (a version-1 ``post``, a version-2 ``push``,
with ``result: "ok"``) until its ``invoke`` or the ``discard``/``reset`` that lists it. A second
acceptance of an id in flight is refused, naming the first. A refused post or push
(``capacity_exceeded``, ``invalid_state``, ``invalid_argument``) may be retried with its id: it
was never accepted. Another design gives its own events (``ItemEvents``: the akka mailbox's
``send``, ``process`` and ``dead_letter``, in its folder; an outside review of the validators
found two sends of one id in flight, processed twice, allowed by both engines).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected

Event = dict[str, Any]


@dataclass(frozen=True)
class ItemEvents:
    """A design's events that accept an item (with ``result: "ok"``), that end it one by one
    (``item``) and all at once (``items``), the field naming where it went, and the words for
    its end."""

    accepting: frozenset[str]
    used: frozenset[str]
    dropped: frozenset[str]
    unit: str
    ended: str

    @property
    def all(self) -> frozenset[str]:
        """The events that change which ids are in flight."""
        return self.accepting | self.used | self.dropped


LANE = ItemEvents(
    frozenset({"post", "push"}),
    frozenset({"invoke"}),
    frozenset({"discard", "reset"}),
    "lane",
    "invoked or discarded",
)
# The lane designs' events that may accept an item, and all that change which ids are in flight.
ACCEPTING = LANE.accepting
ITEM_EVENTS = LANE.all


class ItemIds:
    """The ids of the items accepted and not yet ended (invoked or discarded; the live state only)."""

    __slots__ = ("events", "live")

    def __init__(self, events: ItemEvents = LANE) -> None:
        # item -> (seq, unit) of the event that accepted it (seq: None where a caller numbers none)
        self.live: dict[Any, tuple[int | None, int]] = {}
        self.events = events

    def see(self, ev: Event) -> None:
        """Account for ``ev`` (one of ``events.all``); ``Rejected`` (rule 4) for an id reused."""
        kind = ev["event"]
        events = self.events
        if kind in events.accepting:
            if ev["result"] != "ok":
                return
            item = ev["item"]
            first = self.live.get(item)
            if first is not None:
                raise Rejected(4, _reused(ev, events, *first))
            self.live[item] = (ev.get("seq"), ev[events.unit])
        elif kind in events.used:
            self.live.pop(ev["item"], None)
        else:
            for item in ev["items"]:
                self.live.pop(item, None)


def _reused(ev: Event, events: ItemEvents, seq: int | None, unit: int) -> str:
    item = clip(json.dumps(ev["item"], ensure_ascii=False), 200)
    where = events.unit
    first = f"{where} {unit}" if seq is None else f"seq {seq}, {where} {unit}"
    return (
        f"{ev['event']} of item {item} to {where} {ev[where]} is ok, but item {item} was already accepted "
        f"({first}) and has not been {events.ended} yet: an item id is unique "
        "per trace, so one id cannot be in flight twice"
    )
