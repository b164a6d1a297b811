"""Binding the threads of a lane-family trace (producers that post, workers that take, Stop calls)
to a streaming search (``search.TraceSearch``): what the Work Lane's and the lock-free lane's
bindings share.

Their specs name the roles' local values alike: ``producer[p] = (pc, k, lane)`` (``k`` the posts
made so far), ``worker[w] = (pc, ...)``, ``stopper[t] = pc``; the trace's threads are bound as
``p:<thread>``, ``w:<thread>`` and any other name for a Stop call. A producer's script is learned
post by post: its next post is announced to every live state that has not made it yet.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from typing import Any

from model_checks.conformance.binding import with_entry
from model_checks.conformance.search import TraceSearch

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
