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


# What one process held may do before an event: (the process, the deferred actions it may take from
# its pc on, the unit they are about or None for any).
Chain = tuple[Hashable, frozenset[str], Hashable]


# What an event needs of the deferred steps: per process, the deferred actions it may take first.
Taking = dict[Hashable, frozenset[str]]


# What may come before an event by the units it may be about (``event_steps``).
FirstSteps = tuple[set[str], dict[Hashable, set[str]], set[str]]


def event_steps(
    procs: tuple[Hashable, ...],
    at: Hashable,
    ruled_out: frozenset[str],
    per: Mapping[Hashable, list[Labelled]],
    units: bool,
    hidden_names: Mapping[Hashable, frozenset[str]],
) -> FirstSteps:
    """What may come before an event from the event itself and the steps not deferred, by the
    units they may be about: (about any unit, about each unit, about one unit)."""
    anywhere: set[str] = set()
    about: dict[Hashable, set[str]] = {}
    some_unit: set[str] = set()
    event_any = at is None or not units
    for p in procs:
        logs = [name for name, _, _ in per.get(p, ()) if name not in ruled_out]
        if event_any:
            anywhere.update(logs)
        else:
            about.setdefault(at, set()).update(logs)
            some_unit.update(logs)
    for hidden in hidden_names.values():
        anywhere.update(hidden)
    return anywhere, about, some_unit


def _may_come_first(first: FirstSteps, u: Hashable, names: Iterable[str]) -> None:
    """Count ``names`` among what may come before the event, about unit ``u`` (None: any)."""
    anywhere, about, some_unit = first
    if u is None:
        anywhere.update(names)
    else:
        about.setdefault(u, set()).update(names)
        some_unit.update(names)


def _blocked(
    names: frozenset[str],
    deferred: Mapping[str, frozenset[str]],
    blocked_of: dict[frozenset[str], frozenset[str]],
) -> frozenset[str]:
    """What one of ``names`` (deferred actions) does not move right past, remembered."""
    blocked = blocked_of.get(names)
    if blocked is None:
        blocked = blocked_of[names] = frozenset().union(*[deferred[n] for n in names])
    return blocked


