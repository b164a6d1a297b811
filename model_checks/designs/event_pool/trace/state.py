"""The pool's state as an event-pool trace shows it, and the checks every handler shares
(``model.Model`` steps it; docs/event-pool.md, "The trace").

Memory: per pool thread a few slots, per listed work one byte and one seq, and the works handed out
ahead of the oldest listed one (cancels of some works only). Whether a work was handed out needs no
history: works are handed out oldest first but for cancels, so ``next`` and ``ahead`` answer it.
How and when one was (the words of a repeat) is kept only for the ``KEPT`` to ``2 * KEPT - 1``
works just below ``next`` (forgotten ``KEPT`` at a time), so memory does not grow with the trace.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected

Event = dict[str, Any]
Handler = Callable[[Event], None]

# A pool thread's place in `wait wake (take (run done)?)*`.
INIT, WAITING, CHECK, HOLD, RUN, EMPTY, EXITED = range(7)
ASLEEP = frozenset({INIT, WAITING, EMPTY})  # waits, or is on its way to wait (idle or picked)
NEXT = {
    INIT: "wait (its first event)",
    WAITING: "wake (its wait is pending)",
    CHECK: "take (it must look at the list: after a wake or a done comes a take)",
    HOLD: "run of the work it took",
    RUN: "done of the work it runs",
    EMPTY: "wait (it found the list empty)",
    EXITED: "nothing (it exited at wake stop)",
}
# How a handed-out work left the list (``PoolState.fate``).
LISTED, TAKEN, CANCELLED, DISCARDED = 0, 1, 2, 3
FATE = {TAKEN: "taken", CANCELLED: "cancelled", DISCARDED: "discarded"}
SHOWN = 8  # works shown of a list in messages
# Handed-out works below ``next`` whose fate and seq are kept for messages; the older ones are
# forgotten in batches of as many (one slice deletion per ``KEPT`` works: amortised O(1) a work).
KEPT = 1024


def show_items(items: list[int]) -> str:
    more = f", … {len(items) - SHOWN:,} more" if len(items) > SHOWN else ""
    return "[" + ", ".join(map(str, items[:SHOWN])) + more + "]"


class PoolState:
    """The pool as the events so far show it (updated in place by the handlers of ``Model``)."""

    # Event name -> its handler, read once by the reader: changed in place, never rebound.
    handlers: dict[str, Handler]
    unguarded: dict[str, Handler]  # the handlers while no discard is owed

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.index = {f"t{i}": i for i in range(threads)}  # pool thread name -> its slot
        self.state = [INIT] * threads
        self.held = [-1] * threads  # the work taken (HOLD) or running (RUN)
        self.idle = [True] * threads
        self.idle_count = threads
        self.signals = [0] * threads  # signal to=t logged
        self.wakes = [0] * threads  # wake result=event logged
        self.last_wait = [0] * threads  # seq of the thread's last wait
        # The SetEvent of a ``signal`` comes before its poster's next event (docs/event-pool.md): made
        # with no ``wake event`` of t logged since the signal (nothing consumed it), it leaves t's
        # auto-reset event set until a wait of t returns event; a wait cannot time out on it.
        # ``setting``: poster -> (t, seq of its signal) until the poster's next event; ``set_for_wait``:
        # t's event is surely set for its next wait; ``set_if_timeout``: made while t waits (set after
        # that wait if it times out, else perhaps consumed by it).
        self.last_consume = [0] * threads  # seq of the thread's last ``wake event``
        self.setting: dict[str, tuple[int, int]] = {}
        self.set_for_wait = [False] * threads
        self.set_if_timeout = [False] * threads
        # SetEvents surely made on t's event while it was surely set (``set_for_wait`` and t not
        # waiting: only t's own wait resets it): they coalesced, so they wake no wait.
        self.coalesced = [0] * threads
        self.exited = 0
        self.owes: dict[str, tuple[int, int]] = {}  # thread -> (pool thread it must signal, seq of the post)
        self.posted = 0
        self.next = 0  # the oldest work not yet handed out (never in ``ahead``)
        self.ahead: set[int] = set()  # works above ``next`` already handed out (cancelled out of order)
        # Per accepted post from work ``base`` on: LISTED, TAKEN, CANCELLED, DISCARDED, and the seq
        # of its post, then of its hand-out. Works below ``base`` were all handed out (``base`` <= next).
        self.base = 0
        self.fate = bytearray()
        self.when = array("q")
        self.done = 0
        self.cancelled = 0
        self.discarded = 0
        self.stop_mode: str | None = None
        self.stop_seq = 0
        self.stopper = ""  # the thread that logged stop_begin
        self.discard_owed = False  # stop(discard) took a non-empty list out and has not logged it yet
        self.stopped = False  # stop_end ok: the run is over

    # ------------------------------------------------------------------ the list

    @property
    def listed(self) -> int:
        return self.posted - self.next - len(self.ahead)

    def listed_items(self, n: int = SHOWN + 1) -> list[int]:
        out: list[int] = []
        i = self.next
        while i < self.posted and len(out) < n:
            if i not in self.ahead:
                out.append(i)
            i += 1
        return out

    def _where(self, i: int) -> str:
        if i >= self.posted:
            if self.posted == 0:
                return "was never posted (no work was)"
            were = "only work 0 was" if self.posted == 1 else f"works 0 .. {self.posted - 1} were"
            return f"was never posted ({were})"
        if i < self.base:
            return (
                f"left the list earlier (taken, cancelled or discarded: how and when is kept only for "
                f"works {self.base:,} and later)"
            )
        code, when = self.fate[i - self.base], self.when[i - self.base]
        if code == LISTED:
            return f"is listed (posted at seq {when})"
        return f"was {FATE[code]} at seq {when}"

    def _hand_out(self, i: int, code: int, seq: int) -> None:
        """Work ``i`` (listed) leaves the list."""
        base = self.base
        self.fate[i - base] = code
        self.when[i - base] = seq
        if i == self.next:
            n = i + 1
            ahead = self.ahead
            while n in ahead:
                ahead.discard(n)
                n += 1
            self.next = n
            if n - base >= 2 * KEPT:
                self._forget(n - KEPT - base)
        else:
            self.ahead.add(i)

    def _forget(self, count: int) -> None:
        """Drop the fate and seq of the ``count`` oldest works kept (all handed out: below ``next``)."""
        del self.fate[:count]
        del self.when[:count]
        self.base += count

    def _hand_out_all(self, items: list[int], code: int, seq: int, how: str) -> None:
        """Works ``items`` (each listed, else rule 7 names it) leave the list."""
        for i in items:
            if i < self.next or i >= self.posted or i in self.ahead:
                raise Rejected(7, f"{how} names work {i}, which {self._where(i)}: only listed works can be")
            self._hand_out(i, code, seq)

    def _unsettled(self) -> int:
        return self.posted - self.done - self.cancelled - self.discarded

    def _unsettled_words(self) -> str:
        parts = []
        if self.listed:
            parts.append(f"listed {show_items(self.listed_items())}")
        for t in range(self.threads):
            if self.state[t] in (HOLD, RUN):
                parts.append(f"t{t} {'took' if self.state[t] == HOLD else 'runs'} {self.held[t]}")
            if len(parts) > 3:
                break
        return "; ".join(parts)

    # ------------------------------------------------------------------ who logs an event

    def _idle_names(self) -> list[str]:
        return [f"t{t}" for t in range(self.threads) if self.idle[t]][:SHOWN]

    def _pool(self, ev: Event) -> int:
        """The slot of the pool thread that logged ``ev`` (a pool thread's own event)."""
        thread = ev["thread"]
        t = self.index.get(thread)
        if t is None:
            raise Rejected(
                1,
                f"{ev['event']} is logged by {clip(repr(thread), 80)}, which is not a pool thread "
                f"(the pool's threads are t0 .. t{self.threads - 1})",
            )
        if self.owes:
            self._owing(ev)
        if self.setting:
            self._made(thread)
        return t

    def _made(self, poster: str) -> None:
        """``poster`` logs its next event: the SetEvent of the signal it logged last is made."""
        signalled = self.setting.pop(poster, None)
        if signalled is None:
            return
        t, seq = signalled
        if seq > self.last_consume[t]:
            if self.state[t] == WAITING:
                self.set_if_timeout[t] = True
            elif self.set_for_wait[t]:
                self.coalesced[t] += 1
            else:
                self.set_for_wait[t] = True

    def _owing(self, ev: Event) -> None:
        owed = self.owes.get(ev["thread"])
        if owed is not None:
            raise Rejected(
                5,
                f"{ev['thread']} logs {ev['event']}, but its post at seq {owed[1]} picked t{owed[0]}: "
                f"it signals t{owed[0]} before any other event of its own",
            )

    def _expect(self, ev: Event, t: int, state: int) -> None:
        if self.state[t] != state:
            self._out_of_order(ev, t)

    def _out_of_order(self, ev: Event, t: int) -> None:
        kind = ev["event"]
        rule = 8 if self.state[t] == EXITED else 2
        raise Rejected(rule, f"t{t} logs {kind}, but its next event can only be {NEXT[self.state[t]]}")

    def _client(self, ev: Event) -> None:
        """Checks of an event a client logs (post, signal, cancel, stop events)."""
        thread = ev["thread"]
        t = self.index.get(thread)
        if t is not None and (self.state[t] != RUN or ev["event"] not in ("post", "signal")):
            where = "inside a callback" if self.state[t] == RUN else "outside a callback"
            raise Rejected(
                1,
                f"pool thread {thread} logs {ev['event']} {where}: a pool thread posts and signals only from "
                "a callback, and its cancel or stop is refused (it would wait for itself)",
            )
        if self.owes and ev["event"] != "signal":
            self._owing(ev)
        if self.setting:
            self._made(thread)
