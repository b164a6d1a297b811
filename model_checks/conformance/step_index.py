"""Where a state's steps are: the spec's action instances, looked up by its processes' pcs.

The trace search (``search.py``) asks of every state it holds which internal steps its
processes' program counters can enable (the steps not deferred, for the closure; the deferred
ones, for an event that needs them), and which deferred actions each process may still take from
its pc (all that ``deferral.needed`` reads of a state). This index answers from the action
instances built once per set of processes (``action_tables``) and from memos keyed by the pcs,
so a state costs a lookup, not a call of every action. The search is its subclass; the two are
one class split by job, compiled together (setup.py, ``SEARCH_FILES``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from model_checks.conformance.action_tables import (
    BothAt,
    FunctionPcs,
    Gated,
    Instance,
    Labelled,
    PartSteps,
    action_tables,
    part_steps,
    steps_at,
)
from model_checks.conformance.deferral import Chain, reachable_from
from spec.language import Spec

try:
    from mypy_extensions import mypyc_attr as mypyc_attr  # re-exported: search.py decorates with it
except ImportError:  # an install without mypy's extensions runs this module as Python: no-op

    def mypyc_attr(*_args: Any, **_kwargs: Any) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls


State = Any

_MISSING = object()

# One part of a state's pcs (``pc_parts``): ``(process, pc)`` pairs.
PcPart = tuple[tuple[Hashable, Hashable], ...]
# How a part is read off a state: (the state's component it depends on, the part of that component).
PartOf = tuple[Callable[[State], Hashable], Callable[[Any], PcPart]]


CACHE_LIMIT = 256  # entries of each memo keyed by pcs (``TraceSearch(cache_limit=...)``)
# Entries of each part's memo by its component's value (at most ``cache_limit``): on the three
# searched designs' bench traces it missed as often at 16 entries as at 256 (a state mostly shares
# its component with the state before, which the identity check answers), and at 256 its
# components and steps were the second largest thing held (docs/conformance.md, "Session 42").
PART_CACHE_LIMIT = 16

M = TypeVar("M", bound=dict[Any, Any])


def bounded(memo: M, limit: int) -> M:
    """``memo``, emptied first when it holds ``limit`` entries (it is one more function's cache:
    what it held is computed again when asked)."""
    if len(memo) >= limit:
        memo.clear()
    return memo


def _no_key(s: State) -> None:
    """The key of every state when the search has no ``local``: one for all."""
    return None


@mypyc_attr(allow_interpreted_subclasses=True)
class StepIndex:
    """The steps a state's pcs can enable, and the deferred actions each process may take."""

    def __init__(
        self,
        spec: Spec,
        constants: Any,
        *,
        local: Callable[[State, Hashable], Hashable] | None,
        enabled_at: Mapping[str, frozenset[Hashable]] | None,
        pc_key: Callable[[State], Hashable] | None,
        pc_parts: Iterable[PartOf],
        deferred: Mapping[str, frozenset[str]] | None,
        unit: Callable[[State, Hashable], Hashable] | None,
        moves_to: Mapping[str, frozenset[Hashable]] | None,
        cache_limit: int,
    ) -> None:
        self.spec = spec
        self.c = constants
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
        # about (the search reads an event's unit off one of its fields). With it, a deferred
        # action does not move past a step named in ``deferred`` only when both are about the
        # same unit (None: about any); ``movers.violations`` checks the claim with the same
        # ``unit``.
        self.unit = unit
        # ``moves_to[action]``: the pcs a deferred action may leave its process at
        # (``movers.violations`` checks it on the spec's reachable states).
        self.moves_to = dict(moves_to or {})
        # The memos keyed by the states' pcs (``_by_key``, ``_deferred_by_key``) meet new
        # combinations of pcs all along a trace: each is emptied when it reaches this many
        # entries, so memory stays bounded on any length of trace.
        self.cache_limit = cache_limit
        self.part_cache_limit = min(cache_limit, PART_CACHE_LIMIT)
        self._deferred_by_key: dict[tuple[Hashable, tuple[Hashable, ...]], list[Instance]] = {}
        self._deferred_by_process: dict[Hashable, list[Gated]] = {}
        self._hidden_names: dict[Hashable, frozenset[str]] = {}
        self._deferred_names: dict[Hashable, frozenset[str]] = {}
        # Per (process, pc): the deferred actions it may take from there (``reachable_from``).
        self._reach: dict[tuple[Hashable, Hashable], frozenset[str]] = {}
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
        self._index()

    def _index(self) -> None:
        """Recompute every action instance and forget every memo: the processes (or constants)
        changed."""
        t = action_tables(self.spec, self.c, self.deferred, self.enabled_at)
        self._internal = t.internal
        self._labelled = t.labelled
        self._by_process = t.by_process
        self._deferred_by_process = t.deferred_by_process
        self._hidden_names = t.hidden_names
        self._deferred_names = t.deferred_names
        self._deferred_by_key = {}
        self._reach = {}
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
                    bounded(memo, self.part_cache_limit)[component] = part
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
                bounded(by_pcs, self.cache_limit)[pairs] = part
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
        bounded(self._by_key, self.cache_limit)[key] = found
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
            bounded(self._deferred_by_key, self.cache_limit)[key] = found
        return found

    def _deferred_at_pc(self, process: Hashable, pc: Hashable) -> list[Instance]:
        """The deferred steps of ``process`` that can be enabled at ``pc``."""
        return steps_at(self._deferred_at, self._deferred_by_process, process, pc)

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
        unit = self.unit
        found: list[Chain] = []
        for part in self._parts(s):
            if unit is not None and part.started is not None:
                # Read off the part (its units too): worked out once per part, whatever the other
                # parts of the state are (a part without units calls ``unit`` per state).
                found.extend(self._part_chains(part))
                continue
            for q, pc in zip(part.starts, part.start_pcs, strict=True):
                found.append((q, self.reach(q, pc), unit(s, q) if unit is not None else None))
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
