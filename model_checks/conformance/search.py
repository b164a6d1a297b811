"""The streaming trace search: the spec's own actions, constrained by a trace, one event at a time.

After each event the search holds the *set* of spec states some behaviour could
be in (deduplicated), closed under the spec's internal actions. An event is
matched against the labelled actions of the processes its thread is bound to;
every field the action emits must equal the event's (fields named optional may
be absent from the event). Nothing of the trace is kept: memory is the live
state set plus what the design's binding keeps about its threads.

Design-neutral: a design module (``schedule_gate``, ``akka_mailbox``) binds
threads to processes (``add_process`` when a thread first shows a role),
announces each process's script entries as its events reveal them, and words
the verdicts. Action instances are computed once per set of processes, so a
step is a loop of plain calls.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.language import Emitted, Spec

State = Any
Instance = tuple[Callable[..., Any], tuple[Hashable, ...]]
Labelled = tuple[str, Callable[..., Any], tuple[Hashable, ...]]  # (action name, fn, its arguments)
# Called with the search after each event it took (``TraceSearch.observer``): its ``states`` and
# ``c`` are then what some behaviour could be in, under the constants bound so far.
Observer = Callable[["TraceSearch"], None]


@dataclass(frozen=True)
class Miss:
    """A near miss: from ``state``, ``action`` of ``process`` logs this event with other field values."""

    state: State
    action: str
    process: Hashable
    fields: Mapping[str, Any]  # what the spec's step would log
    differing: tuple[str, ...]  # the fields whose values differ from the event's


class NoMatch(Exception):
    """No behaviour of the spec takes this event from any of the current states."""

    def __init__(self, states: list[State], misses: list[Miss]) -> None:
        super().__init__("no behaviour of the spec takes this event")
        self.states = states
        self.misses = misses


_MISSING = object()


class TraceSearch:
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
    ) -> None:
        self.spec = spec
        self.c = constants
        self.optional = frozenset(optional)
        self.invariants = [inv.fn for inv in spec.invariants] if check_invariants else []
        # ``enabled_at[action]``: the values of ``local(state, process)`` (its program counter)
        # at which the internal action can be enabled at all. The closure then calls an action
        # only where its own first guard could pass (tests check the table against the spec).
        self.local = local
        self.enabled_at = dict(enabled_at or {})
        # ``pc_key(state)``: a cheap value from which every process's ``local`` follows (their
        # program counters, side by side). The closure keys the internal steps that can be
        # enabled by it, so a state costs one call and one lookup, not one per process.
        # Without it the key is the tuple of ``local(state, p)`` over the processes.
        self.pc_key = pc_key
        self._internal: list[Instance] = []
        self._by_process: dict[
            Hashable, list[tuple[Callable[..., Any], tuple[Hashable, ...], frozenset[Hashable] | None]]
        ] = {}
        self._by_pc: dict[tuple[Hashable, Hashable], list[Instance]] = {}
        self._processes: tuple[Hashable, ...] = ()
        self._by_key: dict[Hashable, list[Instance]] = {}
        self._key_of: Callable[[State], Hashable] = self._pcs
        self._labelled: dict[str, dict[Hashable, list[Labelled]]] = {}
        self._rebind()
        self.states: set[State] = self.closure(set(states))
        self.peak = len(self.states)
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
        internal: list[Instance] = []
        labelled: dict[str, dict[Hashable, list[Labelled]]] = {}
        for action in self.spec.actions:
            for args in action.instances(self.c):
                if action.event is None:
                    internal.append((action.fn, args))
                else:
                    per = labelled.setdefault(action.event, {})
                    per.setdefault(args[0], []).append((action.name, action.fn, args))
        self._internal = internal
        self._labelled = labelled
        by_process: dict[
            Hashable, list[tuple[Callable[..., Any], tuple[Hashable, ...], frozenset[Hashable] | None]]
        ] = {}
        for action in self.spec.actions:
            if action.event is None:
                allowed = self.enabled_at.get(action.name)
                for args in action.instances(self.c):
                    by_process.setdefault(args[0], []).append((action.fn, args, allowed))
        self._by_process = by_process
        self._by_pc = {}
        self._processes = tuple(by_process)
        self._by_key = {}
        self._key_of = self.pc_key if self.pc_key is not None else self._pcs

    def _pcs(self, s: State) -> tuple[Hashable, ...]:
        local = self.local
        if local is None:  # the closure keys by pcs only when it has ``local``
            raise TypeError("TraceSearch: program counters need ``local``")
        return tuple([local(s, p) for p in self._processes])

    def _instances_for(self, s: State, key: Hashable) -> list[Instance]:
        """The internal steps that can be enabled in a state whose processes' pcs give ``key``."""
        at = self._instances_at
        found = [inst for p, pc in zip(self._processes, self._pcs(s), strict=True) for inst in at(p, pc)]
        self._by_key[key] = found
        return found

    def _instances_at(self, process: Hashable, pc: Hashable) -> list[Instance]:
        key = (process, pc)
        found = self._by_pc.get(key)
        if found is None:
            found = [
                (fn, args)
                for fn, args, allowed in self._by_process[process]
                if allowed is None or pc in allowed
            ]
            self._by_pc[key] = found
        return found

    def rebind(self, constants: Any, extend: Callable[[State], State] | None = None) -> None:
        """New constants (a process or an index joined): extend every state, recompute the instances.

        ``extend`` gives a state its new component in its initial value; it must not change
        anything else, so the new process (or index) starts where every behaviour would have it.
        """
        self.c = constants
        self._rebind()
        if extend is not None:
            self.states = self.closure({extend(s) for s in self.states})

    def reclose(self) -> None:
        """Close the live states again (a script entry announced may enable internal steps)."""
        self.states = self.closure(self.states)

    # -- the search ------------------------------------------------------------------------------

    def closure(self, states: set[State]) -> set[State]:
        seen = set(states)
        frontier = list(states)
        c = self.c
        push = frontier.append
        add = seen.add
        # Without ``local`` every internal step is tried in every state; with it, only those its
        # process's program counter can enable, looked up by the state's key.
        every = self._internal if self.local is None else None
        key_of = self._key_of
        by_key = self._by_key
        instances = self._instances_for
        while frontier:
            s = frontier.pop()
            insts = every
            if insts is None:
                key = key_of(s)
                insts = by_key.get(key)
                if insts is None:
                    insts = instances(s, key)
            for fn, args in insts:
                nxt = fn(c, s, *args)
                if nxt is not None:
                    # One hash per successor: most are duplicates, and hashing a state calls
                    # every component's ``__hash__``.
                    n = len(seen)
                    add(nxt)
                    if len(seen) != n:
                        push(nxt)
        return seen

    def step(self, ev: Mapping[str, Any], processes: Iterable[Hashable]) -> None:
        """Advance by ``ev``, taken by one of ``processes``; ``NoMatch`` when no behaviour takes it."""
        procs = tuple(processes)
        per = self._labelled.get(ev["event"], {})
        candidates = [inst for p in procs for inst in per.get(p, ())]
        c = self.c
        optional = self.optional
        invariants = self.invariants
        out: set[State] = set()
        add = out.add
        for s in self.states:
            for _, fn, args in candidates:
                r = fn(c, s, *args)
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
        self.states = self.closure(out)
        if len(self.states) > self.peak:
            self.peak = len(self.states)
        if self.observer is not None:
            self.observer(self)

    def misses(self, ev: Mapping[str, Any], processes: Iterable[Hashable]) -> list[Miss]:
        """The steps of the bound processes that log this event's name, with the fields they would log."""
        per = self._labelled.get(ev["event"], {})
        found: list[Miss] = []
        for s in sorted(self.states, key=repr):
            for p in processes:
                for name, fn, args in per.get(p, ()):
                    r = fn(self.c, s, *args)
                    if type(r) is not Emitted:
                        continue
                    differing = tuple(
                        k
                        for k, v in r.fields.items()
                        if ev.get(k, _MISSING) != v and not (k not in ev and k in self.optional)
                    )
                    found.append(Miss(s, name, p, dict(r.fields), differing))
        return found
