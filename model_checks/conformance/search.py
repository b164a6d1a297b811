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
the verdicts. Action instances are computed once per set of processes, so a
step is a loop of plain calls.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from heapq import heappop, heappush
from typing import Any, TypeVar

from model_checks.conformance.action_tables import (
    BothAt,
    Gated,
    Instance,
    Labelled,
    PartSteps,
    action_tables,
    part_steps,
    steps_at,
)
from model_checks.conformance.action_tables import FunctionPcs as FunctionPcs  # for bindings
from model_checks.conformance.deferral import (
    Chain,
    Taking,
    dominated,
    leading_to,
    may_log,
    needed,
    needed_at_most,
    reachable_from,
    units_renamed,
)
from model_checks.conformance.near_miss import Miss as Miss
from model_checks.conformance.near_miss import NoMatch as NoMatch
from model_checks.conformance.near_miss import near_misses
from spec.language import Emitted, Spec

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # an install without mypy's extensions runs this module as Python: no-op

    def mypyc_attr(*_args: Any, **_kwargs: Any) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls


State = Any
# Called with the search after each event it took (``TraceSearch.observer``): its ``states`` and
# ``c`` are then what some behaviour could be in, under the constants bound so far.
Observer = Callable[["TraceSearch"], None]


_MISSING = object()

# One part of a state's pcs (``pc_parts``): ``(process, pc)`` pairs.
PcPart = tuple[tuple[Hashable, Hashable], ...]
# How a part is read off a state: (the state's component it depends on, the part of that component).
PartOf = tuple[Callable[[State], Hashable], Callable[[Any], PcPart]]


CACHE_LIMIT = 256  # entries of each memo keyed by pcs (``TraceSearch(cache_limit=...)``)
# ``_plan``'s memo holds this many times as many: its entries are small (a plan per event kind and
# what the held states' chains are), and on one design's 20k-event bench trace they take about
# 1,600 values, so at 256 it was emptied every few hundred events and ``needed`` ran again for two
# events in three (the measurements: docs/conformance.md, "Session 29").
PLAN_CACHE_FACTOR = 16

M = TypeVar("M", bound=dict[Any, Any])


def _bounded(memo: M, limit: int) -> M:
    """``memo``, emptied first when it holds ``limit`` entries (it is one more function's cache:
    what it held is computed again when asked)."""
    if len(memo) >= limit:
        memo.clear()
    return memo


# What an event needs of the deferred steps: the processes whose steps are taken first, with (or
# None: every one) the actions each may take, and the processes as a set.
Plan = tuple[tuple[Hashable, ...], Taking | None, frozenset[Hashable]]


def _no_key(s: State) -> None:
    """The key of every state when the search has no ``local``: one for all."""
    return None


