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
was never accepted.
"""

from __future__ import annotations

import json
from typing import Any

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected

Event = dict[str, Any]

# The events that change which ids are in flight: those that may accept an item, then the others.
ACCEPTING = frozenset({"post", "push"})
ITEM_EVENTS = ACCEPTING | {"invoke", "discard", "reset"}


class ItemIds:
    """The ids of the items accepted and not yet invoked or discarded (the live state only)."""

    __slots__ = ("live",)

    def __init__(self) -> None:
        self.live: dict[Any, tuple[int, int]] = {}  # item -> (seq, lane) of the post that accepted it

    def see(self, ev: Event) -> None:
        """Account for ``ev`` (one of ``ITEM_EVENTS``); ``Rejected`` (rule 4) for an id reused."""
        kind = ev["event"]
        if kind in ACCEPTING:
            if ev["result"] != "ok":
                return
            item = ev["item"]
            first = self.live.get(item)
            if first is not None:
                raise Rejected(4, _reused(ev, *first))
            self.live[item] = (ev["seq"], ev["lane"])
        elif kind == "invoke":
            self.live.pop(ev["item"], None)
        else:
            for item in ev["items"]:
                self.live.pop(item, None)


def _reused(ev: Event, seq: int, lane: int) -> str:
    item = clip(json.dumps(ev["item"], ensure_ascii=False), 200)
    return (
        f"{ev['event']} of item {item} to lane {ev['lane']} is ok, but item {item} was already accepted "
        f"(seq {seq}, lane {lane}) and has not been invoked or discarded yet: an item id is unique "
        "per trace, so one id cannot be in flight twice"
    )
