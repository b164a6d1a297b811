"""Stop(discard)'s drops of the injector's tasks one at a time, for the searched spec
(``grow.SEARCHED``).

The reference's Stop(discard) empties the injector under its lock and logs every task in one
``discard`` (the spec's ``DiscardInjector``). The format asks less (docs/work-stealing-trace.md,
rule 8): ``discard`` only in stop(discard), each task at most once and only if it has not run, by
any thread. A port that drops and logs its queued tasks one at a time, in another order, or from
another thread is legal, and the fast model allows it; the search refused it (the third outside
review, session 47, T3). ``DiscardQueued`` drops one queued task: the binding takes each task a
``discard`` lists as a step of its own (``spec_search.StealingSearch._discard``), so the split, the
order and the thread that logs it are free, and a task listed twice, run, or never queued is no step.
"""

from __future__ import annotations

from collections.abc import Iterable

from spec import work_stealing_open as wo
from spec.language import emit
from spec.work_stealing_state import Constants, Task, Vars


def Tasks(c: Constants) -> Iterable[Task]:
    return c.task_names()


def DiscardQueued(c: Constants, s: Vars, p: str, x: Task) -> object:
    """Stop(discard) takes task ``x`` out of the injector and discards it, logged alone. Before the
    flag goes up too: a worker may then still run a task it pops (as one it took before Stop)."""
    pc, _ = s.client
    if pc not in (wo.DISCARD, wo.FLAGGED) or x not in s.injector:
        return None
    out = s._replace(injector=tuple(y for y in s.injector if y != x))
    return emit(wo.Settled(c, out, x), tasks=[x])
