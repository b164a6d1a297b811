"""The spec the work-stealing search runs: ``spec/work_stealing_open.py``, a grow past the next
array, and Stop(discard) dropping the injector's tasks one at a time (``discards.py``, which
replaces the reference's ``DiscardInjector``: its one event is the same drops, one step per task).

The format's rule 6 lets a ``resize`` grow a buffer to any larger power of two; the spec's ``Grow``
(the reference's) doubles it. So a port that grows 2 → 8 was refused by the search and allowed by the
fast model (the third outside review, session 47, T4). ``GrowPast`` is ``Grow`` to a later array
than the next one: the same copy of [t, b) and the same publishing store of the buffer, logged with
its capacity. The arrays past the known ones are revealed by the trace's ``resize``
(``spec_search._reveal_array``), so the search holds only those a trace names.
"""

from __future__ import annotations

from collections.abc import Iterable

from model_checks.designs.work_stealing.trace.discards import DiscardQueued, Tasks
from spec import work_stealing_open as wo
from spec.language import Action, Spec, emit, variant
from spec.work_stealing_state import (
    BUFFER,
    GROW,
    WRITE,
    Clients,
    Constants,
    CopyInto,
    Vars,
    Workers,
    at,
    goto,
)


def Later(c: Constants) -> Iterable[int]:
    """The arrays a grow may jump to: past the first two (a grow to the next one is ``Grow``)."""
    return range(2, c.generations())


def GrowPast(c: Constants, s: Vars, w: str, new: int) -> object:
    """Copy [t, b) into array ``new``, more than twice the size, then buffer := it; logged."""
    me = at(s, w, GROW)
    if me is None or me.gen is None or new <= me.gen + 1 or new >= c.generations():
        return None
    mem = s.mem.publish(CopyInto(c, s, w, me, new)).store(w, BUFFER(w), new)
    return emit(goto(s, w, me._replace(pc=WRITE, gen=new), mem=mem), capacity=c.size(new))


SEARCHED: Spec = variant(
    wo.OPEN,
    "open, a grow past the next array, queued tasks discarded one at a time",
    add_actions=[
        Action("GrowPast", GrowPast, (Workers, Later), "resize", GrowPast.__doc__ or "", frozenset({GROW})),
        Action("DiscardQueued", DiscardQueued, (Clients, Tasks), "discard", DiscardQueued.__doc__ or ""),
    ],
    drop_actions=("DiscardInjector",),
)
