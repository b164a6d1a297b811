"""The stop events of an event-pool trace: ``stop_begin``, ``discard``, ``stop_end`` (rule 8), and
the list lock a stop(discard) holds from its ``stop_begin`` until its ``discard``."""

from __future__ import annotations

from functools import partial
from itertools import pairwise

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import some_of
from model_checks.designs.event_pool.trace.state import (
    DISCARDED,
    EXITED,
    SHOWN,
    Event,
    Handler,
    PoolState,
    show_items,
)

# Events the reference logs only while it holds the list lock (a post refused for its argument is
# logged before it takes the lock).
LOCKED = frozenset({"take", "cancel", "stop_begin", "discard", "stop_end"})


def other_stopper(ev: Event, stopper: str, began: int | None = None) -> str:
    """The words of a ``stop_end`` logged by another thread than its ``stop_begin``: a Stop call
    returns on the thread that called it (the contract: "the Stop call that began returns"; the
    reference logs both in ``stop``). Both engines refuse it (rule 8)."""
    return (
        f"stop_end by {clip(repr(ev['thread']), 80)}, but the Stop in progress began on "
        f"{clip(repr(stopper), 80)}{f' (stop_begin at seq {began})' if began else ''}: a Stop call "
        "returns on the thread that called it"
    )


class StopEvents(PoolState):
    """The handlers of the stop events."""

    def stop_begin(self, ev: Event) -> None:
        self._client(ev)
        if self.stop_mode is not None:
            raise Rejected(
                8, f"a second stop_begin: stop began at seq {self.stop_seq} (a second stop is refused)"
            )
        self.stop_mode = ev["mode"]
        self.stop_seq = ev["seq"]
        self.stopper = ev["thread"]
        if self.stop_mode == "discard" and self.listed:
            self.discard_owed = True
            # Until its discard the stopper holds the list lock. The handlers are wrapped in place
            # (the reader holds this dict) rather than tested on every event: the hot path stays as is.
            guard = self._under_stop_lock
            self.handlers.update({k: partial(guard, h) for k, h in self.unguarded.items()})

    def _under_stop_lock(self, handler: Handler, ev: Event) -> None:
        """``handler(ev)`` while stop(discard) holds the list lock: nothing locked, nor the stopper's."""
        kind, thread = ev["event"], ev["thread"]
        if kind != "discard" and (
            thread == self.stopper
            or kind in LOCKED
            or (kind == "post" and ev["result"] != "invalid_argument")
        ):
            raise Rejected(
                8,
                f"{thread} logs {kind} after stop_begin(discard) (seq {self.stop_seq}) and before its "
                f"discard: {self.stopper} holds the list lock from its stop_begin until it logged the "
                f"discard of the whole list {show_items(self.listed_items())}",
            )
        handler(ev)

    def discard(self, ev: Event) -> None:
        self._client(ev)
        items = ev["items"]
        if self.stop_mode != "discard":
            began = f"stop({self.stop_mode}) began" if self.stop_mode else "no stop began"
            raise Rejected(
                8, f"discard of works {show_items(items)}, but {began}: only stop(discard) drops works"
            )
        if ev["thread"] != self.stopper:
            raise Rejected(
                8,
                f"discard is logged by {clip(repr(ev['thread']), 80)}, but stop_begin(discard) (seq "
                f"{self.stop_seq}) by {clip(repr(self.stopper), 80)}: the stopper discards, under the "
                "lock of its stop_begin",
            )
        whole = self.listed_items()
        self._hand_out_all(items, DISCARDED, ev["seq"], "discard")
        self.discarded += len(items)
        if not self.discard_owed:
            raise Rejected(
                8,
                f"discard of works {show_items(items)}, but stop(discard) (seq {self.stop_seq}) "
                "found the list empty or logged its discard already: it logs one discard, of a "
                "non-empty list, right after its stop_begin",
            )
        if self.listed or any(a > b for a, b in pairwise(items)):
            raise Rejected(
                8,
                f"discard of works {show_items(items)}, but stop(discard) (seq {self.stop_seq}) took "
                f"the whole list out under its lock, in list order: works {show_items(whole)}",
            )
        self.discard_owed = False
        self.handlers.update(self.unguarded)

    def stop_end(self, ev: Event) -> None:
        self._client(ev)
        if self.stop_mode is None or self.stopped:
            raise Rejected(
                8, "stop_end with " + ("no stop_begin" if self.stop_mode is None else "stop already ended")
            )
        if ev["thread"] != self.stopper:
            raise Rejected(8, other_stopper(ev, self.stopper, self.stop_seq))
        if ev["mode"] != self.stop_mode:
            raise Rejected(
                8,
                f"stop_end reports mode {ev['mode']}, "
                f"but its stop_begin (seq {self.stop_seq}) was {self.stop_mode}",
            )
        if ev["result"] != "ok":
            raise Rejected(
                8,
                "stop_end reports the pool failed: its own code raised, and no behaviour of the spec "
                "fails (the works it dropped are reported, but the trace left the spec before)",
            )
        if self.exited < self.threads:
            count = self.threads - self.exited
            left = [f"t{t}" for t in range(self.threads) if self.state[t] != EXITED][:SHOWN]
            raise Rejected(
                8,
                f"stop_end while {some_of(left, count)} {'has' if count == 1 else 'have'} not exited "
                "(no wake stop): stop returns after joining every pool thread",
            )
        # Every work settled: a pool thread exits only at wake stop, which rule 8 holds to that.
        self.stopped = True
