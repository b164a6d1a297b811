"""What an event-pool trace's events are to ``spec/event_pool.py``: the spec with the trace's
unlogged steps made internal, the program counters the search swaps per thread, each event's
fields, and the words of a step no spec behaviour takes (``spec_search.PoolSearch`` uses them;
docs/event-pool.md, "The trace")."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from operator import attrgetter
from typing import Any

from model_checks.conformance.search import FunctionPcs, NoMatch
from model_checks.conformance.step_index import PartOf
from model_checks.conformance.streamed import Event, FieldCheck, is_bool, one_of
from model_checks.conformance.wording import show_event
from model_checks.designs import internal_at
from model_checks.designs.event_pool.trace.fields import is_item, is_items
from model_checks.designs.event_pool.trace.late_signals import (
    MAX_LATE,
    Late,
    LogSignal,
    MakeSetEvent,
    PoolState,
    Setters,
    Slots,
    bound,
    is_setter,
    owed_on,
    setter_of,
    target_of,
)
from spec import event_pool as ep
from spec.language import Action, Emitted, Spec, emit

CLIENT = "client"  # the spec's client process: the stopper's program counter lives in the state
OPEN = 2**62  # ``submits`` while admission is open: the trace, not a constant, says how many
POSTING = ep.Client(ep.POST)
POOL_EVENTS = frozenset({"wait", "wake", "take", "run", "done"})
STOP_EVENTS = frozenset({"cancel", "stop_begin", "discard", "stop_end"})
RULE_OF_EVENT = {"wait": 2, "wake": 6, "take": 7, "run": 2, "done": 2}


def _unlabelled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as an internal step: its next state without the event's fields."""

    def step(c: ep.Constants, s: ep.Vars, *args: Hashable) -> Any:
        r = fn(c, s, *args)
        return r.state if type(r) is Emitted else r

    step.__name__ = fn.__name__
    return step


# A pool thread that logged ``wait`` and has not called the wait yet: the reference logs ``wait``
# just before WaitForMultipleObjects, so a SetEvent logged after the ``wait`` may come before the
# wait itself (and coalesce with a signal still set).
LOGGED_WAIT = "wait-logged"


def LogWait(c: ep.Constants, s: ep.Vars, t: str) -> Any:
    """``wait`` is logged: the wait (``WaitForWork``) is still to come."""
    if s.thread[t].pc != ep.WAIT:
        return None
    return emit(ep.goto(s, t, ep.Local(LOGGED_WAIT)))


def _wait_after_log(wait: Callable[..., Any]) -> Callable[..., Any]:
    """The spec's wait, internal, by a thread that logged it (``LOGGED_WAIT``)."""

    def WaitForWork(c: ep.Constants, s: ep.Vars, t: str) -> Any:
        if s.thread[t].pc != LOGGED_WAIT:
            return None
        r = wait(c, ep.goto(s, t, ep.Local(ep.WAIT)), t)
        return r.state if type(r) is Emitted else r

    return WaitForWork


def _bound(action: Action) -> tuple[Action, ...]:
    if action.name == "Signal":
        # ``signal`` is logged just before SetEvent: the SetEvent is a step of its own, later.
        logged = dataclasses.replace(action, fn=LogSignal, doc=LogSignal.__doc__ or "")
        made = Action(
            name="MakeSetEvent",
            fn=MakeSetEvent,
            domains=(Setters, Slots),
            event=None,
            doc=MakeSetEvent.__doc__ or "",
        )
        return (logged, made)
    if action.name == "WaitForWork":
        logged = dataclasses.replace(action, name="LogWait", fn=LogWait, doc=LogWait.__doc__ or "")
        waits = dataclasses.replace(
            action, event=None, fn=_wait_after_log(action.fn), at=frozenset({LOGGED_WAIT})
        )
        return (logged, waits)
    # The trace does not log the callbacks' wait returning, nor the stop event being set: the
    # search closes over them; the spec's ``joined`` is the trace's ``stop_end``.
    if action.name in ("CallbacksDone", "Close"):
        action = dataclasses.replace(action, event=None, fn=_unlabelled(action.fn))
    elif action.name == "Joined":
        action = dataclasses.replace(action, event="stop_end")
    return (action,)


def init_states(c: ep.Constants) -> list[PoolState]:
    """The spec's initial states, with no SetEvent owed."""
    return [bound(s) for s in ep.Init(c)]


# The search judges a trace by its events and checks no invariant (``check_invariants=False``):
# the spec's invariants read a state as the spec's one client leaves it, where a SetEvent logged
# and not yet made is a lost wakeup (``NoLostWakeup``'s "nobody will signal").
SPEC: Spec = dataclasses.replace(
    ep.SPEC, init_fn=init_states, invariants=(), actions=tuple(b for a in ep.SPEC.actions for b in _bound(a))
)

# The program counters at which each internal step can be enabled (its first guard): the pool
# threads' ``at=`` in the spec, and the steps of the client and of the SetEvents owed (processes
# with no program counter in the spec; ``local_pc`` reads theirs).
ENABLED_AT = internal_at(SPEC)
ENABLED_AT.update(
    CallbacksDone=frozenset({ep.WAITING}),
    Close=frozenset({ep.CLOSE}),
    MakeSetEvent=frozenset(range(1, MAX_LATE + 1)),  # the SetEvents owed
)

