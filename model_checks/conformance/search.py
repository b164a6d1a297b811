"""The streaming trace search: the spec's own actions, constrained by a trace, one event at a time.

After each event the search holds the *set* of spec states some behaviour could
be in (deduplicated), closed under the spec's internal actions. An event is
matched against the labelled actions of the processes its thread is bound to;
every field the action emits must equal the event's (fields named optional may
be absent from the event). Nothing of the trace is kept: memory is the live
state set plus what the design's binding keeps about its threads.

Deferred steps (``deferred``): a design may name internal actions that *move right* past the
actions of other processes (``movers.py`` states the condition and checks it on the spec's
reachable states). Such a step is taken only when an event needs it: for the event's own
processes, or where a step that may follow it before the event does not let it move. The
search then holds a *lazy* set (``live``), whose closure under every internal action is the
set above (``states``, computed only when asked: for words, at the end, for an observer), and
drops a state that a deferred step of another state it holds reaches. Independent deferred
steps of many processes then no longer multiply the live set.

Design-neutral: a design's trace binding (in its folder under ``designs``) binds
threads to processes (``add_process`` when a thread first shows a role),
announces each process's script entries as its events reveal them, and words
the verdicts. Which steps a state's pcs can enable is the base class's job
(``step_index.StepIndex``): action instances computed once per set of processes, so a
step is a loop of plain calls.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from heapq import heappop, heappush
from typing import Any

from model_checks.conformance.action_tables import FunctionPcs as FunctionPcs  # for bindings
from model_checks.conformance.action_tables import Instance
from model_checks.conformance.deferral import Taking, dominated
from model_checks.conformance.event_plan import PLAN_CACHE_FACTOR, EventPlanner
from model_checks.conformance.near_miss import Miss as Miss
from model_checks.conformance.near_miss import NoMatch as NoMatch
from model_checks.conformance.near_miss import near_misses
from model_checks.conformance.step_index import CACHE_LIMIT as CACHE_LIMIT
from model_checks.conformance.step_index import PartOf, State, mypyc_attr
from spec.language import Emitted, Spec

# Called with the search after each event it took (``TraceSearch.observer``): its ``states`` and
# ``c`` are then what some behaviour could be in, under the constants bound so far.
Observer = Callable[["TraceSearch"], None]


_MISSING = object()


# Compiled by mypyc at install (setup.py, SEARCH_FILES); tests and bindings subclass it in Python.
@mypyc_attr(allow_interpreted_subclasses=True)
class TraceSearch(EventPlanner):
    """The set of possible spec states, advanced by one observed event at a time."""

    def __init__(
        self,
        spec: Spec,
        constants: Any,
        states: Iterable[State],
        *,
        optional: Iterable[str] = (),
        check_invariants: bool = True,
        local: Callable[[State, Hashable], Hashable] | None = None,
        enabled_at: Mapping[str, frozenset[Hashable]] | None = None,
        pc_key: Callable[[State], Hashable] | None = None,
        pc_parts: Iterable[PartOf] = (),
        deferred: Mapping[str, frozenset[str]] | None = None,
        unit: Callable[[State, Hashable], Hashable] | None = None,
        unit_field: str | None = None,
        moves_to: Mapping[str, frozenset[Hashable]] | None = None,
        emits: Mapping[str, Mapping[str, Any]] | None = None,
        cache_limit: int = CACHE_LIMIT,
    ) -> None:
        super().__init__(
            spec,
            constants,
            local=local,
            enabled_at=enabled_at,
            pc_key=pc_key,
            pc_parts=pc_parts,
            deferred=deferred,
            unit=unit,
            moves_to=moves_to,
            cache_limit=cache_limit,
        )
        self.optional = frozenset(optional)
        self.invariants = [inv.fn for inv in spec.invariants] if check_invariants else []
        # An event's unit (``unit``'s, for a deferred step) is its field ``unit_field``.
        self.unit_field = unit_field
        # ``moves_to`` (the base's) with the labelled actions' ``at`` (the pcs they fire from): an
        # event's own process's deferred step that cannot lead to the event's pc is not one that
        # comes before it (a step that leaves its process where it never logs this event), so it
        # pulls in no other process's steps.
        self._event_at: dict[str, frozenset[Hashable] | None] = {
            a.name: a.at for a in spec.actions if a.event is not None
        }
        # ``emits[action]``: fields a logged action always emits with these values. An event
        # that shows another value is not that action's, in any state: it is no candidate, and
        # no other process's step needs to come before it (``movers.violations`` checks it).
        self.emits = {name: dict(fields) for name, fields in (emits or {}).items()}
        # ``_relevant`` meets new combinations of pcs all along a trace, as the base's memos do.
        self.plan_cache_limit = PLAN_CACHE_FACTOR * cache_limit
        self._forget_plans()
        # Each action's name by its function: which deferred steps of a process an event needs.
        self._name_of: dict[Callable[..., Any], str] = {a.fn: a.name for a in spec.actions}
        # Per set of deferred actions: the actions one of them does not move right past.
        self._blocked_of: dict[frozenset[str], frozenset[str]] = {}
        self._closed: set[State] | None = None
        self.live: set[State] = self.closure(set(states))
        self.peak = len(self.live)
        # Off by default: the only cost of the seam is one ``is not None`` test per event.
        self.observer: Observer | None = None

    def observe(self, observer: Observer | None) -> None:
        """Report the states held now (before any event) and after every event taken; None: stop."""
        self.observer = observer
        if observer is not None:
            observer(self)

    # -- binding -------------------------------------------------------------------------------

    def _rebind(self) -> None:
        """Recompute every action instance: the processes (or constants) changed."""
        self._index()
        self._closed = None
        self._forget_plans()

    def rebind(self, constants: Any, extend: Callable[[State], State] | None = None) -> None:
        """New constants (a process or an index joined): extend every state, recompute the instances.

        ``extend`` gives a state its new component in its initial value; it must not change
        anything else, so the new process (or index) starts where every behaviour would have it.
        """
        self.c = constants
        self._rebind()
        if extend is not None:
            self.states = self.closure({extend(s) for s in self.live})

    def reclose(self) -> None:
        """Close the live states again (a script entry announced may enable internal steps)."""
        self.states = self.closure(self.live)

    # -- the search ------------------------------------------------------------------------------

    def closure(self, states: set[State]) -> set[State]:
        seen = set(states)
        if not self._internal:
            # Every internal action is deferred (or there is none): nothing to take at once.
            return seen
        frontier = list(states)
        c = self.c
        # Without ``local`` every internal step is tried in every state; with it, only those its
        # processes' program counters can enable, looked up by the state's key (or its parts').
        while frontier:
            s = frontier.pop()
            for insts in self._steps_of(s):
                for fn, args in insts:
                    # One argument (the process) is the common case: a call without a tuple built.
                    nxt = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                    if nxt is not None:
                        # One hash per successor: most are duplicates, and hashing a state calls
                        # every component's ``__hash__``.
                        n = len(seen)
                        seen.add(nxt)
                        if len(seen) != n:
                            frontier.append(nxt)
        return seen

    def _expand(
        self, states: set[State], procs: tuple[Hashable, ...], only: Taking | None = None
    ) -> set[State]:
        """``states`` (closed under the internal steps that are not deferred) closed under those
        and the deferred steps of ``procs`` (with ``only``: those of its actions per process)."""
        c = self.c
        # The held states' deferred steps first: most events find none enabled (a process in the
        # middle of its work), and then nothing is copied.
        frontier: list[State] = []
        for s in states:
            for fn, args in self._deferred_among(s, procs, only):
                nxt = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                if nxt is not None and nxt not in states:
                    frontier.append(nxt)
        if not frontier:
            return states
        seen = set(states)
        seen.update(frontier)
        todo = list(seen.difference(states))
        eager = bool(self._internal)  # some internal steps are not deferred: close under them too
        while todo:
            s = todo.pop()
            lists: tuple[list[Instance], ...] = (self._deferred_among(s, procs, only),)
            if eager:
                lists += self._steps_of(s)
            for insts in lists:
                for fn, args in insts:
                    nxt = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                    if nxt is not None and nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return seen

    def _deferred_among(self, s: State, procs: tuple[Hashable, ...], only: Taking | None) -> list[Instance]:
        """``_deferred_for``, keeping (with ``only``) each process's steps of the actions it names."""
        steps = self._deferred_for(s, procs)
        if only is None or not steps:
            return steps
        name_of = self._name_of
        return [step for step in steps if name_of[step[0]] in only[step[1][0]]]

    def _prune(self, states: set[State], procs: tuple[Hashable, ...] | None = None) -> set[State]:
        """Drop the states that deferred steps (of ``procs``; None: of every process) of another
        state held reach (its closure has them)."""
        c = self.c
        if procs is None:
            procs = tuple(self._deferred_by_process)
        held = list(states)
        # States by number: the graph below hashes each state once, not once per edge.
        number = {s: i for i, s in enumerate(held)}
        reaches: list[list[int]] = []
        any_edge = False
        for i, s in enumerate(held):
            edges: list[int] = []
            for fn, args in self._deferred_for(s, procs):
                nxt = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                if nxt is not None:
                    j = number.get(nxt, i)
                    if j != i:
                        edges.append(j)
                        any_edge = True
            reaches.append(edges)
        if not any_edge:
            return states
        dropped = dominated(reaches)
        return {s for i, s in enumerate(held) if i not in dropped}

    @property
    def states(self) -> set[State]:
        """Every state some behaviour could be in: ``live`` closed under the deferred steps too
        (computed when asked, once per event; ``live`` itself without deferred steps)."""
        if not self._deferred_by_process:
            return self.live
        if self._closed is None:
            self._closed = self._expand(self.live, tuple(self._deferred_by_process))
        return self._closed

    @states.setter
    def states(self, states: set[State]) -> None:
        """Hold ``states`` (closed under the steps not deferred, as ``live`` is)."""
        self.live = states
        self._closed = None

    def reaches(self, accept: Callable[[State], bool]) -> bool:
        """Whether some state of ``states`` is accepted, found without the whole closure: best
        first from the states held, the state with the fewest deferred steps enabled next (the
        nearest to quiescence, where a run's end is judged). The closure can be far larger than
        the way to one such state: a sender that may or may not have re-checked, times each of
        them, where only the state in which every one did ends the run."""
        if self._closed is not None or not self._deferred_by_process:
            return any([accept(s) for s in (self.live if self._closed is None else self._closed)])
        c = self.c
        procs = tuple(self._deferred_by_process)
        eager = bool(self._internal)
        seen: set[State] = set()
        order = 0  # ties by arrival: a heap never compares two states
        frontier: list[tuple[int, int, State, list[Instance]]] = []
        for s in self.live:
            seen.add(s)
            steps = self._reach_steps(s, procs, eager)
            heappush(frontier, (len(steps), order, s, steps))
            order += 1
        while frontier:
            _, _, s, steps = heappop(frontier)
            if accept(s):
                return True
            for fn, args in steps:
                nxt = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    later = self._reach_steps(nxt, procs, eager)
                    heappush(frontier, (len(later), order, nxt, later))
                    order += 1
        return False

    def _reach_steps(self, s: State, procs: tuple[Hashable, ...], eager: bool) -> list[Instance]:
        """``reaches``'s steps from ``s``: the deferred ones, and the internal ones not deferred."""
        steps = list(self._deferred_for(s, procs))
        if eager:
            for insts in self._steps_of(s):
                steps.extend(insts)
        return steps

    def narrow(self, kept: set[State]) -> None:
        """Hold ``kept``: the states some behaviour could be in after a check the trace makes
        without a step (a join: its task is done). ``kept`` is a subset of ``states`` that the
        deferred steps never leave (a task stays done), so its closure is itself and those of its
        states that deferred steps of another reach are dropped: what is held stays as small as
        after an event, not the whole closure."""
        self.live = self._prune(kept) if self._deferred_by_process else kept
        self._closed = kept

    def step(self, ev: Mapping[str, Any], processes: Iterable[Hashable]) -> None:
        """Advance by ``ev``, taken by one of ``processes``; ``NoMatch`` when no behaviour takes it."""
        procs = tuple(processes)
        # A binding may have changed the constants in place since the closure was cached (a
        # script entry announced): words about this event must read the closure of now.
        self._closed = None
        per = self._labelled.get(ev["event"], {})
        candidates = [inst for p in procs for inst in per.get(p, ())]
        # The event's actions that its fields rule out (``emits``): no candidates, and no reason
        # for another process's deferred steps to come first.
        ruled_out: frozenset[str] = frozenset()
        if self.emits and candidates:
            ruled_out = frozenset([name for name, _, _ in candidates if not self._may_log(name, ev)])
            if ruled_out:
                candidates = [inst for inst in candidates if inst[0] not in ruled_out]
        before, taking = self._before(ev, procs, ruled_out)
        c = self.c
        optional = self.optional
        invariants = self.invariants
        out: set[State] = set()
        add = out.add
        for s in before:
            for _, fn, args in candidates:
                r = fn(c, s, args[0]) if len(args) == 1 else fn(c, s, *args)
                if type(r) is not Emitted:
                    continue
                for k, v in r.fields.items():
                    got = ev.get(k, _MISSING)
                    if got != v and not (got is _MISSING and k in optional):
                        break
                else:
                    nxt = r.state
                    n = len(out)
                    add(nxt)  # one hash, as in the closure
                    # The spec may leave a bound to an invariant (a queue's capacity): a step
                    # that breaks one is not a behaviour of the design.
                    if len(out) != n and any(inv(c, nxt) is not None for inv in invariants):
                        out.discard(nxt)
        if not out:
            raise NoMatch(sorted(self.states, key=repr), self.misses(ev, procs))
        self._hold(out, taking, procs)
        if self.observer is not None:
            self.observer(self)

    def before(
        self, ev: Mapping[str, Any], processes: Iterable[Hashable]
    ) -> tuple[set[State], frozenset[Hashable]]:
        """For a binding that takes an event's step itself (with a program counter it keeps outside
        the state): the states held with the deferred steps the event may need taken first, and
        whose steps those are. Hand the states the step reaches from them to ``after``."""
        procs = tuple(processes)
        per = self._labelled.get(ev["event"], {})
        ruled_out: frozenset[str] = frozenset()
        if self.emits:
            names = [name for p in procs for name, _, _ in per.get(p, ())]
            ruled_out = frozenset([name for name in names if not self._may_log(name, ev)])
        return self._before(ev, procs, ruled_out)

    def after(self, states: set[State], taken: frozenset[Hashable], processes: Iterable[Hashable]) -> None:
        """Hold ``states``, which a step of ``processes`` the binding took reached from the states
        ``before`` gave (``taken``: whose deferred steps it took)."""
        self._hold(states, taken, tuple(processes))

    def _before(
        self, ev: Mapping[str, Any], procs: tuple[Hashable, ...], ruled_out: frozenset[str]
    ) -> tuple[set[State], frozenset[Hashable]]:
        if not self._deferred_by_process:
            return self.live, frozenset()
        field = self.unit_field
        taking, only, taken = self._plan(
            ev["event"], procs, ev.get(field) if field is not None else None, ruled_out
        )
        return (self._expand(self.live, taking, only) if taking else self.live), taken

    def _hold(self, out: set[State], taking: frozenset[Hashable], procs: tuple[Hashable, ...]) -> None:
        self.live = self.closure(out)
        if not taking <= set(procs):
            # Deferred steps of processes other than the event's were taken: the states they
            # reached may have taken the event too, beside the states they came from.
            # The states the event added differ by the steps of those other processes: their
            # steps are the edges that find them. Any subset of the edges drops only what is
            # reached, so the closure (``states``) is the same with the event's own processes'
            # steps left out, and trying them was half of the pruning's steps (docs/conformance.md,
            # "Session 23").
            own = set(procs)
            self.live = self._prune(self.live, tuple([q for q in taking if q not in own]))
        if len(self.live) > self.peak:
            self.peak = len(self.live)
        self._closed = None

    def misses(self, ev: Mapping[str, Any], processes: Iterable[Hashable]) -> list[Miss]:
        """The steps of the bound processes that log this event's name, with the fields they would log."""
        return near_misses(
            self.c, self.states, self._labelled.get(ev["event"], {}), ev, processes, self.optional
        )
