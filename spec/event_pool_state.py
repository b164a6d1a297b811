"""MODULE EventPoolState — the constants, variables and state operators of ``spec.event_pool``.

``spec.event_pool`` EXTENDS this module with the initial state, the actions, the
invariants and fairness; everything here is a pure function of the constants and one state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spec.language import Function
from spec.win32_events import WAIT_TIMEOUT, Events, Wait, signal

# ============================================================================ CONSTANTS


@dataclass(frozen=True)
class Constants:
    threads: int
    submits: int  # SubmitThreadpoolWork calls on the one work object
    cancel: bool = False  # WaitForThreadpoolWorkCallbacks(work, fCancelPendingCallbacks=cancel)
    timeouts: bool = False  # pool threads wait with a finite timeout
    raises: tuple[int, ...] = ()  # the submissions whose callback raises
    manual_reset: bool = False  # the threads' events are manual-reset (only a mutant sets this)

    def thread_names(self) -> tuple[str, ...]:
        return tuple(f"t{i}" for i in range(self.threads))


STOP = "stop"  # the handle of the pool's manual-reset stop event


def Threads(c: Constants) -> tuple[str, ...]:
    return c.thread_names()


def Clients(c: Constants) -> tuple[str, ...]:
    return ("client",)


def Handles(c: Constants) -> tuple[str, ...]:
    """Each thread's event (named after its thread) and the stop event."""
    return (*Threads(c), STOP)


def PoolWait(t: str) -> Wait:
    """A pool thread's wait: WaitForMultipleObjects({its event, stop}, any) — index 0: work, 1: stop."""
    return Wait((t, STOP))


# ============================================================================ VARIABLES


class Local(NamedTuple):
    """A pool thread's program counter, the work in hand, what its last wait returned."""

    pc: str
    item: int | None = None
    woke: int | str | None = None  # 0: its event, 1: stop, WAIT_TIMEOUT


class Client(NamedTuple):
    pc: str
    target: str | None = None  # the thread a post picked, to signal after the lock


class Vars(NamedTuple):
    posted: int  # works in the array
    next: int  # the index of the next work to hand out: the list is [next, posted)
    idle: Function[str, bool]  # the thread list's idle flags
    events: Events  # every thread's event, and stop
    thread: Function[str, Local]
    client: Client
    # ghosts
    handed: tuple[int, ...]  # the indices handed out (taken or cancelled), in order
    runs: Function[int, int]  # callbacks started per submission
    fate: Function[int, str | None]  # "returned" | "raised" | "cancelled"
    owed: Function[str, int]  # SetEvent calls on each thread's event not yet matched by a wake
    spurious: str | None  # the first thread whose event woke it with no SetEvent owed


# Thread program counters.
WAIT, BLOCKED, WOKEN, CHECK = "wait", "blocked", "woken", "check"
RUN, CALLBACK, EXITED = "run", "callback", "exited"
# Client program counters.
POST, SIGNAL, WAITING, CLOSE, JOIN, DONE = "post", "signal", "waiting", "close", "join", "done"

BUSY = frozenset({RUN, CALLBACK})  # in a callback

# ============================================================================ operators


def at(s: Vars, t: str, pc: str) -> Local | None:
    me = s.thread[t]
    return me if me.pc == pc else None


def goto(s: Vars, t: str, local: Local, **changes: object) -> Vars:
    return s._replace(thread=s.thread.except_(t, local), **changes)  # type: ignore[arg-type]


def Listed(s: Vars) -> range:
    """The works in the list: posted, not yet handed out."""
    return range(s.next, s.posted)


def Release(s: Vars, handle: str, pulse: bool = False) -> Vars:
    """SetEvent(handle) — or PulseEvent — releasing the pool threads blocked on it."""
    blocked = [(t, PoolWait(t)) for t, me in s.thread.items() if me.pc == BLOCKED]
    events, released = signal(s.events, handle, blocked, pulse)
    s = s._replace(events=events)
    for t, index in released:
        s = Woke(goto(s, t, Local(WOKEN, woke=index)), t, index)
    return s


def Woke(s: Vars, t: str, index: int) -> Vars:
    """A wait of t returned ``index``: a wake by its event pays one SetEvent off (none owed: spurious)."""
    if index != 0:
        return s
    if s.owed[t] == 0:
        return s._replace(spurious=s.spurious or t)
    return s._replace(owed=s.owed.except_(t, s.owed[t] - 1))


def Signalled(s: Vars, t: str) -> Vars:
    """Ghost: one more SetEvent on t's event that owes it a wake."""
    return s._replace(owed=s.owed.except_(t, s.owed[t] + 1))


def WokeBy(me: Local) -> str:
    """What a returned wait reports: its own event, stop, or a timeout."""
    return "event" if me.woke == 0 else "stop" if me.woke == 1 else WAIT_TIMEOUT


def Settled(c: Constants, s: Vars) -> bool:
    """No callback runs and every posted work has returned, raised or been cancelled."""
    return all(s.fate[i] is not None for i in range(s.posted)) and not any(
        me.pc in BUSY for me in s.thread.values()
    )


def Comes(s: Vars, t: str) -> bool:
    """Thread t will look at the list without a new signal: awake, signalled, or about to be signalled."""
    me = s.thread[t]
    if me.pc not in (WAIT, BLOCKED, EXITED):
        return True  # awake: it looks at the list before it waits
    return me.pc != EXITED and (s.events[t].signalled or s.client == Client(SIGNAL, t))


# ============================================================================ symmetry


def Renamed(c: Constants, s: Vars, to: dict[str, str]) -> Vars:
    back = {new: old for old, new in to.items()}
    ts = Threads(c)
    target = s.client.target
    return s._replace(
        idle=s.idle.with_values(s.idle[back[t]] for t in ts),
        events=s.events.with_values(s.events[back[h]] if h != STOP else s.events[STOP] for h in Handles(c)),
        thread=s.thread.with_values(s.thread[back[t]] for t in ts),
        client=s.client if target is None else s.client._replace(target=to[target]),
        owed=s.owed.with_values(s.owed[back[t]] for t in ts),
        spurious=None if s.spurious is None else to[s.spurious],
    )


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    def event(h: str) -> str:
        e = s.events[h]
        return ("manual" if e.manual else "auto") + (", signalled" if e.signalled else "")

    def local(me: Local) -> str:
        item = "" if me.item is None else f" #{me.item}"
        return me.pc + item + ("" if me.woke is None else f" ({me.woke})")

    return {
        "list": f"next={s.next} posted={s.posted} waiting={list(Listed(s))}",
        "thread": {t: local(me) for t, me in s.thread.items()},
        "idle": [t for t in Threads(c) if s.idle[t]],
        "events": {h: event(h) for h in Handles(c)},
        "client": s.client.pc + ("" if s.client.target is None else f" {s.client.target}"),
        "handed": list(s.handed),
        "fate": {i: f for i, f in s.fate.items() if f is not None},
    }
