"""Which action instances to call in a state: all of them, or only those its program counters allow.

Most action instances return ``None`` at their first guard, usually a test of
their process's program counter. A spec may declare that counter
(``@spec.program_counter``) and, per action, the values it fires from
(``at=``); then the explorer reads each counter once per state and calls only
the instances whose ``at`` contains it. The calls kept for a vector of counter
values are computed once and cached: there are few such vectors. Declaration
order is kept, so a search finds the same states in the same order with or
without the hints (the tests compare both).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from spec.language import Instance

Call = tuple[int, Callable[..., Any], tuple[Hashable, ...], int]  # (action index, fn, args, process id)


class Dispatch:
    """The action instances of an ``Instance``, numbered processes, and the calls worth making per state."""

    def __init__(self, inst: Instance, use_hints: bool = True) -> None:
        self.constants = inst.constants
        self.processes: list[Hashable] = []
        proc_index: dict[Hashable, int] = {}
        by_domain = {id(pc.domain): pc.fn for pc in inst.spec.program_counters}
        # Only the counters some hinted action refers to are read: one slot per (process, domain).
        self.counters: list[tuple[Callable[..., Hashable], Hashable]] = []
        slots: dict[tuple[Hashable, int], int] = {}
        self._calls: list[tuple[Call, frozenset[Hashable] | None, int]] = []
        for a_index, (action, instances) in enumerate(inst.bound):
            hint = action.at if use_hints else None
            for args in instances:
                if args[0] not in proc_index:
                    proc_index[args[0]] = len(self.processes)
                    self.processes.append(args[0])
                slot = -1
                if hint is not None:
                    where = (args[0], id(action.domains[0]))
                    if where not in slots:
                        slots[where] = len(self.counters)
                        self.counters.append((by_domain[where[1]], args[0]))
                    slot = slots[where]
                self._calls.append(((a_index, action.fn, args, proc_index[args[0]]), hint, slot))
        self.names = [action.name for action, _ in inst.bound]
        self.all_calls: list[Call] = [call for call, _, _ in self._calls]
        self._plans: dict[tuple[Hashable, ...], list[Call]] = {}

    @property
    def hinted(self) -> bool:
        return bool(self.counters)

    def plan(self, pcs: tuple[Hashable, ...]) -> list[Call]:
        """The calls that can fire when the program counters are ``pcs`` (in ``counters`` order)."""
        calls = self._plans.get(pcs)
        if calls is None:
            calls = [call for call, hint, slot in self._calls if hint is None or pcs[slot] in hint]
            self._plans[pcs] = calls
        return calls

    def calls(self, state: Any) -> list[Call]:
        """The calls worth making in ``state`` (the hot loop inlines this; kept for readers and tests)."""
        if not self.counters:
            return self.all_calls
        c = self.constants
        return self.plan(tuple([fn(c, state, p) for fn, p in self.counters]))