# Every internal step is deferred (``search.TraceSearch``): taken only when an event needs it, so a
# thread that logged ``wait`` is not held before its wait, blocked and timed out all at once. Each
# moves right past every step of another process but those named: a SetEvent (a signal's, or the
# stop event's) releases a blocked wait or wakes it by another index, a wake by stop needs the stop
# event set, and a signal adds a SetEvent owed (its setter's pc). A thread's wait and timeout, and
# the SetEvents owed on its event, are about that event (``thread_unit``). A poster's next event
# needs its SetEvent made: the search takes it then (``spec_search.PoolSearch._made``). Checked on
# the spec's reachable states by ``conformance.movers`` (tests/event_pool/test_spec_deferred.py).
DEFERRED: dict[str, frozenset[str]] = {
    "WaitForWork": frozenset({"MakeSetEvent", "Close"}),
    "TimeOut": frozenset({"MakeSetEvent", "Close"}),
    "CallbacksDone": frozenset(),
    "Close": frozenset({"Wake", "MakeSetEvent"}),
    "MakeSetEvent": frozenset({"WaitForWork", "TimeOut", "Wake", "Close", "Signal"}),
}


def local_pc(s: PoolState, process: Hashable) -> Hashable:
    if is_setter(process):
        return owed_on(s, target_of(process))
    return s.client.pc if process == CLIENT else s.thread[process].pc  # type: ignore[index]


def _own(process: Hashable) -> Hashable:
    return process


def _client_pcs(client: ep.Client) -> tuple[tuple[Hashable, Hashable], ...]:
    return ((CLIENT, client.pc),)


class SetterPcs:
    """The setters' pcs (``local_pc``) read off the SetEvents owed (``PoolState.late``)."""

    def __init__(self, threads: tuple[str, ...]) -> None:
        self.name(threads)

    def name(self, threads: tuple[str, ...]) -> None:
        """The threads are these now (the search names them as the trace does: ``named``)."""
        self.setters = tuple((setter_of(t), t) for t in threads)

    def __call__(self, late: tuple[Late, ...]) -> tuple[tuple[Hashable, Hashable], ...]:
        if not late:
            return tuple((setter, 0) for setter, _ in self.setters)
        return tuple((setter, sum(1 for _, to in late if to == t)) for setter, t in self.setters)


def pc_parts(threads: tuple[str, ...], setters: SetterPcs | None = None) -> list[PartOf]:
    """Every process's pc (``local_pc``) in three parts, each read off the one component it depends
    on, so the search works a part's steps and chains out once per value of it
    (``TraceSearch(pc_parts=...)``): the pool threads (each its own unit, ``thread_unit``), the
    client, and the setters (unit: their thread, read by ``thread_unit``)."""
    return [
        (attrgetter("thread"), FunctionPcs(index=0, unit_of=_own, by_pcs=True)),
        (attrgetter("client"), _client_pcs),
        (attrgetter("late"), SetterPcs(threads) if setters is None else setters),
    ]


def thread_unit(s: PoolState, process: Hashable) -> Hashable:
    """What a process's deferred steps are about: a pool thread's, and the SetEvents owed on its
    event, that thread's event (a signal's ``to``); the client's, every thread (None)."""
    if is_setter(process):
        return target_of(process)
    return None if process == CLIENT else process


class Unknown:
    """A trace item that names no live work: it equals no spec index."""

    def __init__(self, item: object) -> None:
        self.item = item

    def __repr__(self) -> str:
        return f"unknown work {self.item!r}"


def locked(ev: Event) -> bool:
    """The reference logs ``ev`` under the list lock (a refused post's bad argument is not)."""
    kind = ev["event"]
    return kind in ("take", "cancel", "stop_begin") or (kind == "post" and ev["result"] != "invalid_argument")


show = show_event  # ``thread event {fields}``, as every streaming format names a refused event


def why_no_step(ev: Event, none: NoMatch) -> tuple[int, str]:
    """The rule a pool thread's refused event breaks, and why no step of the spec takes it."""
    kind, thread = ev["event"], ev["thread"]
    pcs = sorted({str(s.thread[thread].pc) for s in none.states})
    misses = [m for m in none.misses if m.differing]
    if not none.misses:
        rule = 8 if pcs == [ep.EXITED] else 7 if kind == "take" and pcs == [ep.CHECK] else 2
        return rule, (
            f"{show(ev)} — no step of {thread} logs {kind} here ({thread} could be at: {', '.join(pcs)})"
        )
    parts = sorted({f"{k} = {m.fields[k]!r}" for m in misses for k in m.differing})
    rule = RULE_OF_EVENT.get(kind, 2)
    if kind == "wake":
        rule = 8 if ev["result"] == "stop" else 6
    return rule, f"{show(ev)} — the spec's step here logs " + "; or ".join(parts)


def _item_or_null(v: Any) -> bool:
    return v is None or is_item(v)


def _thread_or_null(v: Any) -> bool:
    return v is None or type(v) is str


def _is_str(v: Any) -> bool:
    return type(v) is str


# Each event's fields, one by one (the fast format's ``CHECKS`` judge their combination).
FIELDS: dict[str, tuple[tuple[str, FieldCheck], ...]] = {
    "post": (
        ("item", _item_or_null),
        ("to", _thread_or_null),
        ("result", one_of("ok", "invalid_state", "invalid_argument")),
    ),
    "signal": (("to", _is_str),),
    "wait": (),
    "wake": (("result", one_of("event", "stop", "timeout")),),
    "take": (("item", _item_or_null),),
    "run": (("item", is_item),),
    "done": (("item", is_item), ("raised", is_bool)),
    "cancel": (("items", is_items), ("work", _is_str)),
    "stop_begin": (("mode", one_of("drain", "discard")),),
    "discard": (("items", is_items),),
    "stop_end": (("mode", one_of("drain", "discard")), ("result", one_of("ok", "failed"))),
}