def needed(
    held: Iterable[tuple[Chain, ...]],
    procs: tuple[Hashable, ...],
    first: FirstSteps,
    *,
    deferred: Mapping[str, frozenset[str]],
    deferred_names: Mapping[Hashable, frozenset[str]],
    blocked_of: dict[frozenset[str], frozenset[str]],
    leading: Mapping[Hashable, frozenset[str]],
    enabled_at: Mapping[str, frozenset[Hashable]],
    moves_to: Mapping[str, frozenset[Hashable]],
    prefixes: dict[tuple[frozenset[str], frozenset[str], frozenset[str]], frozenset[str]],
) -> Taking:
    """The deferred steps an event needs, per process: the event's own (``procs``; ``per`` their
    labelled actions of the event's kind), and those of every process whose deferred step might
    come before a step it does not move right past (that step of another process may come before
    the event, or be the event's), with the steps of that process that may lead to such a step.

    Why no more: take a behaviour to the event and move each deferred step that moves right past
    every step after it (up to the event) to after the event, last first. What stays of each
    process is a prefix of its steps that ends at a step blocked by a later step, of another
    process or the event: such a *conflicting* step and the steps of its process that may lead to
    it (``moves_to``, ``enabled_at``) are all that this gives. Its later steps stay deferred.

    ``held``: per state held, the chains of its processes whose pc lets a deferred step start
    (``movers``: only deferred steps follow a deferred step; a chain keeps its unit). ``first``:
    ``event_steps`` of the event (filled in here); ``blocked_of``: a memo of what a chain's actions do not
    move past; ``leading``: the event's one process (when the search has ``local`` and
    ``moves_to``) with ``leading_to`` of all its deferred actions, worked out once per kind of
    event by the caller: only those may come before its event; ``prefixes``: a memo of the steps
    of a chain that may lead to its conflicting ones."""
    # The steps that may come before the event (or be it), by the units they may be about:
    # ``anywhere`` about any unit, ``about[u]`` about unit ``u`` (``some_unit``: about one).
    anywhere, about, some_unit = first
    taking: dict[Hashable, set[str]] = {p: set() for p in procs if p in deferred_names}
    # The held processes' chains: the event's own ones widen what may come before the event; the
    # others may be pulled in.
    own: dict[Hashable, list[tuple[frozenset[str], Hashable]]] = {}
    others: set[Chain] = set()
    for found in held:
        for chain in found:
            q = chain[0]
            if q in taking:
                own.setdefault(q, []).append((chain[1], chain[2]))
            else:
                others.add(chain)
    for p, mine in own.items():
        before: set[str] = set()
        for names, _ in mine:
            before.update(names)
        # Only the one process that takes the event must end at its pc: with several bound
        # (roles of one thread), any of them may take it, and each other one's deferred steps
        # stay possible whatever pc they lead to.
        lead = leading.get(p)
        if lead is not None:
            before &= lead  # ``leading_to`` keeps each action or not by itself
        taking[p].update(before)
        held_units = {u for _, u in mine}
        if None in held_units:
            anywhere.update(before)
        else:
            for u in held_units:
                about.setdefault(u, set()).update(before)
                some_unit.update(before)
    # Until nothing grows: each chain's steps that a step which may come first does not let move,
    # with the steps that may lead to them. What they do not move past is pulled in in turn.
    pending = list(others)  # the answer is a fixpoint: the order does not change it
    given: dict[Chain, frozenset[str]] = {}
    changed = True
    while changed:
        changed = False
        for chain in pending:
            q, names, u = chain
            blocked = _blocked(names, deferred, blocked_of)
            seen = some_unit if u is None else about.get(u, ())
            if blocked.isdisjoint(anywhere) and blocked.isdisjoint(seen):
                continue
            conflicting = frozenset(
                [n for n in names if not (deferred[n].isdisjoint(anywhere) and deferred[n].isdisjoint(seen))]
            )
            if given.get(chain) == conflicting:
                continue  # its prefix was given: what may come first only grows
            given[chain] = conflicting
            prefix = _prefix(names, conflicting, deferred_names[q], enabled_at, moves_to, prefixes)
            taking.setdefault(q, set()).update(prefix)
            _may_come_first(first, u, prefix)
            changed = True
    return {q: frozenset(names) for q, names in taking.items()}


def _prefix(
    names: frozenset[str],
    conflicting: frozenset[str],
    mine: frozenset[str],
    enabled_at: Mapping[str, frozenset[Hashable]],
    moves_to: Mapping[str, frozenset[Hashable]],
    memo: dict[tuple[frozenset[str], frozenset[str], frozenset[str]], frozenset[str]],
) -> frozenset[str]:
    """Those of ``names`` (one chain's) that are ``conflicting`` or may lead to one of them."""
    key = (names, conflicting, mine)
    found = memo.get(key)
    if found is None:
        targets = [enabled_at.get(n) for n in conflicting]
        rest = set(names.difference(conflicting))
        found = memo[key] = conflicting.union(
            leading_to(rest, targets, mine, enabled_at=enabled_at, moves_to=moves_to)
        )
    return found


def reachable_from(
    pc: Hashable,
    mine: frozenset[str],
    *,
    enabled_at: Mapping[str, frozenset[Hashable]],
    moves_to: Mapping[str, frozenset[Hashable]],
) -> frozenset[str]:
    """The deferred actions of a process (``mine``) that it may take from ``pc`` on: those enabled
    there, then at the pcs they leave it at (``moves_to``; one not declared may lead anywhere, so
    then every one of ``mine``)."""
    names: set[str] = set()
    seen = {pc}
    todo = [pc]
    while todo:
        at = todo.pop()
        for name in mine:
            allowed = enabled_at.get(name)
            if name in names or (allowed is not None and at not in allowed):
                continue
            names.add(name)
            after = moves_to.get(name)
            if after is None:
                return mine
            for nxt in after:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return frozenset(names)


