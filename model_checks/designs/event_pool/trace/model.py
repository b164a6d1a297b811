"""The state an event-pool trace is judged against, one event at a time (log order is the order the
reference's steps took effect; docs/event-pool.md, "The trace").

What the trace shows exactly, because the reference logs it inside the list lock: the work list
(posts, takes, cancels, discards) and every thread's idle flag (a post that picks a thread, a take
of a work, a take that finds the list empty). What it shows only up to a window: ``signal`` is
logged just before ``SetEvent``, ``wait`` just before the wait and ``wake`` just after it returned,
so a wake is matched against the signals logged before it, never against their timing.

``Model.step(ev)`` applies one well-formed event or raises ``Rejected`` with the rule it breaks
(``rules.RULES``); ``finish`` judges the end of a complete trace. Memory: per pool thread a few
slots, per accepted post one byte and one seq (for the words of a repeat), and the works handed
out ahead of the oldest listed one (cancels of some works only).
"""

from __future__ import annotations

from array import array
from typing import Any

from model_checks.conformance.fast_format import Owed
from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.designs.event_pool.trace.words import nth, times

Event = dict[str, Any]

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
# How a handed-out work left the list (``Model.fate``).
LISTED, TAKEN, CANCELLED, DISCARDED = 0, 1, 2, 3
FATE = {TAKEN: "taken", CANCELLED: "cancelled", DISCARDED: "discarded"}
SHOWN = 8  # works shown of a list in messages


class LocatedRejected(Rejected):
    """A rejection at the end of a complete trace that names the event the end leaves unanswered."""

    def __init__(self, rule: int, message: str, seq: int | None) -> None:
        super().__init__(rule, message)
        self.seq = seq


def show_items(items: list[int]) -> str:
    more = f", … {len(items) - SHOWN:,} more" if len(items) > SHOWN else ""
    return "[" + ", ".join(map(str, items[:SHOWN])) + more + "]"


