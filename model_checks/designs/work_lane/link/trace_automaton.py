"""The spec's observable traces as a deterministic automaton: counted and tested, never listed.

``spec_traces`` lists every trace, which is exact but grows with the number of traces (the whole
``small`` configuration has more than anyone can list). Here the same set is a DFA built lazily
by the subset construction over the spec's state graph: a DFA state is the set of spec states a
trace prefix can reach (closed under internal steps and unobserved events), so its size follows
the state graph, not the trace count. On it:

* ``count()`` is the number of distinct complete traces (paths to accepting DFA states, summed);
* ``accepts(trace)`` says whether the spec allows a complete trace;
* ``words(limit)`` lists traces, for the spec-only ones a comparison reports.

Traces are canonical (workers named ``w0``, ``w1``.. in order of first appearance, as
``scenario.canonical`` names them): the spec's workers are interchangeable, so a trace is kept
exactly when its workers already appear in that order, which the DFA tracks.

A Stop from a callback (``callback_stop``) is a self-loop of the spec: ``StopFromCallback`` may
fire any number of times. A harness scenario calls it from the first callback that runs, once,
with one mode: ``callback_mode`` restricts the language to that (exactly one ``stop_rejected``
with reason ``in_callback`` and that mode when some item was invoked, none otherwise), which keeps
it finite. Any other event-labelled cycle is reported, not looped on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from model_checks.designs.work_lane.link.scenario import EventKey, TraceKey
from model_checks.designs.work_lane.link.spec_traces import transition_event
from spec import work_lane as wl
from spec.language import Instance, Transition


@dataclass(frozen=True)
class _Q:
    """A DFA state: the spec states a prefix can be in, and what the prefix has shown so far."""

    states: frozenset[Any]
    workers: int  # workers seen (canonical: w0..w{workers-1})
    invoked: bool  # some item was invoked
    callback: bool  # the callback's Stop was logged


class CyclicTraces(ValueError):
    """The spec logs events in a cycle: its trace set is infinite."""


class TraceAutomaton:
    def __init__(
        self,
        constants: wl.Constants,
        observed: Collection[str] | None = None,
        callback_mode: str | None = None,
    ) -> None:
        self.inst = Instance(wl.SPEC, constants)
        self.observed = None if observed is None else frozenset(observed)
        self.callback_mode = callback_mode
        self._closure: dict[Any, frozenset[Any]] = {}
        self._edges: dict[_Q, dict[EventKey, _Q]] = {}
        self._accepting: dict[_Q, bool] = {}
        self._count: dict[_Q, int] = {}
        self._live: set[tuple[_Q, EventKey]] | None = None
        self.start = _Q(self._close(frozenset(self.inst.initial_states())), 0, False, False)

    # ----------------------------------------------------------------------------- construction
    def _silent(self, t: Transition) -> bool:
        return t.event is None or (self.observed is not None and t.event not in self.observed)

    def _close(self, states: frozenset[Any]) -> frozenset[Any]:
        out: set[Any] = set()
        for s in states:
            got = self._closure.get(s)
            if got is None:
                seen = {s}
                todo = [s]
                while todo:
                    x = todo.pop()
                    for t in self.inst.successors(x):
                        if self._silent(t) and t.state not in seen:
                            seen.add(t.state)
                            todo.append(t.state)
                got = self._closure[s] = frozenset(seen)
            out |= got
        return frozenset(out)

    def accepting(self, q: _Q) -> bool:
        got = self._accepting.get(q)
        if got is None:
            ends = any(not any(True for _ in self.inst.successors(s)) for s in q.states)
            got = ends and (self.callback_mode is None or q.callback == q.invoked)
            self._accepting[q] = got
        return got

    def edges(self, q: _Q) -> dict[EventKey, _Q]:
        got = self._edges.get(q)
        if got is not None:
            return got
        targets: dict[EventKey, set[Any]] = {}
        for s in q.states:
            for t in self.inst.successors(s):
                if self._silent(t):
                    continue
                ev = transition_event(t)
                targets.setdefault(ev, set()).add(t.state)
        got = {}
        for ev, states in targets.items():
            nxt = self._step(q, ev)
            if nxt is not None:
                got[ev] = _Q(self._close(frozenset(states)), *nxt)
        self._edges[q] = got
        return got

    def _step(self, q: _Q, ev: EventKey) -> tuple[int, bool, bool] | None:
        """The flags after ``ev``, or None when the canonical, one-callback language drops it."""
        thread, event, fields = ev
        workers = q.workers
        if thread.startswith("w"):
            index = int(thread[1:])
            if index > workers:
                return None  # a later worker before an earlier one: not the canonical naming
            workers = max(workers, index + 1)
        callback = q.callback
        if (
            self.callback_mode is not None
            and event == "stop_rejected"
            and dict(fields).get("reason") == "in_callback"
        ):
            if callback or dict(fields).get("mode") != self.callback_mode:
                return None
            callback = True
        return workers, q.invoked or event == "invoke", callback

    # ----------------------------------------------------------------------------- the language
    def count(self) -> int:
        """How many distinct complete traces the spec allows (canonical)."""
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            return self._count_from(self.start, set())
        finally:
            sys.setrecursionlimit(limit)

    def _count_from(self, q: _Q, path: set[_Q]) -> int:
        got = self._count.get(q)
        if got is not None:
            return got
        if q in path:
            raise CyclicTraces(
                "the spec can log events forever from one state (is a Stop from a callback in "
                "the configuration? give its mode as callback_mode)"
            )
        path.add(q)
        n = int(self.accepting(q)) + sum(self._count_from(nxt, path) for nxt in self.edges(q).values())
        path.discard(q)
        self._count[q] = n
        return n

    def accepts(self, trace: TraceKey) -> bool:
        q = self.start
        for ev in trace:
            nxt = self.edges(q).get(ev)
            if nxt is None:
                return False
            q = nxt
        return self.accepting(q)

    def words(self, limit: int | None = None, skip: Collection[TraceKey] = ()) -> Iterator[TraceKey]:
        """The traces, in depth-first order (those in ``skip`` left out), at most ``limit``."""
        given = 0
        prefix: list[EventKey] = []
        stack: list[Iterator[tuple[EventKey, _Q]]] = [iter(sorted(self.edges(self.start).items()))]
        if self.accepting(self.start) and () not in skip:
            given += 1
            yield ()
        while stack and (limit is None or given < limit):
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                if prefix:
                    prefix.pop()
                continue
            ev, q = step
            prefix.append(ev)
            word = tuple(prefix)
            if self.accepting(q) and word not in skip:
                given += 1
                yield word
            stack.append(iter(sorted(self.edges(q).items())))

    def live_edges_cached(self) -> set[tuple[_Q, EventKey]]:
        """``live_edges()``, computed once."""
        if self._live is None:
            self._live = self.live_edges()
        return self._live

    def live_edges(self) -> set[tuple[_Q, EventKey]]:
        """The edges (state, event) reachable from the start that lie on a complete trace."""
        self.count()  # fills ``_count``: states from which some complete trace goes on
        return good_edges(self.start, lambda q: self.edges(q).items(), lambda q: self._count.get(q, 0) > 0)

    @property
    def size(self) -> int:
        """DFA states built so far."""
        return len(self._edges)


N = TypeVar("N", bound=Hashable)


def good_edges(
    start: N, successors: Callable[[N], Iterable[tuple[EventKey, N]]], good: Callable[[N], bool]
) -> set[tuple[N, EventKey]]:
    """The edges (node, event) into a good node, on paths from ``start`` through good nodes only."""
    seen = {start}
    todo = [start]
    out: set[tuple[N, EventKey]] = set()
    while todo:
        node = todo.pop()
        for ev, nxt in successors(node):
            if not good(nxt):
                continue
            out.add((node, ev))
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return out