def relevant_chains(
    held: Iterable[tuple[Chain, ...]],
    procs: tuple[Hashable, ...],
    first: FirstSteps,
    tables: tuple[
        Mapping[str, frozenset[str]], Mapping[Hashable, frozenset[str]], dict[frozenset[str], frozenset[str]]
    ],
) -> list[Chain]:
    """The chains of ``held`` that ``needed`` can read, each once: the event's own processes', and
    every other one that some step which may come first does not let move, by an upper bound of
    what ``needed`` finds may come first (every chain's actions counted as if it were pulled in).

    ``needed`` reads the chains held as one set (which state holds a chain does not matter), and a
    chain it never pulls in changes nothing of its answer; so two sets of states with the same
    relevant chains get one answer. Its memo keyed by these recurs where keys of every chain of
    every state did not (docs/conformance.md, "Session 42"). ``first``: ``event_steps`` of the
    event (filled in here); ``tables``: ``deferred``, ``deferred_names`` and ``blocked_of`` as
    ``needed`` takes them."""
    anywhere, about, some_unit = first
    deferred, deferred_names, blocked_of = tables
    met: dict[Chain, None] = {}  # in the order met: the renaming below follows it
    # The event's own processes: as ``needed`` does, each one's actions over all its chains go
    # where any of its units says (anywhere, if one of them is about any unit).
    own_names: dict[Hashable, set[str]] = {}
    own_units: dict[Hashable, set[Hashable]] = {}
    for found in held:
        for chain in found:
            if chain not in met:
                met[chain] = None
                q, names, u = chain
                if q in procs and q in deferred_names:
                    own_names.setdefault(q, set()).update(names)
                    own_units.setdefault(q, set()).add(u)
                else:
                    _may_come_first(first, u, names)
    for q, names_of_q in own_names.items():
        if None in own_units[q]:
            anywhere.update(names_of_q)
        else:
            for u in own_units[q]:
                about.setdefault(u, set()).update(names_of_q)
            some_unit.update(names_of_q)
    kept: list[Chain] = []
    for chain in met:
        q, names, u = chain
        if q in own_names:
            kept.append(chain)
            continue
        blocked = _blocked(names, deferred, blocked_of)
        seen = some_unit if u is None else about.get(u, set())
        if not (blocked.isdisjoint(anywhere) and blocked.isdisjoint(seen)):
            kept.append(chain)
    return kept


Signature = tuple[Chain, ...]


def held_renamed(held: Iterable[Signature], at: Hashable, interned: dict[Signature, Signature]) -> Hashable:
    """What ``needed`` reads of the states held, state by state, as a memo key: each state's
    chains (``held``) with the units renamed one to one in the order met, the event's unit (``at``)
    first, as ``units_renamed`` does. Cheaper than ``relevant_chains`` and less often met again:
    the first of the two memos of ``EventPlanner._plan``. The key is the set of the states'
    signatures, or the one signature itself when one state is held (a tuple never equals a
    frozenset); ``interned``: equal signatures kept as one object, so keys held share them."""
    names: dict[Hashable, int] = {} if at is None else {at: 0}
    renamed: list[Signature] = []
    for chains in held:
        one = tuple(_renamed(chains, names))
        renamed.append(interned.setdefault(one, one))
    if len(renamed) == 1:
        return renamed[0]
    return frozenset(renamed)


def units_renamed(
    chains: Iterable[Chain], at: Hashable, interned: dict[Chain, Chain] | None = None
) -> frozenset[Chain]:
    """``chains`` (``relevant_chains``') as a memo key: the units renamed one to one in the order
    met, the event's unit (``at``) first. ``needed`` compares units only with each other and with
    ``at``, so chains that differ by such a renaming get one answer, and the key recurs where the
    units themselves (actors, mailboxes) do not. ``interned``: a memo in which equal chains are one
    object, so that the keys a memo holds share them."""
    renamed = _renamed(chains, {} if at is None else {at: 0})
    if interned is not None:
        renamed = [interned.setdefault(one, one) for one in renamed]
    return frozenset(renamed)


def _renamed(chains: Iterable[Chain], names: dict[Hashable, int]) -> list[Chain]:
    """``chains`` with each unit renamed by ``names``, a unit not yet named taking the next number."""
    renamed: list[Chain] = []
    for q, pcs, u in chains:
        renamed_unit: Hashable = u
        if u is not None:
            n = names.get(u)
            if n is None:
                n = names[u] = len(names)
            renamed_unit = n
        renamed.append((q, pcs, renamed_unit))
    return renamed


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
