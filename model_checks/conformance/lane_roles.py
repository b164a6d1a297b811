"""Binding the threads of a lane trace (producers that post to lanes, workers that take them, Stop
calls) to a streaming search (``search.TraceSearch``): what the bindings of such specs share.

Such a spec names the roles' local values so: ``producer[p] = (pc, k, lane)`` (``k`` the posts
made so far), ``worker[w] = (pc, lane, ...)``, ``stopper[t] = pc``, and keeps the Stop calls' modes and
the producers' scripts in its constants (``stoppers``, ``modes``, ``producers``, ``posts``). The
trace's threads are bound as ``p:<thread>``, ``w:<thread>`` and any other name for a Stop call. A
producer's script is learned post by post: its next post is announced to every live state that
has not made it yet.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from typing import Any

from model_checks.conformance.binding import with_entry
from model_checks.conformance.search import TraceSearch
from model_checks.conformance.search_binding import UnitNames, add_process, forget_read

State = Any


def role_pc(s: State, process: Hashable) -> Hashable:
    """A process's program counter (a search's ``local``): ``p:`` producers and ``w:`` workers
    hold it first in their local tuple, a Stop call's value is its pc."""
    name = str(process)
    pc: Hashable
    if name.startswith("p:"):
        pc = s.producer[name][0]
    elif name.startswith("w:"):
        pc = s.worker[name][0]
    else:
        pc = s.stopper[name]
    return pc


def add_producer(
    search: TraceSearch,
    constants: Any,
    name: str,
    fresh: tuple[Hashable, int, Any],
    admitted: tuple[Hashable, int, Any] | None,
    closing: Callable[[State], bool],
) -> None:
    """Bind producer ``name`` (``constants.producers`` and an empty script in ``constants.posts``):
    every live state maps it to ``fresh``, and where ``closing(s)`` also to ``admitted`` (None:
    not this post): its unlogged admission may have come before the Stop call that closed it."""
    constants.producers.append(name)
    constants.posts[name] = {}
    live = search.live
    search.rebind(constants)
    extended = set()
    for s in live:
        extended.add(s._replace(producer=with_entry(s.producer, name, fresh)))
        if admitted is not None and closing(s):
            extended.add(s._replace(producer=with_entry(s.producer, name, admitted)))
    search.states = search.closure(extended)


def add_stopper(search: TraceSearch, constants: Any, name: str, mode: str, start: Hashable) -> None:
    """Bind Stop call ``name`` of ``mode``: every live state maps it to ``start``."""
    constants.stoppers.append(name)
    constants.modes[name] = mode
    add_process(search, constants, "stopper", name, start)


def announce_post(
    search: TraceSearch,
    posts: dict[int, tuple[int | None, Any]],
    p: str,
    post: tuple[int | None, Any],
    waiting: Collection[Hashable],
    admitted: Hashable,
) -> None:
    """Producer ``p``'s next post is ``post`` (lane, item): every live state whose producer, at a pc
    of ``waiting``, has not made it reads it. A post with no lane was never admitted: the states
    where ``p`` is at ``admitted`` (some post to a lane admitted) are dropped."""
    for s in search.live:  # deferred steps keep a producer's position
        pc, k, _ = s.producer[p]
        if pc in waiting and k not in posts:
            posts[k] = post
    if post[0] is None:
        search.states = {s for s in search.live if s.producer[p][0] != admitted}


class Producers:
    """The producers of a lane spec bound as the trace shows them, for a spec whose producer is at
    ``idle`` before its next post is admitted and at ``admitted`` after (the admission unlogged),
    and whose ``phase`` is ``closing`` once a Stop call has closed admission. A producer is
    ``p:<thread>``, bound at its first post; its posts are its script, learned post by post."""

    def __init__(self, idle: Hashable, admitted: Hashable, closing: Hashable) -> None:
        self.fresh = (idle, 0, None)
        self.admitted = admitted
        self.closing = closing
        self.waiting = frozenset({idle, admitted})  # the pcs of a producer before its next post

    def add(self, search: TraceSearch, constants: Any, name: str, lane: int | None) -> None:
        """Bind producer ``name`` at its first post, to ``lane`` (None: to no lane). Its Admit may
        have come before the (unlogged) Stop call that closed admission."""
        admitted = (self.admitted, 0, None) if lane is not None else None
        add_producer(search, constants, name, self.fresh, admitted, self._closing)

    def _closing(self, s: State) -> bool:
        return bool(s.phase == self.closing)

    def announce(self, search: TraceSearch, constants: Any, p: str, ev: dict[str, Any]) -> None:
        """Producer ``p``'s next post is ``ev``'s: every live state that has not made it reads it."""
        post = (ev["lane"], ev["item"])
        announce_post(search, constants.posts[p], p, post, self.waiting, self.admitted)

    def forget(self, search: TraceSearch, constants: Any, thread: str) -> None:
        """Drop the posts of ``thread``'s producer (if it is one) that no live state can read again."""
        p = f"p:{thread}"
        if p in constants.posts:
            forget_read(constants.posts[p], search.live, lambda s: s.producer[p][1])


# A lane spec's functions of the lane, and its queue of lanes (the drain work items).
PER_LANE = ("queue", "status", "accepted", "invoked", "discarded")


def traced_lanes(s: State, lanes: UnitNames) -> State:
    """``s`` with every lane in the trace's numbers (``lanes`` names them): what its words show."""
    return lanes.traced_state(s, PER_LANE, ("ready",), {"producer": 2, "worker": 1})