# Compiled by mypyc at install (setup.py, SEARCH_FILES); tests and bindings subclass it in Python.
@mypyc_attr(allow_interpreted_subclasses=True)
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
        pc_parts: Iterable[PartOf] = (),
        deferred: Mapping[str, frozenset[str]] | None = None,
        unit: Callable[[State, Hashable], Hashable] | None = None,
        unit_field: str | None = None,
        moves_to: Mapping[str, frozenset[Hashable]] | None = None,
        emits: Mapping[str, Mapping[str, Any]] | None = None,
        cache_limit: int = CACHE_LIMIT,
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
        # ``pc_parts``: the pcs in parts, each read off one component of a state, ``(component,
        # part)``: ``part(component(state))`` is a tuple of ``(process, local(state, process))``
        # pairs, and the parts together name every process (``pc_key`` is then not used). Each
        # part's steps are worked out once per value of its component (remembered by identity
        # first: a state mostly shares a component with the state it comes from), and a state's
        # steps are its parts': where processes move independently (producers and workers), whole
        # keys rarely recur, but each part's do. ``forget_pcs`` when a part's meaning changes
        # (it may read the constants). Only with ``local`` (the pcs' meaning) given.
        self.pc_parts: tuple[PartOf, ...] = tuple(pc_parts) if local is not None else ()
        # The parts whose pcs come with their processes' units (``FunctionPcs(unit=...)``): read
        # with the pcs, where ``unit`` would be a call per state and process.
        self._part_pcs: list[FunctionPcs | None] = [
            pcs_of if isinstance(pcs_of, FunctionPcs) else None for _, pcs_of in self.pc_parts
        ]
        # ``deferred[action]``: the actions (of other processes) it does not move right past;
        # it moves past every other one (``movers.violations`` checks the claim).
        self.deferred = dict(deferred or {})
        # ``unit(state, process)``: the unit (a mailbox, a lane) a process's deferred steps are
        # about; an event's unit is its field ``unit_field``, and an internal step's is its
        # process's. With it, a deferred action does not move past a step named in ``deferred``
        # only when both are about the same unit (None: about any); ``movers.violations`` checks
        # the claim with the same ``unit``.
        self.unit = unit
        self.unit_field = unit_field
        # ``moves_to[action]``: the pcs a deferred action may leave its process at. With the
        # labelled actions' ``at`` (the pcs they fire from), an event's own process's deferred
        # step that cannot lead to the event's pc is not one that comes before it (a step that
        # leaves its process where it never logs this event), so it pulls in no other process's
        # steps. ``movers.violations`` checks both tables on the spec's reachable states.
        self.moves_to = dict(moves_to or {})
        # ``emits[action]``: fields a logged action always emits with these values. An event
        # that shows another value is not that action's, in any state: it is no candidate, and
        # no other process's step needs to come before it (``movers.violations`` checks it).
        self.emits = {name: dict(fields) for name, fields in (emits or {}).items()}
        self._event_at: dict[str, frozenset[Hashable] | None] = {
            a.name: a.at for a in spec.actions if a.event is not None
        }
        # The memos keyed by the states' pcs (``_by_key``, ``_deferred_by_key``, ``_relevant``)
        # meet new combinations of pcs all along a trace: each is emptied when it reaches this
        # many entries (``_relevant``: ``PLAN_CACHE_FACTOR`` times as many), so memory stays
        # bounded on any length of trace.
        self.cache_limit = cache_limit
        self.plan_cache_limit = PLAN_CACHE_FACTOR * cache_limit
        self._deferred_by_key: dict[tuple[Hashable, tuple[Hashable, ...]], list[Instance]] = {}
        self._deferred_by_process: dict[Hashable, list[Gated]] = {}
        self._hidden_names: dict[Hashable, frozenset[str]] = {}
        self._deferred_names: dict[Hashable, frozenset[str]] = {}
        # ``needed`` by (kind, processes, what decides it of the states held and the event).
        self._relevant: dict[tuple[Any, ...], Plan] = {}
        # ``needed``'s memo of the steps of a chain that may lead to its conflicting ones.
        self._prefixes: dict[tuple[frozenset[str], frozenset[str], frozenset[str]], frozenset[str]] = {}
        # Each action's name by its function: which deferred steps of a process an event needs.
        self._name_of: dict[Callable[..., Any], str] = {a.fn: a.name for a in spec.actions}
        # Per (process, pc): the deferred actions it may take from there (``reachable_from``).
        self._reach: dict[tuple[Hashable, Hashable], frozenset[str]] = {}
        # Per set of deferred actions: the actions one of them does not move right past.
        self._blocked_of: dict[frozenset[str], frozenset[str]] = {}
        # Per event (kind, its one process, ruled out): that process's deferred actions after
        # which it may reach the pcs the event's actions fire from (``leading_to``).
        self._leads: dict[
            tuple[str, tuple[Hashable, ...], frozenset[str]], dict[Hashable, frozenset[str]]
        ] = {}
        # ``needed_at_most`` by event: (kind, processes, ruled out) -> (at most, at least, the plan
        # when they are equal).
        self._bounds: dict[
            tuple[str, tuple[Hashable, ...], frozenset[str]],
            tuple[frozenset[Hashable], frozenset[Hashable], Plan],
        ] = {}
        self._internal: list[Instance] = []
        self._by_process: dict[Hashable, list[Gated]] = {}
        # Per process, per pc: its steps (not deferred) and its deferred steps enabled there.
        self._by_pc: dict[Hashable, dict[Hashable, list[Instance]]] = {}
        self._deferred_at: dict[Hashable, dict[Hashable, list[Instance]]] = {}
        self._both_at: BothAt = {}
        self._processes: tuple[Hashable, ...] = ()
        self._by_key: dict[Hashable, list[Instance]] = {}
        self._key_of: Callable[[State], Hashable] = self._pcs
        # With ``pc_parts``: per part, its steps by the component's value, and the last component
        # met with its steps (checked by identity first); the last state's parts.
        self._part_memo: list[dict[Hashable, PartSteps]] = []
        self._part_last: list[tuple[object, PartSteps | None]] = []
        # Per part that asks for it (``FunctionPcs(by_pcs=True)``), its steps by its pcs: a new
        # component value (a producer's script position moved on) mostly has pcs met before.
        self._pcs_memo: list[dict[PcPart, PartSteps]] = []
        self._last_state: object = _MISSING
        self._last_parts: tuple[PartSteps, ...] = ()
        self._labelled: dict[str, dict[Hashable, list[Labelled]]] = {}
        self._closed: set[State] | None = None
        self._rebind()
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
        self._closed = None
        t = action_tables(self.spec, self.c, self.deferred, self.enabled_at)
        self._internal = t.internal
        self._labelled = t.labelled
        self._by_process = t.by_process
        self._deferred_by_process = t.deferred_by_process
        self._hidden_names = t.hidden_names
        self._deferred_names = t.deferred_names
        self._deferred_by_key = {}
        self._relevant = {}
        self._prefixes = {}
        self._reach = {}
        self._leads = {}
        self._bounds = {}
        self._by_pc = {}
        self._deferred_at = {}
        self._both_at = {}
        self._processes = tuple(t.by_process)
        self._by_key = {}
        self._key_of = self.pc_key if self.pc_key is not None else self._pcs if self.local else _no_key
        self._part_memo = [{} for _ in self.pc_parts]
        self._part_last = [(_MISSING, None) for _ in self.pc_parts]
        self._pcs_memo = [{} for _ in self.pc_parts]
        self._last_state = _MISSING

    def forget_pcs(self, part: int) -> None:
        """Work the pcs of ``pc_parts[part]`` out again: what it reads besides its component (the
        constants: a script entry announced) changed (without ``pc_parts``, nothing)."""
        if not self.pc_parts:
            return
        self._part_memo[part].clear()
        self._part_last[part] = (_MISSING, None)
        self._pcs_memo[part].clear()
        self._last_state = _MISSING

    def _parts(self, s: State) -> tuple[PartSteps, ...]:
        """With ``pc_parts``: the steps of each part of ``s``'s pcs (its processes' steps at their
        pcs), each worked out once per value of the part's component."""
        if s is self._last_state:
            return self._last_parts
        found: list[PartSteps] = []
        for i, (component_of, pcs_of) in enumerate(self.pc_parts):
            component = component_of(s)
            last = self._part_last[i]
            part = last[1]
            if component is not last[0] or part is None:
                memo = self._part_memo[i]
                part = memo.get(component)
                if part is None:
                    part = self._part_of(i, component, pcs_of(component))
                    _bounded(memo, self.cache_limit)[component] = part
                self._part_last[i] = (component, part)
            found.append(part)
        parts = tuple(found)
        self._last_state = s
        self._last_parts = parts
        return parts

    def _part_of(self, i: int, component: Any, pairs: PcPart) -> PartSteps:
        """Part ``i``'s steps at ``pairs`` (its pcs, read off ``component``), with the units the
        component gives its processes; remembered by the pcs too where the part says so
        (``FunctionPcs(by_pcs=True)``)."""
        reader = self._part_pcs[i]
        by_unit = reader is None or not reader.by_pcs
        by_pcs = self._pcs_memo[i]
        part = None if by_unit else by_pcs.get(pairs)
        if part is None:
            part = part_steps(
                pairs,
                self._both_at,
                self._by_pc,
                self._by_process,
                self._deferred_at,
                self._deferred_by_process,
            )
            if reader is not None and reader.has_units:
                part.started = reader.started(component, part.starts, part.start_pcs)
            if not by_unit:
                _bounded(by_pcs, self.cache_limit)[pairs] = part
        return part

    def part_pcs(self, s: State) -> tuple[PcPart, ...]:
        """With ``pc_parts``: each part's ``(process, pc)`` pairs in ``s``, as the search reads them
        (tests compare them with ``local``)."""
        return tuple([part.pcs for part in self._parts(s)])

    def _pcs(self, s: State) -> tuple[Hashable, ...]:
        local = self.local
        if local is None:  # the closure keys by pcs only when it has ``local``
            raise TypeError("TraceSearch: program counters need ``local``")
        return tuple([local(s, p) for p in self._processes])

    def _instances_for(self, s: State, key: Hashable) -> list[Instance]:
        """The internal steps that can be enabled in a state whose processes' pcs give ``key``."""
        found: list[Instance] = []
        for p, pc in zip(self._processes, self._pcs(s), strict=True):
            found.extend(self._instances_at(p, pc))
        _bounded(self._by_key, self.cache_limit)[key] = found
        return found

    def _steps_of(self, s: State) -> tuple[list[Instance], ...]:
        """The internal steps (not deferred) that the pcs of ``s`` can enable, in lists."""
        if self.pc_parts:
            return tuple([part.steps for part in self._parts(s)])
        if self.local is None:  # every internal step is tried in every state
            return (self._internal,)
        key = self._key_of(s)
        found = self._by_key.get(key)
        return (found if found is not None else self._instances_for(s, key),)

    def _instances_at(self, process: Hashable, pc: Hashable) -> list[Instance]:
        """The internal steps (not deferred) of ``process`` that can be enabled at ``pc``."""
        return steps_at(self._by_pc, self._by_process, process, pc)

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

    # -- deferred steps ----------------------------------------------------------------------------

    def _deferred_for(self, s: State, processes: tuple[Hashable, ...]) -> list[Instance]:
        """The deferred steps of ``processes`` that their program counters in ``s`` can enable
        (looked up by the state's key, or its parts' steps, as the closure's steps are)."""
        if self.pc_parts:
            # The parts name every process's pc: no call of ``local``.
            steps: list[Instance] = []
            for part in self._parts(s):
                for p, later in part.deferred:
                    if p in processes:
                        steps.extend(later)
            return steps
        key = (self._key_of(s), processes)
        found = self._deferred_by_key.get(key)
        if found is None:
            local = self.local
            found = []
            for p in processes:
                if local is not None:
                    found.extend(self._deferred_at_pc(p, local(s, p)))
                else:  # without ``local`` every deferred step of the process is tried
                    found.extend((fn, args) for fn, args, _ in self._deferred_by_process.get(p, ()))
            _bounded(self._deferred_by_key, self.cache_limit)[key] = found
        return found

    def _deferred_at_pc(self, process: Hashable, pc: Hashable) -> list[Instance]:
        """The deferred steps of ``process`` that can be enabled at ``pc``."""
        return steps_at(self._deferred_at, self._deferred_by_process, process, pc)

    def _may_log(self, name: str, ev: Mapping[str, Any]) -> bool:
        """Whether the logged action ``name`` could log ``ev`` by the fields it always emits."""
        return may_log(self.emits, self.optional, name, ev)

    def _taking(self, *event: Any) -> frozenset[Hashable]:
        """The processes whose deferred steps this event needs (``_plan``'s; tests read it)."""
        return self._plan(*event)[2]

    def _plan(
        self,
        kind: str,
        procs: tuple[Hashable, ...],
        at: Hashable = None,
        ruled_out: frozenset[str] = frozenset(),
    ) -> Plan:
        """The deferred steps this event needs (``deferral.needed``), memoised by what decides it:
        the event, the held states' pcs and their units."""
        bounds = self._bounds.get((kind, procs, ruled_out))
        if bounds is None:
            most, least = needed_at_most(
                procs,
                ruled_out,
                self._labelled.get(kind, {}),
                deferred=self.deferred,
                deferred_names=self._deferred_names,
                hidden_names=self._hidden_names,
            )
            # The event's own processes only: every step of theirs, as the closure has them.
            bounds = (most, least, (tuple(least), None, least))
            _bounded(self._bounds, self.cache_limit)[(kind, procs, ruled_out)] = bounds
        if bounds[0] == bounds[1]:
            return bounds[2]
        live = self.live
        memo_key: tuple[Any, ...]
        held: list[tuple[Chain, ...]] | None = None
        if self.pc_parts:
            # Only what ``needed`` reads of the states (each deferring process that can start,
            # with what it can take from its pc and its unit): far more events then find their
            # answer in the memo (docs/conformance.md, "Session 21").
            held = [self._start_chains(s) for s in live]
            memo_key = (kind, procs, units_renamed(held, at), at is None, ruled_out)
        else:
            keys = frozenset([self._key_of(s) for s in live])
            unit = self.unit
            # The units held join the memo's key: a ``pc_key`` is not trusted to determine them
            # (nothing checks that it does), and the pcs alone do not.
            units: frozenset[tuple[Hashable, ...]] = (
                frozenset([tuple([unit(s, q) for q in self._deferred_names]) for s in live])
                if unit is not None
                else frozenset()
            )
            memo_key = (kind, procs, keys, at, units, ruled_out)
        found = self._relevant.get(memo_key)
        if found is not None:
            return found
        taking = needed(
            held if held is not None else [self._chains(s) for s in live],
            procs,
            at,
            ruled_out,
            self._labelled.get(kind, {}),
            units=self.unit is not None,
            deferred=self.deferred,
            deferred_names=self._deferred_names,
            hidden_names=self._hidden_names,
            blocked_of=self._blocked_of,
            leading=self._leading(kind, procs, ruled_out),
            enabled_at=self.enabled_at,
            moves_to=self.moves_to,
            prefixes=self._prefixes,
        )
        # Each process's steps of the actions it may need only (with every one, nothing is
        # checked step by step).
        whole = all([names == self._deferred_names.get(p) for p, names in taking.items()])
        found = (tuple(taking), None if whole else taking, frozenset(taking))
        _bounded(self._relevant, self.plan_cache_limit)[memo_key] = found
        return found

    def _leading(
        self, kind: str, procs: tuple[Hashable, ...], ruled_out: frozenset[str]
    ) -> dict[Hashable, frozenset[str]]:
        """``needed``'s ``leading`` for this event: worked out once per kind, process and ruled out."""
        key = (kind, procs, ruled_out)
        found = self._leads.get(key)
        if found is None:
            found = {}
            if self.moves_to and self.local is not None and len(procs) == 1:
                per = self._labelled.get(kind, {})
                for p in procs:
                    mine = self._deferred_names.get(p)
                    if mine is None:
                        continue
                    targets = [
                        self._event_at.get(name) for name, _, _ in per.get(p, ()) if name not in ruled_out
                    ]
                    found[p] = frozenset(
                        leading_to(
                            set(mine), targets, mine, enabled_at=self.enabled_at, moves_to=self.moves_to
                        )
                    )
            _bounded(self._leads, self.cache_limit)[key] = found
        return found

    def _starts(self, s: State) -> tuple[tuple[Hashable, Hashable], ...]:
        """With ``pc_parts``: the processes whose deferred steps can start in ``s`` (by their pcs,
        read off its key), with their units there."""
        unit = self.unit
        found: list[tuple[Hashable, Hashable]] = []
        for part in self._parts(s):
            started = part.started
            if started is not None and unit is not None:
                found.extend(started)
                continue
            for q in part.starts:
                found.append((q, unit(s, q) if unit is not None else None))
        return tuple(found)

    def _start_chains(self, s: State) -> tuple[Chain, ...]:
        """With ``pc_parts``: ``_starts`` with the deferred actions each process may take from its
        pc, ``(process, actions, unit)``: all that ``deferral.needed`` reads of a state."""
        parts = self._parts(s)
        if self.unit is not None and all([part.started is not None for part in parts]):
            # Read off the parts (their units too): worked out once per part.
            return tuple([chain for part in parts for chain in self._part_chains(part)])
        found: list[Chain] = []
        pcs = [pc for part in parts for pc in part.start_pcs]
        for (q, u), pc in zip(self._starts(s), pcs, strict=True):
            found.append((q, self.reach(q, pc), u))
        return tuple(found)

    def _part_chains(self, part: PartSteps) -> tuple[Chain, ...]:
        """A part's ``(process, actions, unit)`` when it names its units (``started``)."""
        chains = part.chains
        if chains is None:
            started = part.started
            assert started is not None
            chains = part.chains = tuple(
                [(q, self.reach(q, pc), u) for (q, u), pc in zip(started, part.start_pcs, strict=True)]
            )
        return chains

    def _chains(self, s: State) -> tuple[Chain, ...]:
        """``_start_chains`` without ``pc_parts``: by ``local`` and ``unit`` (without ``local``,
        every deferred action of every deferring process, about any unit)."""
        local = self.local
        unit = self.unit
        found: list[Chain] = []
        for q, mine in self._deferred_names.items():
            if local is None:
                found.append((q, mine, None))
                continue
            names = self.reach(q, local(s, q))
            if names:
                found.append((q, names, unit(s, q) if unit is not None else None))
        return tuple(found)

    def reach(self, process: Hashable, pc: Hashable) -> frozenset[str]:
        """The deferred actions ``process`` may take from ``pc`` on (``deferral.reachable_from``),
        worked out once per process and pc."""
        key = (process, pc)
        found = self._reach.get(key)
        if found is None:
            found = reachable_from(
                pc,
                self._deferred_names.get(process, frozenset()),
                enabled_at=self.enabled_at,
                moves_to=self.moves_to,
            )
            self._reach[key] = found
        return found

    def starts(self, s: State) -> tuple[tuple[Hashable, Hashable], ...]:
        """With ``pc_parts``: the processes whose deferred steps can start in ``s``, with their
        units, as the search reads them (tests compare them with ``local`` and ``unit``)."""
        return self._starts(s)

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
