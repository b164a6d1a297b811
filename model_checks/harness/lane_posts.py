"""The producers of a lane-style harness scenario: producer ``p`` posts its items ``(p, i)`` in
order, item ``i`` to lane ``(p + i) % lanes``, and records what each post returned (designs share
no code; their scenarios share this workload)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")
Item = tuple[int, int]  # (producer, index)


class Posts(Generic[R]):
    """What the producers' posts returned, per producer: each producer appends to its own lists
    (which exist before any thread starts), so recording adds no data race of its own."""

    def __init__(self, producers: int, ok: R) -> None:
        self.ok = ok  # the result of an accepted post
        self.accepted: list[list[tuple[Item, int]]] = [[] for _ in range(producers)]  # (item, lane)
        self.refused: list[list[tuple[Item, int, R]]] = [[] for _ in range(producers)]  # (item, lane, result)

    def record(self, p: int, item: Item, lane: int, result: R) -> None:
        """Producer ``p``'s post of ``item`` to ``lane`` returned ``result``."""
        if result == self.ok:
            self.accepted[p].append((item, lane))
        else:
            self.refused[p].append((item, lane, result))

    def all_accepted(self) -> list[tuple[Item, int]]:
        """Every accepted post, as (item, lane), producer by producer."""
        return [a for mine in self.accepted for a in mine]


def round_robin_producers(
    post: Callable[[int, Item], R], items: int, lanes: int, record: Callable[[int, Item, int, R], None]
) -> Callable[[int], Callable[[], None]]:
    """``producer(p)``, the body of producer ``p``'s thread (``lane_programs.produce_then_stop``):
    ``post(lane, item)`` for each of its items, then ``record(p, item, lane, result)`` (e.g.
    ``Posts.record``)."""

    def producer(p: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(items):
                lane = (p + i) % lanes
                item = (p, i)
                record(p, item, lane, post(lane, item))

        return run

    return producer


__all__ = ["Item", "Posts", "round_robin_producers"]
