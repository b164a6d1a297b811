"""The spec's trace automaton as feedback for the harness's coverage strategy (strategies/frontier.py).

Goals are the automaton's live edges (``TraceAutomaton.live_edges``: every event the spec allows
next after every trace prefix, on some complete trace) — the "observable spec steps" that
``compare_by_automaton`` reports. An edge counts as covered once a complete implementation trace
the spec accepts takes it, exactly as the comparison counts it, so the guide never claims more
than the report shows. The position of an execution is the automaton state its trace so far
reached (canonical worker names, events outside ``observed`` skipped); a trace the automaton
rejects has no position (an implementation-only prefix: nothing to steer by, and the comparison
reports it).

It listens to the scenario's ``SequencedTracer``: ``logged`` moves the position; ``complete``
(from the scenario's sink) covers the edges of a complete trace.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Hashable, Mapping
from typing import Any

from model_checks.designs.work_lane.link.scenario import EventKey, Run, TraceKey, emitted_key
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton


class AutomatonFeedback:
    def __init__(self, automaton: TraceAutomaton, observed: Collection[str] | None = None) -> None:
        self.automaton = automaton
        self.observed = None if observed is None else frozenset(observed)
        # The live part of the automaton with its states numbered: a DFA state is a set of spec
        # states, whose equality test costs as much as the set is large, and the guide looks one
        # up at every event of every execution.
        ids: dict[Any, int] = {automaton.start: 0}
        self.delta: list[dict[EventKey, int]] = []
        todo = [automaton.start]
        for q in todo:
            row: dict[EventKey, int] = {}
            for ev, nxt in automaton.edges(q).items():
                if (q, ev) not in automaton.live_edges_cached():
                    continue
                if nxt not in ids:
                    ids[nxt] = len(ids)
                    todo.append(nxt)
                row[ev] = ids[nxt]
            self.delta.append(row)
        self.states = todo  # the automaton state of each number
        self.goals = sum(len(row) for row in self.delta)  # == len(automaton.live_edges())
        self.covered: set[tuple[int, EventKey]] = set()
        self.reached: set[tuple[int, EventKey]] = set()  # taken by some prefix
        self.open = [len(row) for row in self.delta]
        self.started = time.perf_counter()
        # (seconds since the start, edges covered) each time coverage grew
        self.timeline: list[tuple[float, int]] = [(0.0, 0)]
        self._q: int | None = 0
        self._names: dict[str, str] = {}  # harness worker -> canonical name (first appearance)
        self._run: Run | None = None
        self._new = 0

    # ------------------------------------------------------------- the scenario's side
    def attach(self, run: Run) -> None:
        """``link_program``'s ``on_start``: the execution's run (its cut ends the scenario)."""
        self._run = run

    def _canonical(self, key: EventKey) -> EventKey:
        """``key`` (as the harness thread logs it) with the worker named as the trace so far
        names it: a worker not seen yet is the next ``w<i>`` (``scenario.canonical``)."""
        thread = key[0]
        if not thread.startswith("w"):
            return key
        return (self._names.get(thread, f"w{len(self._names)}"), key[1], key[2])

    def logged(self, thread: str, event: str, fields: Mapping[str, Any]) -> None:
        if self._run is not None and self._run.cut is not None:
            return  # clean-up after the scenario's end
        if self.observed is not None and event not in self.observed:
            return
        key = self._canonical(emitted_key(thread, event, fields))
        if thread.startswith("w") and thread not in self._names:
            self._names[thread] = key[0]
        q = self._q
        if q is not None:
            self._q = self.delta[q].get(key)
            if self._q is not None:
                self.reached.add((q, key))

    def trace_state(self) -> Hashable:
        """What of the trace so far its continuations depend on: the automaton position and the
        workers' canonical names (the trace itself is history)."""
        return (self._q, tuple(self._names.items()))

    def complete(self, trace: TraceKey) -> bool:
        """A complete trace (projected, canonical): cover its edges if the spec accepts it (and
        say whether it did)."""
        if not self.automaton.accepts(trace):
            return False
        q = 0
        before = len(self.covered)
        for ev in trace:
            edge = (q, ev)
            if edge not in self.covered:
                self.covered.add(edge)
                self.open[q] -= 1
            q = self.delta[q][ev]  # an accepted trace stays on live edges
        added = len(self.covered) - before
        if added:
            self._new += added
            self.timeline.append((time.perf_counter() - self.started, len(self.covered)))
        return True

    # ------------------------------------------------------------- the strategy's side (Feedback)
    def begin(self) -> None:
        self._q = 0
        self._names.clear()
        self._run = None
        self._new = 0

    def position(self) -> Hashable | None:
        q: Hashable | None = self._q
        return q

    def open_goals(self, position: Hashable) -> int:
        return self.open[position] if isinstance(position, int) else 0

    def end(self) -> int:
        new, self._new = self._new, 0
        return new
