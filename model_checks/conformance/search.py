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
        self._internal: list[Instance] = []
        self._by_process: dict[
            Hashable, list[tuple[Callable[..., Any], tuple[Hashable, ...], frozenset[Hashable] | None]]
        ] = {}
        self._by_pc: dict[tuple[Hashable, Hashable], list[Instance]] = {}
        self._labelled: dict[str, dict[Hashable, list[Labelled]]] = {}
        self._rebind()
        self.states: set[State] = self.closure(set(states))
        self.peak = len(self.states)

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
        internal = self._internal
        push = frontier.append
        add = seen.add
        local = self.local
        if local is None:
            while frontier:
                s = frontier.pop()
                for fn, args in internal:
                    nxt = fn(c, s, *args)
                    if nxt is not None and nxt not in seen:
                        add(nxt)
                        push(nxt)
            return seen
        processes = list(self._by_process)
        by_pc = self._by_pc
        at = self._instances_at
        while frontier:
            s = frontier.pop()
            for p in processes:
                pc = local(s, p)
                insts = by_pc.get((p, pc))
                if insts is None:
                    insts = at(p, pc)
                for fn, args in insts:
                    nxt = fn(c, s, *args)
                    if nxt is not None and nxt not in seen:
                        add(nxt)
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
                    if nxt in out:
                        continue
                    # The spec may leave a bound to an invariant (a queue's capacity): a step
                    # that breaks one is not a behaviour of the design.
                    if any(inv(c, nxt) is not None for inv in invariants):
                        continue
                    out.add(nxt)
        if not out:
            raise NoMatch(sorted(self.states, key=repr), self.misses(ev, procs))
        self.states = self.closure(out)
        if len(self.states) > self.peak:
            self.peak = len(self.states)

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
