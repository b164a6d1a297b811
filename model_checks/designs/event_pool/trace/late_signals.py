"""A ``signal`` is logged just before its SetEvent (docs/event-pool.md, "The trace"): the SetEvent
itself may come later, until the poster's next event of its own.

Meanwhile the signalled thread may log a ``wait``, block and time out, so ``signal t0, wait,
wake timeout`` is a trace of the reference. The spec's ``Signal`` logs and sets at once, so the
search bound ``signal`` to it and refused that trace. Here the logged step (``LogSignal``, still
named ``Signal``) only moves the poster on and notes the SetEvent it owes in the state
(``PoolState.late``); the SetEvent (``MakeSetEvent``, the rest of the spec's ``Signal``) is an
internal step any time after, and the search drops the states where the poster has not made it
when its next event comes (``spec_search``).

``PoolState`` is the spec's ``Vars`` and that one variable more; the spec's actions only read and
``_replace`` fields, so they step it as they step ``Vars``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import cache
from typing import NamedTuple, TypeGuard, cast

from spec import event_pool as ep
from spec.language import Function, emit
from spec.win32_events import Events

# A SetEvent owed: (the poster, the thread whose event it sets).
Late = tuple[str, str]
# How many SetEvents logged and not yet made a state can hold at once: one per poster between its
# ``signal`` and its next event, so this bounds the posters signalling at the same instant. Each
# may be made or not before the signalled thread's wake, so the states held grow as 2 ** k with k
# SetEvents owed on one thread's event: kept small, and a trace beyond it is refused by name.
MAX_LATE = 8


class LateLimit(Exception):
    """More SetEvents owed at once than the search keeps (``MAX_LATE``)."""


class PoolState(NamedTuple):
    """``ep.Vars`` (same fields, same order) and the SetEvents logged and not yet made."""

    posted: int
    next: int
    idle: Function[str, bool]
    events: Events
    thread: Function[str, ep.Local]
    client: ep.Client
    handed: tuple[int, ...]
    runs: Function[int, int]
    fate: Function[int, str | None]
    owed: Function[str, int]
    spurious: str | None
    late: tuple[Late, ...] = ()  # sorted: states that owe the same SetEvents are one state


def bound(s: ep.Vars) -> PoolState:
    """A spec state with no SetEvent owed."""
    return PoolState(*s)


def with_late(s: PoolState, owed: Late) -> PoolState:
    if len(s.late) >= MAX_LATE:
        raise LateLimit(f"more than {MAX_LATE} SetEvents logged and not yet made at once")
    return s._replace(late=tuple(sorted((*s.late, owed))))


def LogSignal(c: ep.Constants, s: PoolState, p: str) -> object:
    """``signal``: the poster logs the SetEvent it owes the picked thread; the SetEvent is to come.

    The spec's one client owes it as ``p``; the search, which lifts the client to many posters,
    names the poster instead (``as_poster``)."""
    t = s.client.target
    if s.client.pc != ep.SIGNAL or t is None:
        return None
    return emit(with_late(s._replace(client=ep.Client(ep.POST)), (p, t)), to=t)


def as_poster(s: PoolState, client: str, poster: str) -> PoolState:
    """``s`` with the SetEvents the spec's ``client`` owes owed by ``poster``."""
    if not any(p == client for p, _ in s.late):
        return s
    return s._replace(late=tuple(sorted((poster if p == client else p, t) for p, t in s.late)))


def MakeSetEvent(c: ep.Constants, s: PoolState, setter: str, k: int) -> PoolState | None:
    """The ``k``-th SetEvent owed on ``setter``'s thread's event is made: the spec's ``Signal``
    without its log."""
    late = s.late
    if k >= len(late):
        return None
    t = target_of(setter)
    i = -1
    for _ in range(k + 1):
        i = next((j for j in range(i + 1, len(late)) if late[j][1] == t), -1)
        if i < 0:
            return None
    made = s._replace(late=late[:i] + late[i + 1 :])
    # The spec's operators step a PoolState as a Vars (``_replace`` keeps its type).
    return cast(PoolState, ep.Release(ep.Signalled(cast(ep.Vars, made), t), t))


# The SetEvents owed on a thread's event are made by a process of their own, one per pool thread:
# what they are about (their unit) is that thread's event, whoever owes them.
SETTER_PREFIX = "set "


def setter_of(t: str) -> str:
    return SETTER_PREFIX + t


@cache
def target_of(setter: str) -> str:
    return setter.removeprefix(SETTER_PREFIX)


def is_setter(process: Hashable) -> TypeGuard[str]:
    return type(process) is str and process.startswith(SETTER_PREFIX)


def Setters(c: ep.Constants) -> tuple[str, ...]:
    return tuple(setter_of(t) for t in c.thread_names())


def Slots(c: ep.Constants) -> range:
    return range(MAX_LATE)


def owed_on(s: PoolState, t: str) -> int:
    """How many SetEvents on ``t``'s event are owed (its setter's program counter)."""
    return sum(1 for _, to in s.late if to == t)


def owes(s: PoolState, poster: str) -> bool:
    return any(p == poster for p, _ in s.late)


def made_by(states: Iterable[PoolState], poster: str) -> set[PoolState]:
    """The states in which ``poster`` has made every SetEvent it logged."""
    return {s for s in states if not owes(s, poster)}
