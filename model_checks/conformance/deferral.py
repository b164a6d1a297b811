"""Which deferred steps an event needs, and which held states a deferred step makes redundant.

The streaming search (``search.py``) takes a design's *deferred* internal steps only when an event
needs them. The design declares, per deferred action, what it does not move right past
(``deferred``), the pcs it can start from (``enabled_at``), the pcs it may leave its process at
(``moves_to``), the unit it is about (``unit``) and the fields its logged actions always emit
(``emits``); ``movers.violations`` checks each table on the spec's reachable states. This module
is what the tables imply, as plain functions of them, so that the search keeps only the stepping.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

State = Any
Labelled = tuple[str, Callable[..., Any], tuple[Hashable, ...]]  # (action name, fn, its arguments)

_MISSING = object()


def may_log(
    emits: Mapping[str, Mapping[str, Any]], optional: frozenset[str], name: str, ev: Mapping[str, Any]
) -> bool:
    """Whether the logged action ``name`` could log ``ev`` by the fields it always emits."""
    for k, v in emits.get(name, {}).items():
        got = ev.get(k, _MISSING)
        if got != v and not (got is _MISSING and k in optional):
            return False
    return True


def needed(
    live: Iterable[State],
    procs: tuple[Hashable, ...],
    at: Hashable,
    ruled_out: frozenset[str],
    per: Mapping[Hashable, list[Labelled]],
    *,
    local: Callable[[State, Hashable], Hashable] | None,
    unit: Callable[[State, Hashable], Hashable] | None,
    deferred: Mapping[str, frozenset[str]],
    deferred_names: Mapping[Hashable, frozenset[str]],
    hidden_names: Mapping[Hashable, frozenset[str]],
    enabled_at: Mapping[str, frozenset[Hashable]],
    moves_to: Mapping[str, frozenset[Hashable]],
    event_at: Mapping[str, frozenset[Hashable] | None],
) -> frozenset[Hashable]:
    """The processes whose deferred steps an event needs, held in ``live``: the event's own
    (``procs``; ``per`` their labelled actions of the event's kind), and every one whose deferred
    step might come before a step it does not move right past (that step of another process may
    come before the event, or be the event's). ``at``: the event's unit (None: any, or the search
    has no ``unit``); ``ruled_out``: the event's actions whose ``emits`` it contradicts."""
    held = list(live)
    # A process's deferred steps can come before the event only where its pc in some state
    # held lets one of them start (``movers``: only deferred steps follow a deferred step).
    # Which of them then: any, once one can start (a chain may reach the others' pcs). What
    # they are about: the process's unit in those states (a chain keeps it: ``movers``).
    possible: dict[Hashable, set[str]] = {}
    about: dict[Hashable, set[Hashable] | None] = {}
    for q in deferred_names:
        if local is None:
            possible[q] = set(deferred_names[q])
            about[q] = None
            continue
        starts: set[Hashable] | None = set()
        for s in held:
            pc = local(s, q)
            if any((allowed := enabled_at.get(name)) is None or pc in allowed for name in deferred_names[q]):
                u = unit(s, q) if unit is not None else None
                if u is None or starts is None:
                    starts = None
                    break
                starts.add(u)
        can_start = starts is None or bool(starts)
        possible[q] = set(deferred_names[q]) if can_start else set()
        about[q] = starts
    # Per process, the steps that may come before the event (or be it), each with the units
    # they may be about (None: any).
    follows: dict[Hashable, list[tuple[set[str], set[Hashable] | None]]] = {}
    event_units: set[Hashable] | None = None if at is None or unit is None else {at}
    for p in procs:
        logs = {name for name, _, _ in per.get(p, ()) if name not in ruled_out}
        follows.setdefault(p, []).append((logs, event_units))
    for r, names in hidden_names.items():
        follows.setdefault(r, []).append((set(names), None))
    taking = {p for p in procs if p in deferred_names}
    for p in taking:
        before = possible[p]
        # Only the one process that takes the event must end at its pc: with several bound
        # (roles of one thread), any of them may take it, and each other one's deferred steps
        # stay possible whatever pc they lead to.
        if moves_to and local is not None and len(procs) == 1:
            before = leading_to(
                before,
                [event_at.get(name) for name, _, _ in per.get(p, ()) if name not in ruled_out],
                deferred_names.get(p, frozenset()),
                enabled_at=enabled_at,
                moves_to=moves_to,
            )
        follows.setdefault(p, []).append((before, about[p]))
    changed = True
    while changed:
        changed = False
        for q in deferred_names:
            if q in taking or not possible[q]:
                continue
            blocked = set().union(*(deferred[n] for n in possible[q]))
            mine = about[q]
            if any(
                r != q
                and not blocked.isdisjoint(names)
                and (mine is None or units_of is None or not mine.isdisjoint(units_of))
                for r, entries in follows.items()
                for names, units_of in entries
            ):
                taking.add(q)
                follows.setdefault(q, []).append((possible[q], mine))
                changed = True
    return frozenset(taking)


def units_renamed(
    starts: Iterable[tuple[tuple[Hashable, Hashable], ...]], at: Hashable
) -> frozenset[tuple[tuple[Hashable, Hashable], ...]]:
    """What ``needed`` reads of the states held, as a memo key: per state, its deferring processes
    whose pc lets a deferred step start, each with its unit there (``starts``), the units renamed
    one to one in the order met, the event's unit (``at``) first. ``needed`` compares units only
    with each other and with ``at``, so states that differ by such a renaming get one answer, and
    the key recurs where the units themselves (actors, mailboxes) do not."""
    names: dict[Hashable, int] = {} if at is None else {at: 0}
    renamed: list[tuple[tuple[Hashable, Hashable], ...]] = []
    for pairs in starts:
        sig: list[tuple[Hashable, Hashable]] = []
        for q, u in pairs:
            if u is not None:
                n = names.get(u)
                if n is None:
                    n = names[u] = len(names)
                u = n
            sig.append((q, u))
        renamed.append(tuple(sig))
    return frozenset(renamed)


def needed_at_most(
    procs: tuple[Hashable, ...],
    ruled_out: frozenset[str],
    per: Mapping[Hashable, list[Labelled]],
    *,
    deferred: Mapping[str, frozenset[str]],
    deferred_names: Mapping[Hashable, frozenset[str]],
    hidden_names: Mapping[Hashable, frozenset[str]],
) -> tuple[frozenset[Hashable], frozenset[Hashable]]:
    """What ``needed`` can give for an event at most, from the tables alone (every deferred step
    possible in some state held, about any unit), and at least (the event's own deferring
    processes). Where the two are equal no state need be looked at: most events of a design whose
    deferred steps are blocked by few actions."""
    own = frozenset([p for p in procs if p in deferred_names])
    names: set[str] = set()
    for p in procs:
        names.update(name for name, _, _ in per.get(p, ()) if name not in ruled_out)
    for hidden in hidden_names.values():
        names.update(hidden)
    taking = set(own)
    for p in own:
        names.update(deferred_names[p])
    changed = True
    while changed:
        changed = False
        for q, mine in deferred_names.items():
            if q in taking:
                continue
            # A process pulls itself in only through another's step (``needed``'s ``r != q``):
            # counting its own names here only widens the bound.
            if any(not deferred[n].isdisjoint(names) for n in mine):
                taking.add(q)
                names.update(mine)
                changed = True
    return frozenset(taking), own


def leading_to(
    names: set[str],
    targets: list[frozenset[Hashable] | None],
    mine: frozenset[str],
    *,
    enabled_at: Mapping[str, frozenset[Hashable]],
    moves_to: Mapping[str, frozenset[Hashable]],
) -> set[str]:
    """Those of ``names`` (deferred actions of one process, ``mine`` all of them) after which its
    deferred steps may bring its pc to one of ``targets`` (the pcs its event's actions fire from;
    None: any)."""
    if any(t is None for t in targets):
        return names
    wanted: set[Hashable] = set().union(*[t for t in targets if t is not None])
    kept: set[str] = set()
    for name in names:
        first = moves_to.get(name)
        if first is None:
            kept.add(name)
            continue
        seen = set(first)
        todo = list(first)
        while todo:
            pc = todo.pop()
            if pc in wanted:
                kept.add(name)
                break
            for then in mine:
                allowed = enabled_at.get(then)
                if allowed is not None and pc not in allowed:
                    continue
                after = moves_to.get(then)
                if after is None:  # not declared: it may lead anywhere
                    kept.add(name)
                    todo = []
                    break
                for nxt in after:
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
    return kept


def dominated(reaches: list[list[int]]) -> set[int]:
    """The states (by number) that a chain of deferred steps from another state held reaches,
    where that one is not reached back: ``reaches[i]`` are the states one step from state ``i``.
    Such a state is in the other's closure, so holding it adds nothing."""
    below: list[set[int]] = []
    for edges in reaches:
        seen = set(edges)
        todo = list(edges)
        while todo:
            for t in reaches[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        below.append(seen)
    # Only a state strictly above another drops it: the states of a cycle of deferred steps
    # reach each other and are all kept (a strict order has a top, which vouches for the rest).
    return {t for i, found in enumerate(below) for t in found if i not in below[t]}
