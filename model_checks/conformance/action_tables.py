"""The spec's action instances under one binding of constants, tabled the ways the search looks
them up: internal steps taken at once, deferred ones per process, logged ones per event kind and
process. Recomputed when a process (or an index) joins; nothing here is per state."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.language import Spec

Instance = tuple[Callable[..., Any], tuple[Hashable, ...]]
Labelled = tuple[str, Callable[..., Any], tuple[Hashable, ...]]  # (action name, fn, its arguments)
# An internal step of one process with the pcs it can be enabled at (None: any).
Gated = tuple[Callable[..., Any], tuple[Hashable, ...], frozenset[Hashable] | None]


@dataclass(frozen=True)
class ActionTables:
    internal: list[Instance]  # the internal steps taken at once (not deferred)
    labelled: dict[str, dict[Hashable, list[Labelled]]]  # event kind -> process -> its actions
    by_process: dict[Hashable, list[Gated]]  # every process, with its internal steps not deferred
    deferred_by_process: dict[Hashable, list[Gated]]
    hidden_names: dict[Hashable, frozenset[str]]  # a process's internal actions not deferred
    deferred_names: dict[Hashable, frozenset[str]]


def action_tables(
    spec: Spec,
    constants: Any,
    deferred: Mapping[str, frozenset[str]],
    enabled_at: Mapping[str, frozenset[Hashable]],
) -> ActionTables:
    """Every action instance of ``spec`` under ``constants``; ``deferred`` names the internal
    actions taken only when an event needs them, ``enabled_at`` the pcs an action can start at."""
    internal: list[Instance] = []
    labelled: dict[str, dict[Hashable, list[Labelled]]] = {}
    by_process: dict[Hashable, list[Gated]] = {}
    deferred_by_process: dict[Hashable, list[Gated]] = {}
    hidden_names: dict[Hashable, set[str]] = {}
    deferred_names: dict[Hashable, set[str]] = {}
    for action in spec.actions:
        for args in action.instances(constants):
            if action.event is not None:
                per = labelled.setdefault(action.event, {})
                per.setdefault(args[0], []).append((action.name, action.fn, args))
                continue
            later = action.name in deferred
            if not later:
                internal.append((action.fn, args))
            into = deferred_by_process if later else by_process
            into.setdefault(args[0], []).append((action.fn, args, enabled_at.get(action.name)))
            (deferred_names if later else hidden_names).setdefault(args[0], set()).add(action.name)
            by_process.setdefault(args[0], [])
    # The search reads a process's pcs to decide whether its deferred steps can come before an
    # event, which holds only while nothing but deferred steps follow a deferred step of it
    # (``movers`` checks that for the step right after, not after a blocked step of another
    # process, which could enable an internal step taken at once): not supported until a design
    # needs it.
    mixed = sorted(repr(p) for p in deferred_names if hidden_names.get(p))
    if mixed:
        raise ValueError(
            f"TraceSearch: process(es) {', '.join(mixed)} have both deferred internal actions and "
            "internal actions that are not deferred; defer all of a process's internal actions or none"
        )
    return ActionTables(
        internal=internal,
        labelled=labelled,
        by_process=by_process,
        deferred_by_process=deferred_by_process,
        hidden_names={p: frozenset(n) for p, n in hidden_names.items()},
        deferred_names={p: frozenset(n) for p, n in deferred_names.items()},
    )


def steps_at(
    table: dict[Hashable, dict[Hashable, list[Instance]]],
    gated: Mapping[Hashable, list[Gated]],
    process: Hashable,
    pc: Hashable,
) -> list[Instance]:
    """The steps of ``process`` (``gated[process]``) that can be enabled at ``pc``, kept in
    ``table`` per process and pc: a process's pcs are few, so each is worked out once."""
    per = table.get(process)
    if per is None:
        per = table[process] = {}
    found = per.get(pc)
    if found is None:
        found = per[pc] = [
            (fn, args) for fn, args, allowed in gated.get(process, ()) if allowed is None or pc in allowed
        ]
    return found


class PartSteps:
    """What the search reads of one part of a state's pcs (``TraceSearch(pc_parts=...)``): its
    processes' internal steps (not deferred) that can be enabled there, in the part's order, and
    per process whose deferred steps can start there those steps."""

    def __init__(
        self,
        pcs: tuple[tuple[Hashable, Hashable], ...],
        steps: list[Instance],
        deferred: list[tuple[Hashable, list[Instance]]],
        start_pcs: tuple[Hashable, ...],
    ) -> None:
        self.pcs = pcs  # the part's ``(process, pc)`` pairs
        self.steps = steps
        self.deferred = deferred
        # the deferring processes whose pc lets one of their deferred steps start, and those pcs
        self.starts = tuple([p for p, _ in deferred])
        self.start_pcs = start_pcs
        # those processes with their units as the search's ``unit`` gives them, when the part's
        # component names them (``FunctionPcs(unit=...)``); else None
        self.started: tuple[tuple[Hashable, Hashable], ...] | None = None
        # with ``started``: those processes with the deferred actions each may take from its pc
        # and its unit (``deferral.Chain``, what ``needed`` reads of a state); else None
        self.chains: tuple[tuple[Hashable, frozenset[str], Hashable], ...] | None = None


