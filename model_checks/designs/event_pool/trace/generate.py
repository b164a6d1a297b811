"""Valid event-pool traces of any length: a random sequential schedule of the pool.

One thread at a time acts, so log order is the order the steps took effect by construction.
The client ``main`` posts (picking a random idle thread, or none when every thread is busy),
signals the thread it picked (``SetEvent`` on an auto-reset event: a no-op when it is already
signalled), now and then cancels some listed works or posts something refused; a callback now
and then posts too. Pool threads wait, wake (their own event first, then stop, or a timeout),
take works until the list is empty, run them. After about ``n`` events a stop (drain or
discard) ends the run with ``stop_end`` ok, so every trace is complete.

For the benchmark (``trace_bench``), the tests (every trace must be allowed) and the fuzz tests
(single-event corruptions of these traces).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from model_checks.conformance.numbering import Numbering
from reference.event_pool import header as pool_header

Event = dict[str, Any]

INIT, WAITING, CHECK, HOLD, RUN, EMPTY, EXITED = range(7)


def header(threads: int) -> Event:
    return pool_header({"threads": threads})


def events(
    n: int,
    *,
    threads: int = 4,
    seed: int = 0,
    stop: str = "drain",
    backlog: int = 32,
    timeouts: float = 0.01,
    cancels: float = 0.01,
) -> Iterator[Event]:
    """About ``n`` events of a valid behaviour, then ``stop`` ("drain" or "discard") to the end.

    The client posts only while fewer than ``backlog`` works are listed; ``timeouts`` is the
    chance that a waiting thread picked to act times out, ``cancels`` that the client cancels."""
    rng = random.Random(seed)
    rand = rng.random
    names = [f"t{i}" for i in range(threads)]
    state = [INIT] * threads
    held = [-1] * threads
    signalled = [False] * threads  # each thread's auto-reset event
    owes: dict[int, int] = {}  # actor (-1: main, t: a callback of t) -> the thread it must signal
    idle = list(range(threads))  # the idle threads (swap-removed: a random one is picked)
    where = list(range(threads))  # a thread's place in ``idle``, -1 when busy
    listed: list[int] = []
    head = 0  # listed[head:] is the list
    posted = settled = exited = 0
    stop_set = False
    stopping = False
    ended = False
    numbering = Numbering()

    ev = numbering.event

    def busy(t: int) -> None:
        k = where[t]
        if k >= 0:
            last = idle.pop()
            if last != t:
                idle[k] = last
                where[last] = k
            where[t] = -1

    def post(actor: int, thread: str) -> Event:
        nonlocal posted
        if stopping:
            return ev(thread, "post", item=None, to=None, result="invalid_state")
        item = posted
        posted += 1
        listed.append(item)
        to = None
        if idle:
            t = idle[rng.randrange(len(idle))]
            busy(t)
            owes[actor] = t
            to = names[t]
        return ev(thread, "post", item=item, to=to, result="ok")

    def signal(actor: int, thread: str) -> Event:
        t = owes.pop(actor)
        signalled[t] = True  # SetEvent: a no-op on a signalled event (signals do not count up)
        return ev(thread, "signal", to=names[t])

    def client() -> Iterator[Event]:
        nonlocal head, settled, stopping, stop_set, ended
        if -1 in owes:
            yield signal(-1, "main")
            return
        if not stopping:
            if numbering.seq >= n:
                stopping = True
                yield ev("main", "stop_begin", mode=stop)
                if stop == "discard" and head < len(listed):
                    dropped = listed[head:]
                    del listed[head:]
                    settled += len(dropped)
                    yield ev("main", "discard", items=dropped)
                return
            r = rand()
            if r < cancels and head < len(listed):
                some = [i for i in listed[head:] if rand() < 0.5]
                keep = [i for i in listed[head:] if i not in set(some)]
                del listed[head:]
                listed.extend(keep)
                settled += len(some)
                yield ev("main", "cancel", items=some, work=f"w{rng.randrange(3)}")
            elif r < cancels + 0.005:
                yield ev("main", "post", item=None, to=None, result="invalid_argument")
            elif len(listed) - head < backlog:
                yield post(-1, "main")
            return
        if not stop_set and settled == posted and not owes:
            stop_set = True  # SetEvent(stop): not an event of its own
        if stop_set and exited == threads:
            ended = True
            yield ev("main", "stop_end", mode=stop, result="ok")

    def pool(t: int) -> Iterator[Event]:
        nonlocal head, settled, exited
        me = names[t]
        s = state[t]
        if t in owes:
            yield signal(t, me)
        elif s in (INIT, EMPTY):
            state[t] = WAITING
            yield ev(me, "wait")
        elif s == WAITING:
            # WaitForMultipleObjects({event, stop}, any): the lowest signalled index wins.
            if signalled[t]:
                signalled[t] = False
                state[t] = CHECK
                yield ev(me, "wake", result="event")
            elif stop_set:
                state[t] = EXITED
                exited += 1
                yield ev(me, "wake", result="stop")
            elif rand() < timeouts:
                state[t] = CHECK
                yield ev(me, "wake", result="timeout")
        elif s == CHECK:
            if head < len(listed):
                i = listed[head]
                head += 1
                if head > 4096 and 2 * head > len(listed):
                    del listed[:head]
                    head = 0
                busy(t)
                held[t] = i
                state[t] = HOLD
                yield ev(me, "take", item=i)
            else:
                if where[t] < 0:
                    where[t] = len(idle)
                    idle.append(t)
                state[t] = EMPTY
                yield ev(me, "take", item=None)
        elif s == HOLD:
            state[t] = RUN
            yield ev(me, "run", item=held[t])
        elif s == RUN:
            if rand() < 0.05 and len(listed) - head < backlog:
                yield post(t, me)  # a callback posts
            else:
                state[t] = CHECK
                settled += 1
                yield ev(me, "done", item=held[t], raised=rand() < 0.02)

    idle_picks = 0
    while not ended:
        actor = rng.randrange(threads + 1) - 1
        before = numbering.seq
        if actor < 0:
            yield from client()
        elif state[actor] != EXITED:
            yield from pool(actor)
        if numbering.seq > before:
            idle_picks = 0
        else:
            idle_picks += 1
            if idle_picks > 100_000:  # never expected: some step is always enabled
                raise RuntimeError(f"the generator is stuck after {numbering.seq} events")


def lines(n: int, **options: Any) -> Iterator[str]:
    """The trace as JSON Lines text (header first), without newlines."""
    yield json.dumps(header(options.get("threads", 4)))
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for event in events(n, **options):
        yield dumps(event)
