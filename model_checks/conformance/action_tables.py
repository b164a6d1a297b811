"""The spec's action instances under one binding of constants, tabled the ways the search looks
them up: internal steps taken at once, deferred ones per process, logged ones per event kind and
process. Recomputed when a process (or an index) joins; nothing here is per state."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
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
