"""Which internal actions of a spec move right: the condition behind the streaming search's
deferred steps (``search.TraceSearch(deferred=...)``), checked on the spec's reachable states.

An internal action ``d`` of process ``q`` *moves right past* an action ``a`` of another process
when, from every reachable state ``s``: if ``s -d-> u -a-> t`` then ``s -a-> u' -d-> t`` with
``a`` logging the same fields. Then in any behaviour a ``d`` step followed by steps it moves
past can be taken after them instead, which is what lets the search leave it untaken until
an event needs it. The search also needs the internal steps that may follow ``d`` in its own
process to be deferred too (so no step the search takes at once is held back with it).

A design declares, per deferred action, the actions it does *not* move past (``blocked``);
``violations`` lists the pairs the spec's reachable states contradict, and a design's test
asserts there are none. Two more facts the search relies on are checked with each pair: the
state in between after the swap (``s -a-> u'``) keeps the spec's invariants whenever the state
after both does (the search drops an event's successor that breaks one), and, given the search's
``local``, another process's step never moves ``q``'s program counter (the search decides from
the pcs it holds which processes' deferred steps an event needs). The answer covers the
configurations it is run on: evidence for the trace checker's larger constants, not a proof.

Per unit (``unit``, ``unit_field``: the search's options of the same names): a blocked pair then
holds only between steps about the same unit (a mailbox), so the pairs about different units are
checked like any other, and two more facts the search relies on are checked: a deferred step
leaves its process's unit as it was while a deferred step of it may follow, and no step of
another process changes it (``MOVES_UNIT``).

With ``moves_to`` (the search's option: the pcs each deferred action leaves its process at) the
search also trusts the spec's ``at=`` of its logged actions (the pcs they fire from) and that no
step of another process moves a deferring process's pc: all three are checked on every step taken
from a reachable state (``LEAVES_PC``, ``OUTSIDE_AT``, ``MOVES_PC``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.language import Action, Emitted, Spec

# A broken claim: the deferred action, and the other action it does not move past (or
# ``ENDS`` when the deferred step leaves its process an internal step that is not deferred).
Violation = tuple[str, str]
_NOTHING = object()
ENDS = "<its process's internal steps end>"
# Suffixes of the second name of a violation: the swap breaks an invariant in between, or the
# other process's step moves the deferred action's process's program counter.
BREAKS_INVARIANT = " (the state in between breaks an invariant)"
MOVES_PC = " (moves the deferred process's pc)"
MOVES_UNIT = " (changes the deferred process's unit)"
# Second names of a violation of a pc table: a deferred step left its process at a pc its
# ``moves_to`` does not list; a logged action fired from a pc outside its ``at``.
LEAVES_PC = "<leaves its process at a pc not in moves_to>"
OUTSIDE_AT = "<fires from a pc outside its at>"
# A logged action emitted another value for a field its ``emits`` fixes.
EMITS_OTHER = "<emits another value than its emits>"


@dataclass(frozen=True)
class _Inst:
    action: Action
    args: tuple[Hashable, ...]

    @property
    def process(self) -> Hashable:
        return self.args[0]


def _apply(inst: _Inst, c: Any, s: Any) -> tuple[Any, Mapping[str, Any] | None] | None:
    r = inst.action.fn(c, s, *inst.args)
    if r is None:
        return None
    if type(r) is Emitted:
        return r.state, dict(r.fields)
    return r, None


def violations(
    spec: Spec,
    constants: Any,
    blocked: Mapping[str, frozenset[str]],
    *,
    local: Callable[[Any, Hashable], Hashable] | None = None,
    unit: Callable[[Any, Hashable], Hashable] | None = None,
    unit_field: str | None = None,
    moves_to: Mapping[str, frozenset[Hashable]] | None = None,
    emits: Mapping[str, Mapping[str, Any]] | None = None,
    limit: int = 200_000,
) -> tuple[set[Violation], int]:
    """The claims of ``blocked`` (deferred action -> the actions it need not move past) that the
    states reachable under ``constants`` contradict, and how many states were examined (all of
    them, or ``limit`` when there are more: then the answer covers only those). ``local`` is the
    search's program counter of a process in a state; without it pcs are not checked. ``unit``:
    the unit a process's step is about (an event's: its field ``unit_field``); with it a blocked
    pair binds only steps about the same unit (None: any). ``moves_to``: checked with the logged
    actions' ``at`` (needs ``local``). ``emits``: the fields each logged action always emits."""
    invariants = [inv.fn for inv in spec.invariants]

    def holds(state: Any) -> bool:
        return all(inv(constants, state) is None for inv in invariants)

    insts = [_Inst(a, args) for a in spec.actions for args in a.instances(constants)]
    deferred = [i for i in insts if i.action.name in blocked]
    deferring: dict[Hashable, list[str]] = {}  # process -> its deferred actions
    for i in deferred:
        deferring.setdefault(i.process, []).append(i.action.name)

    def unit_of(inst: _Inst, state: Any, fields: Mapping[str, Any] | None) -> Hashable:
        if unit is None:
            return None
        if fields is not None and unit_field is not None and unit_field in fields:
            return fields[unit_field]  # type: ignore[no-any-return]
        return unit(state, inst.process)

    assert spec.init_fn is not None
    start = list(spec.init_fn(constants))
    seen = set(start)
    todo = deque(start)
    found: set[Violation] = set()
    examined = 0
    while todo and examined < limit:
        s = todo.popleft()
        examined += 1
        for d in deferred:
            stepped = _apply(d, constants, s)
            if stepped is None:
                continue
            u = stepped[0]
            q = d.process
            dname = d.action.name
            if (
                moves_to is not None
                and local is not None
                and dname in moves_to
                and local(u, q) not in moves_to[dname]
            ):
                found.add((dname, LEAVES_PC))
            mine = unit(s, q) if unit is not None else None
            for other in insts:
                if other.process == q:
                    name = other.action.name
                    if other.action.event is None and name not in blocked and _apply(other, constants, u):
                        found.add((d.action.name, ENDS))
                    if (
                        unit is not None
                        and name in blocked
                        and unit(u, q) != mine
                        and _apply(other, constants, u) is not None
                    ):
                        found.add((d.action.name, name + MOVES_UNIT))
                    continue
                after = _apply(other, constants, u)
                if after is None:
                    continue
                if other.action.name in blocked[d.action.name]:
                    theirs = unit_of(other, u, after[1])
                    if mine is None or theirs is None or theirs == mine:
                        continue
                before = _apply(other, constants, s)
                back = None if before is None else _apply(d, constants, before[0])
                if before is None or before[1] != after[1] or back is None or back[0] != after[0]:
                    found.add((d.action.name, other.action.name))
                    continue
                if holds(after[0]) and not holds(before[0]):
                    found.add((d.action.name, other.action.name + BREAKS_INVARIANT))
                if local is not None and (
                    local(before[0], q) != local(s, q) or local(after[0], q) != local(u, q)
                ):
                    found.add((d.action.name, other.action.name + MOVES_PC))
        for inst in insts:
            nxt = _apply(inst, constants, s)
            at = inst.action.at
            logged = inst.action.event is not None and nxt is not None and at is not None
            if (
                logged
                and moves_to is not None
                and local is not None
                and local(s, inst.process) not in (at or ())
            ):
                found.add((inst.action.name, OUTSIDE_AT))
            fixed = emits.get(inst.action.name) if emits is not None else None
            if (
                fixed
                and nxt is not None
                and any((nxt[1] or {}).get(k, _NOTHING) != v for k, v in fixed.items())
            ):
                found.add((inst.action.name, EMITS_OTHER))
            if unit is not None and nxt is not None:
                # Whether or not a deferred step is enabled yet: the search reads a process's unit
                # in the states it holds, before other processes' steps it may take first.
                for q, names in deferring.items():
                    if q != inst.process and unit(nxt[0], q) != unit(s, q):
                        found.add((names[0], inst.action.name + MOVES_UNIT))
            if moves_to is not None and local is not None and nxt is not None:
                # ``moves_to`` narrows a process's deferred steps to those leading to the pc of its
                # event: only its own steps may move that pc, from any reachable state, not only
                # where a deferred step of it is enabled (the swap's check above).
                for q, names in deferring.items():
                    if q != inst.process and local(nxt[0], q) != local(s, q):
                        found.add((names[0], inst.action.name + MOVES_PC))
            if nxt is not None and nxt[0] not in seen:
                seen.add(nxt[0])
                todo.append(nxt[0])
    return found, examined


__all__ = [
    "BREAKS_INVARIANT",
    "EMITS_OTHER",
    "ENDS",
    "LEAVES_PC",
    "MOVES_PC",
    "MOVES_UNIT",
    "OUTSIDE_AT",
    "Violation",
    "violations",
]
