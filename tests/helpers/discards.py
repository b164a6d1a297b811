"""An ``on_discard`` callback that is also the list of what it was given, for tests that account for
every accepted item (run, or reported discarded)."""

from __future__ import annotations

from typing import Any


class Discards(list[tuple[int, Any]]):
    """Pass as ``on_discard=``: each call appends ``(lane, item)`` (a gate's ``(actor, event)``), in
    call order, so the test compares it with ``failure.discarded`` or the items it expected."""

    def __call__(self, lane: int, item: Any) -> None:
        self.append((lane, item))