class Model:
    """The pool as the events so far show it (updated in place)."""

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
        self.exited = 0
        self.owes: dict[str, tuple[int, int]] = {}  # thread -> (pool thread it must signal, seq of the post)
        self.posted = 0
        self.next = 0  # the oldest work not yet handed out (never in ``ahead``)
        self.ahead: set[int] = set()  # works above ``next`` already handed out (cancelled out of order)
        self.fate = bytearray()  # per accepted post: LISTED, TAKEN, CANCELLED, DISCARDED
        self.when = array("q")  # per accepted post: seq of its post, then of its hand-out
        self.done = 0
        self.cancelled = 0
        self.discarded = 0
        self.stop_mode: str | None = None
        self.stop_seq = 0
        self.stopped = False  # stop_end ok: the run is over
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

    def step(self, ev: Event) -> None:
        self.handlers[ev["event"]](ev)

    # ------------------------------------------------------------------ helpers

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
        return t

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

    def _where(self, i: int) -> str:
        if i >= self.posted:
            if self.posted == 0:
                return "was never posted (no work was)"
            were = "only work 0 was" if self.posted == 1 else f"works 0 .. {self.posted - 1} were"
            return f"was never posted ({were})"
        code = self.fate[i]
        if code == LISTED:
            return f"is listed (posted at seq {self.when[i]})"
        return f"was {FATE[code]} at seq {self.when[i]}"

    def _hand_out(self, i: int, code: int, seq: int) -> None:
        """Work ``i`` (listed) leaves the list."""
        self.fate[i] = code
        self.when[i] = seq
        if i == self.next:
            n = i + 1
            ahead = self.ahead
            while n in ahead:
                ahead.discard(n)
                n += 1
            self.next = n
        else:
            self.ahead.add(i)

    def _listed_or_reject(self, i: int, how: str) -> None:
        if i < self.next or i >= self.posted or i in self.ahead:
            raise Rejected(7, f"{how} names work {i}, which {self._where(i)}: only listed works can be")

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
                idle = [f"t{t}" for t in range(self.threads) if self.idle[t]][:SHOWN]
                raise Rejected(
                    4,
                    f"post of work {item} picks no thread while {', '.join(idle)} "
                    f"{'is' if len(idle) == 1 else 'are'} idle: the work waits for a busy thread while an "
                    "idle one sleeps (idle first)",
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
                idle = [f"t{u}" for u in range(self.threads) if self.idle[u]][:SHOWN]
                others = (
                    f" while {', '.join(idle)} {'sleeps' if len(idle) == 1 else 'sleep'} idle" if idle else ""
                )
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

    def cancel(self, ev: Event) -> None:
        self._client(ev)
        seq = ev["seq"]
        items = ev["items"]
        for i in items:
            self._listed_or_reject(i, f"cancel of work object {clip(repr(ev['work']), 80)}")
            self._hand_out(i, CANCELLED, seq)
        self.cancelled += len(items)

    def stop_begin(self, ev: Event) -> None:
        self._client(ev)
        if self.stop_mode is not None:
            raise Rejected(
                8, f"a second stop_begin: stop began at seq {self.stop_seq} (a second stop is refused)"
            )
        self.stop_mode = ev["mode"]
        self.stop_seq = ev["seq"]

    def discard(self, ev: Event) -> None:
        self._client(ev)
        items = ev["items"]
        if self.stop_mode != "discard":
            began = f"stop({self.stop_mode}) began" if self.stop_mode else "no stop began"
            raise Rejected(
                8, f"discard of works {show_items(items)}, but {began}: only stop(discard) drops works"
            )
        seq = ev["seq"]
        for i in items:
            self._listed_or_reject(i, "discard")
            self._hand_out(i, DISCARDED, seq)
        self.discarded += len(items)

    def stop_end(self, ev: Event) -> None:
        self._client(ev)
        if self.stop_mode is None or self.stopped:
            raise Rejected(
                8, "stop_end with " + ("no stop_begin" if self.stop_mode is None else "stop already ended")
            )
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
            left = [f"t{t}" for t in range(self.threads) if self.state[t] != EXITED][:SHOWN]
            raise Rejected(
                8,
                f"stop_end while {', '.join(left)} {'has' if len(left) == 1 else 'have'} not exited "
                "(no wake stop): stop returns after joining every pool thread",
            )
        self._all_settled("stop returns ok", None)
        self.stopped = True

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
        if result == "event":
            wakes = self.wakes[t] = self.wakes[t] + 1
            if wakes > self.signals[t]:
                raise Rejected(
                    6,
                    f"t{t} wakes from its event for the {nth(wakes)} time, but it was signalled "
                    f"{times(self.signals[t])}: an auto-reset event wakes one wait per SetEvent "
                    "(a busy spin, or a wake nobody caused)",
                )
            self.state[t] = CHECK
        elif result == "timeout":
            self.state[t] = CHECK
        else:
            if self.stop_mode is None:
                raise Rejected(8, f"t{t} wakes with stop, but no stop began: only stop sets the stop event")
            self.state[t] = EXITED
            self.exited += 1

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
        if self.stop_mode == "discard":
            raise Rejected(
                8,
                f"t{t} takes work {i} after stop_begin(discard) (seq {self.stop_seq}): that stop takes every "
                "listed work out under the same lock",
            )
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
        self._all_settled("the run ends", None)

    def _all_settled(self, when: str, seq: int | None) -> None:
        open_ = self.posted - self.done - self.cancelled - self.discarded
        if not open_:
            return
        parts = []
        if self.listed:
            parts.append(f"listed {show_items(self.listed_items())}")
        for t in range(self.threads):
            if self.state[t] in (HOLD, RUN):
                parts.append(f"t{t} {'took' if self.state[t] == HOLD else 'runs'} {self.held[t]}")
            if len(parts) > 3:
                break
        raise LocatedRejected(
            9,
            f"{when} while {open_} accepted works neither ran to done nor were cancelled or discarded: "
            + "; ".join(parts),
            seq,
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
