"""A failure's message rendered as its own thread would render it (review 10, row 11).

A failing thread's exception is formatted (``ending.thread_failed``) right after its body raised,
before any other thread has run, outside the controlled threads. A message may hold an object
whose ``__repr__`` takes a controlled lock (a ``concurrent.futures.Future``'s condition, a
program's own class): refused outside a controlled thread, it ended lanecheck with a usage error
and no report. Here the formatting takes those locks for the failing thread, as if it went on
alone: CPython's ``threading.excepthook`` formats the exception in that thread, and a schedule in
which it does so before any other thread moves is one of the program's own. A free lock is taken
and given back (the state is as it was); one held by another thread would make the program wait,
so its repr is not shown and the message says which thread holds the lock. None of this is a step:
the execution's schedule and its exploration are unchanged.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from model_checks.harness.own_lines import reading_lines
from model_checks.harness.rt.objects import NORMAL, LockState, Op, Raise, Resume

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

# the controlled thread whose failure is being rendered (a stack: rendering does not nest in
# practice, but a repr that fails inside one must not leave it set)
RENDERING_FOR: list[int] = []
# each lock a rendering touched, with its owner and count before: put back when it ends, so that a
# repr that raised between its acquire and its release leaves no lock held
_TOUCHED: dict[int, tuple[LockState, int | None, int]] = {}


class WouldWait(Exception):
    """The repr being rendered asked for a lock another thread holds: the program would wait."""


def rendering() -> bool:
    return bool(RENDERING_FOR)


def lock_op_for_rendering(ex: Execution, op: Op) -> object:
    """A lock's acquire or release made by a repr while a failure is rendered (``Execution.perform``
    outside a controlled thread): applied for the failing thread, with no step."""
    obj = op.obj
    if not isinstance(obj, LockState) or op.kind not in ("acquire", "release"):
        raise WouldWait(f"make {op.kind} on {obj.name}, an operation of the program")
    tid = RENDERING_FOR[-1]
    if not obj.enabled(ex, op, tid):  # a blocking (or timed) acquire of a lock held elsewhere
        raise WouldWait(f"wait for {obj.name}, held by {ex.thread_label(obj.owner)}")
    _TOUCHED.setdefault(id(obj), (obj, obj.owner, obj.count))
    out = obj.apply(ex, op, tid, NORMAL)
    if isinstance(out, Raise):
        raise out.error
    assert isinstance(out, Resume)
    return out.value


def render(tid: int, error: BaseException) -> tuple[str, str]:
    """``error``'s message (``Type: text``) and traceback, formatted for controlled thread ``tid``
    (-1: after every thread finished, for a final check)."""
    RENDERING_FOR.append(tid)
    try:
        try:
            text = str(error)
        except WouldWait as waits:
            text = f"<message not shown: its str() would {waits}>"
        except Exception as other:  # the program's own __str__ failing: say so, as traceback does
            text = f"<message not shown: its str() raised {type(other).__name__}: {other}>"
        with reading_lines():  # (the step's end: its lines are read for the report, not by the program)
            tb = "".join(traceback.format_exception(error))
    finally:
        RENDERING_FOR.pop()
        if not RENDERING_FOR:
            for lock, owner, count in _TOUCHED.values():
                lock.owner, lock.count = owner, count
            _TOUCHED.clear()
    name = type(error).__name__
    return (f"{name}: {text}" if text else name), tb
