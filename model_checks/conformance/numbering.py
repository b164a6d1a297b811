"""Trace events numbered as they are made: the designs' generators of valid traces use one.

Every lanecheck trace numbers its events 1, 2, ... in log order (``seq``); a generator that writes
one event at a time numbers them here and reads how many it has written from ``seq``.
"""

from __future__ import annotations

from typing import Any


class Numbering:
    """Makes the events of one trace; ``seq`` is the last one's number (0 before the first)."""

    def __init__(self) -> None:
        self.seq = 0

    def event(self, thread: str, event: str, **fields: Any) -> dict[str, Any]:
        """The next event: ``thread`` did ``event``, with these fields of its own."""
        self.seq += 1
        return {"seq": self.seq, "thread": thread, "event": event, **fields}