# Per process, per pc: its steps taken at once and its deferred steps enabled there (both lists
# are ``steps_at``'s, looked up together).
BothAt = dict[Hashable, dict[Hashable, tuple[list[Instance], list[Instance]]]]


def part_steps(
    pairs: tuple[tuple[Hashable, Hashable], ...],
    both: BothAt,
    by_pc: dict[Hashable, dict[Hashable, list[Instance]]],
    by_process: Mapping[Hashable, list[Gated]],
    deferred_at: dict[Hashable, dict[Hashable, list[Instance]]],
    deferred_by_process: Mapping[Hashable, list[Gated]],
) -> PartSteps:
    """The steps of the ``(process, pc)`` pairs of one part, from the per-process tables
    (``steps_at``): the steps taken at once and the deferred ones, each in the pairs' order."""
    steps: list[Instance] = []
    deferred: list[tuple[Hashable, list[Instance]]] = []
    start_pcs: list[Hashable] = []
    for p, pc in pairs:
        per = both.get(p)
        if per is None:
            per = both[p] = {}
        at = per.get(pc)
        if at is None:
            at = per[pc] = (
                steps_at(by_pc, by_process, p, pc),
                steps_at(deferred_at, deferred_by_process, p, pc),
            )
        steps.extend(at[0])
        if at[1]:
            deferred.append((p, at[1]))
            start_pcs.append(pc)
    return PartSteps(pairs, steps, deferred, tuple(start_pcs))


class FunctionPcs:
    """A part's pcs (``TraceSearch(pc_parts=...)``) read off a component that is a ``Function``
    from process to its local tuple, whose item ``index`` is the pc (``index=None``: the value is
    the pc itself): ``(process, pc)`` for each process, in the function's order. Compiled with the
    search, so that a part it meets at every new function (about every event) costs no Python;
    ``refine(process, local)`` gives the pc instead where the item is one of ``refined`` (a pc the
    binding splits by what the trace has shown so far: then ``forget_pcs`` when that changes).
    With ``unit``, item ``unit`` of the local tuple is the process's unit (what the search's
    ``unit`` gives: tests check they agree), read with the part rather than by a call per state;
    with ``unit_at`` too, only at those pcs (at the others its unit is None: any). ``unit_at``
    alone (``()``): no process of the part has a unit at any pc. ``unit_of`` instead of ``unit``: a
    process's unit is ``unit_of(process)`` wherever it is (a pool thread's own event), worked out
    with the part's steps, once per part, not by a call of the search's ``unit`` per state and
    process. ``by_pcs``: the component changes
    where its pcs do not (a script position moves on), so the search remembers the part's steps by
    its pcs too (only for a part whose units do not come from the component)."""

    def __init__(
        self,
        index: int | None = 0,
        refined: Iterable[Hashable] = (),
        refine: Callable[[Any, Any], Hashable] | None = None,
        unit: int | None = None,
        unit_at: Iterable[Hashable] | None = None,
        by_pcs: bool = False,
        unit_of: Callable[[Hashable], Hashable] | None = None,
    ) -> None:
        self.index = index
        self.refined = frozenset(refined)
        self.refine = refine
        self.unit = unit
        self.unit_at = None if unit_at is None else frozenset(unit_at)
        self.unit_of = unit_of
        self.has_units = unit is not None or unit_at is not None or unit_of is not None
        # A unit read off the component is not the same for equal pcs; ``unit_of``'s is.
        self.by_pcs = by_pcs and unit is None

    def __call__(self, component: Any) -> tuple[tuple[Hashable, Hashable], ...]:
        names: tuple[Hashable, ...] = component.domain()
        locals_: tuple[Any, ...] = component.values()
        refined = self.refined
        refine = self.refine
        index = self.index
        pairs: list[tuple[Hashable, Hashable]] = []
        for i, local in enumerate(locals_):
            pc: Hashable = local if index is None else local[index]
            if refine is not None and pc in refined:
                pc = refine(names[i], local)
            pairs.append((names[i], pc))
        return tuple(pairs)

    def started(
        self, component: Any, processes: tuple[Hashable, ...], pcs: tuple[Hashable, ...]
    ) -> tuple[tuple[Hashable, Hashable], ...] | None:
        """``processes`` (at ``pcs``) with their units (item ``unit`` of each one's local tuple,
        where ``unit_at`` lets it be read; else None); None without ``unit`` or ``unit_at``."""
        if not self.has_units:
            return None
        unit_of = self.unit_of
        if unit_of is not None:
            return tuple([(p, unit_of(p)) for p in processes])
        unit = self.unit
        at = self.unit_at
        if at is None and unit is not None:
            return tuple([(p, component[p][unit]) for p in processes])
        if unit is None:
            return tuple([(p, None) for p in processes])
        found: list[tuple[Hashable, Hashable]] = []
        for p, pc in zip(processes, pcs, strict=True):
            u: Hashable = None
            if unit is not None and (at is None or pc in at):
                u = component[p][unit]
            found.append((p, u))
        return tuple(found)
