"""Rule 4's "nothing duplicated" for item ids: the contract makes ``item`` unique per trace.

Both engines match items by position (per-lane FIFO) and the spec treats an item as an opaque
value, so uniqueness is a rule of the trace format, checked here once for both engines: the
drivers around them (``validate._work_lane``, ``spec_format.SpecChecker``) call ``ItemIds.see``
before the engine steps, as they check owed submissions, so every engine says the same.

An id is *in flight* from its accepted ``post`` (``result: "ok"``) until its ``invoke`` or the
``discard`` that lists it. A second accepted post of an id in flight is refused, naming the first.
A post refused (``capacity_exceeded``, ``invalid_state``, ``invalid_argument``) may be retried
with its id: it was never accepted.
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_lane.trace.parse import Event
from model_checks.designs.work_lane.trace.sim_state import show

# The events that change which ids are in flight.
ITEM_EVENTS = frozenset({"post", "invoke", "discard"})


class ItemIds:
    """The ids of the items accepted and not yet invoked or discarded (the live state only)."""

    __slots__ = ("live",)

    def __init__(self) -> None:
        self.live: dict[Any, tuple[int, int]] = {}  # item -> (seq, lane) of the post that accepted it

    def see(self, ev: Event) -> None:
        """Account for ``ev`` (a post, invoke or discard); ``Rejected`` (rule 4) for an id reused."""
        kind = ev["event"]
        if kind == "post":
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
    item = show(ev["item"])
    return (
        f"post of item {item} to lane {ev['lane']} is ok, but item {item} was already accepted "
        f"(seq {seq}, lane {lane}) and has not been invoked or discarded yet: an item id is unique "
        "per trace, so one id cannot be in flight twice"
    )
