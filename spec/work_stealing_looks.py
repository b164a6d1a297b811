"""The looks for work a pool's worker may skip or leave unlogged (``spec/work_stealing_open.py``).

WorkStealing looks in one order: its own deque, the injector, victims. The trace contract fixes no
order of a worker's looks and asks no failed look to be logged (docs/work-stealing-trace.md, rules
3, 7 and 9): a port may look at its global queue first (Go does now and then) or log only what it
found. So in a pool's trace a worker may also pop the injector with no look at its own deque
(``PopInjectorFirst``), pass the injector by (``PassInjector``), or go through a whole round that
finds nothing with no look logged (``QuietRound``), to the park it logs. A round still ends in the
re-check before a park; a new round follows a re-check that saw work, or a wake. None of these
steps changes a queue: an unlogged look is one that failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spec import work_stealing as ws
from spec.work_stealing_state import FIND, INJECTOR, STEAL, Local, Resumable, Vars, WorkVisible, at, goto

if TYPE_CHECKING:
    from spec.work_stealing_open import OpenConstants

PARKING = "parking"  # the open model's pc after the re-check found nothing, before the logged park


def Looking(c: OpenConstants, s: Vars, w: str) -> Local | None:
    """A pool's worker at the start of its looks (guarded as ``TakeBegin``: a ready join resumes)."""
    me = at(s, w, FIND)
    return None if c.deques or me is None or Resumable(c, s, w) else me


def PopInjectorFirst(c: OpenConstants, s: Vars, w: str) -> object:
    """WorkStealing's PopInjector, its own deque skipped (or found empty, the look not logged)."""
    me = Looking(c, s, w)
    return None if me is None else ws.PopInjector(c, goto(s, w, Local(INJECTOR, stack=me.stack)), w)


def PassInjector(c: OpenConstants, s: Vars, w: str) -> object:
    """Past the injector: not looked at, or found empty and not logged."""
    me = at(s, w, INJECTOR)
    return None if c.deques or me is None else goto(s, w, Local(STEAL, stack=me.stack))


def QuietRound(c: OpenConstants, s: Vars, w: str) -> object:
    """A round whose looks all failed, none logged, then Register and a re-check that finds nothing
    (one step: nothing is visible then; a notify between them would only make the round a no-op)."""
    me = Looking(c, s, w)
    if me is None or WorkVisible(c, s, w):
        return None
    sleeping = s.sleeping.except_(w, True)
    return goto(s, w, Local(PARKING, stack=me.stack), mem=s.mem.fence(w), sleeping=sleeping)
