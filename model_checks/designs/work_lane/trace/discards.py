"""What one ``discard`` event may list, as the contract's rule 7 reads: every accepted item is
invoked or listed in exactly one ``discard`` before ``stop_end``.

So a lane's queued items may be listed over several ``discard`` events, in any order, each item
once; an empty list drops nothing. Both engines judge a ``discard`` by ``take_out`` and word a
refusal by ``not_held``: the fast engine removes the listed items from its queue, the spec engine
takes the spec's one ``DiscardLane`` at the lane's first ``discard`` and keeps what is still to be
listed (``spec_engine``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from model_checks.designs.work_lane.trace.sim_state import show, show_items


def take_out(held: Iterable[Any], listed: Sequence[Any]) -> list[Any] | None:
    """``held`` without the items ``listed`` (each taken once, in any order), in ``held``'s order;
    None when ``listed`` names an item ``held`` does not hold (or more often than it does)."""
    # Items are strings or integers (the event check), so they hash; True is no item.
    wanted = Counter(listed)
    rest: list[Any] = []
    for item in held:
        if wanted[item] > 0:
            wanted[item] -= 1
        else:
            rest.append(item)
    return rest if not +wanted else None


def not_held(lane: int, listed: Sequence[Any], held: Sequence[Any]) -> str:
    """Why a ``discard`` of ``listed`` on ``lane`` is refused while the lane holds ``held``."""
    left = Counter(held)
    for item in listed:
        if left[item] > 0:
            left[item] -= 1
            continue
        again = item in held
        why = "is listed twice" if again else "is not queued there"
        return (
            f"discard of {show_items(listed)} on lane {lane}: item {show(item)} {why} (the lane holds "
            f"{show_items(held)}): a discard lists items still queued, each in exactly one discard"
        )
    raise ValueError("every listed item is held")  # callers ask only after take_out refused
