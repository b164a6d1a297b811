"""A Ray worker's partition that works ahead while it waits for the other workers' batches.

The layers are synchronous (a global barrier keeps the first violation a shortest one), and
their shares are uneven level by level even when the totals are not: owner fields keep most
successors with the worker that found them, so a level's states bunch on one worker
(``docs/scale-out.md``, Where the time goes). A worker that has expanded its share of level
``d`` then waits for the slowest one. Most of its level ``d + 1`` is already known by then (the
successors it owns itself), so it can do the costly part of expanding them: running the
actions, canonicalising and hashing the successors (``look_ahead``).

Nothing it finds that way is taken into the search yet: it does not know the rest of level
``d + 1`` (the other workers' batches, some of them with fewer context switches), and the
search may stop at level ``d + 1`` (a violation, a bound). When the driver asks for level
``d + 1``, ``expand`` first takes the successors generated ahead, state by state in frontier
order, exactly as the loop of ``Partition.expand`` would have (the same seen-set lookups,
parents, counts, invariant and deadlock checks, in the same order), then expands the rest of
the layer as usual. So the states, their numbering and every answer are those of a worker
that did not look ahead; only when the work was done differs. If the search stops instead, the
work ahead is dropped with the actor's check.
"""

from __future__ import annotations

import time
from typing import Any

from model_checks.explorer.partition import CHECK_EVERY, Found, Partition, Successors


class LookAheadPartition(Partition):
    """A partition whose next layer can be partly expanded before the current one is closed."""

    # A Ray worker's fingerprints stay in its process: a received state is hashed here.
    rehash_received = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert not self.keep_graph, "a Ray worker keeps no state graph"
        self.ahead: list[Successors] = []  # for states ``ahead_from``, ``ahead_from + 1``, ...
        self.ahead_from = 0
        self.ahead_failed = False  # a state of this layer raised when looked at ahead

    def look_ahead(self, start: int, seconds: float) -> bool:
        """Generate the successors of the states from ``start`` on (the next layer's, as known so
        far) for about ``seconds``; whether any known state is left to look at."""
        if self.ahead_from != start:  # a new layer: what was generated before has been taken
            self.ahead, self.ahead_from, self.ahead_failed = [], start, False
        if self.ahead_failed:
            return False
        successors = self.generator()
        states, ahead = self.states, self.ahead
        end = len(states)
        i = start + len(ahead)
        until = time.perf_counter() + seconds
        while i < end:
            try:
                ahead.append(successors(states[i]))
            except Exception:
                # A spec that raises here may never be asked to: the search can stop at this
                # layer (a violation, a bound) before the state is expanded. Stop looking ahead;
                # ``expand`` runs this state the usual way, and raises then if it is reached.
                self.ahead_failed = True
                return False
            i += 1
            if i % 64 == 0 and time.perf_counter() > until:
                break
        return i < end

    def expand(self, start: int, end: int, current_depth: int) -> tuple[list[Found], str | None]:
        """``Partition.expand``, taking first what ``look_ahead`` generated for this layer."""
        found: list[Found] = []
        taken = 0
        if self.ahead_from == start and self.ahead:
            taken = min(len(self.ahead), end - start)
            incomplete = self._take(start, start + taken, found, current_depth)
            self.ahead = []
            if incomplete is not None:
                return found, incomplete
        self.ahead_from = -1
        more, incomplete = super().expand(start + taken, end, current_depth)
        found.extend(more)
        return found, incomplete

    def _take(self, start: int, stop: int, found: list[Found], current_depth: int) -> str | None:
        """``Partition.expand`` over states ``start .. stop-1`` with their successors already
        generated (``ahead``): the same ``placer``, in the same order, so the same outcome."""
        place = self.placer(found)
        ahead, base = self.ahead, self.ahead_from
        incomplete: str | None = None
        transitions = 0
        for i in range(start, stop):
            transitions += place(i, ahead[i - base])
            if i % CHECK_EVERY == 0:
                incomplete = self.bound_reached(transitions, current_depth)
                if incomplete:
                    break
        self.transitions += transitions
        return incomplete
