"""The state an event-pool trace is judged against, one event at a time (log order is the order the
reference's steps took effect; docs/event-pool.md, "The trace").

What the trace shows exactly, because the reference logs it inside the list lock: the work list
(posts, takes, cancels, discards) and every thread's idle flag (a post that picks a thread, a take
of a work, a take that finds the list empty). What it shows only up to a window: ``signal`` is
logged just before ``SetEvent``, ``wait`` just before the wait and ``wake`` just after it returned,
so a wake is matched against the signals logged before it, and against their timing only where
the SetEvent's program order decides it (``state.PoolState``: made before the poster's next event).

``Model.step(ev)`` applies one well-formed event or raises ``Rejected`` with the rule it breaks
(``rules.RULES``); ``finish`` judges the end of a complete trace. The state and the checks the
handlers share are ``state.PoolState``'s, the stop events ``stop.StopEvents``'.
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.fast_format import Owed
from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import some_of
from model_checks.designs.event_pool.trace.state import (
    ASLEEP,
    CANCELLED,
    CHECK,
    EMPTY,
    EXITED,
    HOLD,
    INIT,
    LISTED,
    RUN,
    SHOWN,
    TAKEN,
    WAITING,
    Event,
    show_items,
)
from model_checks.designs.event_pool.trace.stop import StopEvents
from model_checks.designs.event_pool.trace.words import nth, times


class LocatedRejected(Rejected):
    """A rejection at the end of a complete trace that names the event the end leaves unanswered."""

    def __init__(self, rule: int, message: str, seq: int | None) -> None:
        super().__init__(rule, message)
        self.seq = seq


class Model(StopEvents):
    """The pool as the events so far show it, stepped by one handler per event."""

    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        self.handlers = {
            "post": self.post,
            "signal": self.signal,
            "wait": self.wait,
            "wake": self.wake,
            "take": self.take,
            "run": self.run,
            "done": self.done_,
            "cancel": self.cancel,
            "stop_begin": self.stop_begin,
            "discard": self.discard,
            "stop_end": self.stop_end,
        }
        self.unguarded = dict(self.handlers)

    def step(self, ev: Event) -> None:
        self.handlers[ev["event"]](ev)

    # ------------------------------------------------------------------ the client's events

    def post(self, ev: Event) -> None:
        self._client(ev)
        if ev["result"] != "ok":
            return  # refused: the work stays with the caller
        item, to = ev["item"], ev["to"]
        if self.stop_mode is not None:
            raise Rejected(
                3,
                f"post of work {item} is ok after stop_begin (seq {self.stop_seq}): stop refuses every post",
            )
        if item != self.posted:
            raise Rejected(
                3,
                f"post ok numbers its work {item}, but {self.posted} works were accepted before it: "
                f"this one is work {self.posted} (a work's index is its place in post order)",
            )
        if to is None:
            if self.idle_count:
                idle = some_of(self._idle_names(), self.idle_count)
                are = "is" if self.idle_count == 1 else "are"
                raise Rejected(
                    4,
                    f"post of work {item} picks no thread while {idle} {are} idle: the work waits for a"
                    " busy thread while an idle one sleeps (idle first)",
                )
        else:
            t = self.index.get(to)
            if t is None:
                raise Rejected(
                    1,
                    f"post of work {item} picks {clip(repr(to), 80)}, which is not a pool thread "
                    f"(t0 .. t{self.threads - 1})",
                )
            if not self.idle[t]:
                idle = some_of(self._idle_names(), self.idle_count)
                sleeps = "sleeps" if self.idle_count == 1 else "sleep"
                others = f" while {idle} {sleeps} idle" if self.idle_count else ""
                raise Rejected(
                    4,
                    f"post of work {item} picks t{t}, which is busy (not idle since it was picked or took "
                    f"a work){others}: a post signals only an idle thread",
                )
            self.idle[t] = False
            self.idle_count -= 1
            self.owes[ev["thread"]] = (t, ev["seq"])
        self.posted += 1
        self.fate.append(LISTED)
        self.when.append(ev["seq"])

    def signal(self, ev: Event) -> None:
        self._client(ev)
        to = ev["to"]
        owed = self.owes.pop(ev["thread"], None)
        t = self.index.get(to)
        if owed is None or t != owed[0]:
            picked = (
                f"its post at seq {owed[1]} picked t{owed[0]}" if owed else "no post of it picked a thread"
            )
            raise Rejected(5, f"{ev['thread']} signals {clip(repr(to), 80)}, but {picked}")
        self.signals[t] += 1
        self.setting[ev["thread"]] = (t, ev["seq"])

    def cancel(self, ev: Event) -> None:
        self._client(ev)
        items = ev["items"]
        self._hand_out_all(items, CANCELLED, ev["seq"], f"cancel of work object {clip(repr(ev['work']), 80)}")
        self.cancelled += len(items)

    # ------------------------------------------------------------------ a pool thread's events

    def wait(self, ev: Event) -> None:
        t = self._pool(ev)
        state = self.state[t]
        if state != INIT and state != EMPTY:
            self._out_of_order(ev, t)
        self.state[t] = WAITING
        self.last_wait[t] = ev["seq"]

    def wake(self, ev: Event) -> None:
        t = self._pool(ev)
        self._expect(ev, t, WAITING)
        result = ev["result"]
        was_set, timed_set = self.set_for_wait[t], self.set_if_timeout[t]
        self.set_for_wait[t] = self.set_if_timeout[t] = False
        if result == "event":
            self.last_consume[t] = ev["seq"]
            wakes = self.wakes[t] = self.wakes[t] + 1
            if wakes > self.signals[t] - self.coalesced[t]:
                raise Rejected(6, self._too_many_wakes(t, wakes))
            self.state[t] = CHECK
        elif result == "timeout":
            if was_set:
                raise Rejected(
                    6,
                    f"t{t} wakes with timeout, but its auto-reset event was set before its wait at seq "
                    f"{self.last_wait[t]}: a signal to t{t} that no wake event consumed had its SetEvent "
                    "made before that wait (a SetEvent comes before its poster's next event), so the "
                    "wait returns event at once (a lost signal)",
                )
            self.set_for_wait[t] = timed_set  # made during the wait, so after it timed out: still set
            self.state[t] = CHECK
        else:
            if self.stop_mode is None:
                raise Rejected(8, f"t{t} wakes with stop, but no stop began: only stop sets the stop event")
            unsettled = self._unsettled()
            if unsettled:
                raise Rejected(
                    8,
                    f"t{t} wakes with stop while {unsettled} accepted works neither ran to done nor were "
                    f"cancelled or discarded ({self._unsettled_words()}): stop sets the stop event only "
                    "after the last of them settled",
                )
            if was_set:
                raise Rejected(
                    8,
                    f"t{t} wakes with stop, but its own auto-reset event was set before its wait at seq "
                    f"{self.last_wait[t]} (a signal to t{t} that no wake event consumed, its SetEvent made "
                    "before its poster's next event): the wait returns the lowest signalled handle, its "
                    "own event (wake event), before it can see stop",
                )
            self.state[t] = EXITED
            self.exited += 1

    def _too_many_wakes(self, t: int, wakes: int) -> str:
        lost = self.coalesced[t]
        merged = (
            f", {lost} of them made while its event was still set (they coalesced: the wait after wakes once)"
            if lost
            else ""
        )
        return (
            f"t{t} wakes from its event for the {nth(wakes)} time, but it was signalled "
            f"{times(self.signals[t])}{merged}: an auto-reset event wakes one wait per SetEvent "
            "(a busy spin, or a wake nobody caused)"
        )

    def take(self, ev: Event) -> None:
        t = self._pool(ev)
        self._expect(ev, t, CHECK)
        i = ev["item"]
        if i is None:
            if self.listed:
                raise Rejected(
                    7,
                    f"t{t} finds the list empty while it holds works {show_items(self.listed_items())}: "
                    "they would wait for nobody",
                )
            if not self.idle[t]:
                self.idle[t] = True
                self.idle_count += 1
            self.state[t] = EMPTY
            return
        if i != self.next or i >= self.posted:
            if i >= self.posted:
                how = "takes"
            elif i < self.next or i in self.ahead:
                how = "repeats"
            else:
                how = "skips to"
            oldest = "the list is empty" if not self.listed else f"the oldest listed work is {self.next}"
            raise Rejected(7, f"t{t} {how} work {i}, which {self._where(i)}; {oldest}")
        self._hand_out(i, TAKEN, ev["seq"])
        if self.idle[t]:
            self.idle[t] = False
            self.idle_count -= 1
        self.state[t] = HOLD
        self.held[t] = i

    def run(self, ev: Event) -> None:
        t = self._pool(ev)
        if self.state[t] != HOLD or self.held[t] != ev["item"]:
            self._not_held(ev, t)
        self.state[t] = RUN

    def done_(self, ev: Event) -> None:
        t = self._pool(ev)
        if self.state[t] != RUN or self.held[t] != ev["item"]:
            self._not_held(ev, t)
        self.state[t] = CHECK
        self.held[t] = -1
        self.done += 1

    def _not_held(self, ev: Event, t: int) -> None:
        state, i = self.state[t], ev["item"]
        if state in (HOLD, RUN) and self.held[t] != i:
            what = "took" if state == HOLD else "runs"
            raise Rejected(2, f"t{t} logs {ev['event']} of work {i}, but it {what} work {self.held[t]}")
        self._out_of_order(ev, t)

    # ------------------------------------------------------------------ the end

    def finish(self, complete: bool) -> None:
        """The trace ended; with ``complete`` the run is over (after ``stop_end`` nothing is owed)."""
        if not complete or self.stopped:
            return
        if self.listed:
            # A thread blocked in its wait first: that wait is the event the end leaves unanswered.
            order = sorted(range(self.threads), key=lambda u: self.state[u] != WAITING)
            for t in order:
                if self.state[t] in ASLEEP:
                    state = self.state[t]
                    seq = self.last_wait[t] if state == WAITING else None
                    since = {
                        WAITING: f"waits since seq {seq}",
                        INIT: "has not waited yet",
                        EMPTY: "found the list empty and is on its way to wait",
                    }[state]
                    counts = f"signalled {times(self.signals[t])}, woken {times(self.wakes[t])}"
                    raise LocatedRejected(
                        9,
                        f"the run ends while t{t} {since} ({counts}) and works "
                        f"{show_items(self.listed_items())} are in the list: nobody will take them "
                        "(lost wakeup)",
                        seq,
                    )
        unsettled = self._unsettled()
        if unsettled:
            raise LocatedRejected(
                9,
                f"the run ends while {unsettled} accepted works neither ran to done nor were cancelled or "
                "discarded: " + self._unsettled_words(),
                None,
            )

    # ------------------------------------------------------------------ for people

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        """What a prefix leaves owed: as data and as phrases."""
        owed = Owed()
        if self.listed:
            owed.add(
                "listed",
                self.listed_items(SHOWN),
                f"{self.listed} works in the list {show_items(self.listed_items())}",
            )
        busy = {f"t{t}": self.held[t] for t in range(self.threads) if self.state[t] in (HOLD, RUN)}
        if busy:
            shown = dict(list(busy.items())[:SHOWN])
            owed.add("taken or running", shown, f"taken or running: {shown}")
        if self.owes:
            signals = {k: f"t{t}" for k, (t, _) in list(self.owes.items())[:SHOWN]}
            owed.add("signals owed", signals, f"signals owed: {signals}")
        owed.stop(self.stop_mode, self.stopped, self.stop_seq)
        return owed.pending()

    def describe(self) -> list[dict[str, Any]]:
        """The model's one state, for people (lists cut to their first entries)."""
        names = ("init", "waiting", "check", "holds", "runs", "found empty", "exited")
        threads = {}
        for t in range(min(self.threads, SHOWN)):
            s = self.state[t]
            threads[f"t{t}"] = (
                names[s]
                + (f" {self.held[t]}" if s in (HOLD, RUN) else "")
                + (", idle" if self.idle[t] else "")
            )
        return [
            {
                "posted": self.posted,
                "listed": self.listed_items(SHOWN),
                "threads": threads,
                "signals": {f"t{t}": self.signals[t] for t in range(min(self.threads, SHOWN))},
                "wakes": {f"t{t}": self.wakes[t] for t in range(min(self.threads, SHOWN))},
                "stop": self.stop_mode if not self.stopped else f"{self.stop_mode}, ended",
            }
        ]
