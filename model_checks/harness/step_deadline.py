"""The check's time limit inside a step: a thread whose code runs on with no operation is stopped
there when the limit passes, and the verdict is "bounded" by it.

The search looks at its ``time_limit`` between executions (``Search.out_of_budget``). An outside
review (thirteenth, C2) had ``--time-limit 5`` end after 11.9 s: one step, two threads' 3,000,000
turns of local arithmetic, ran 8.7 s under the race detector's tracer, and nothing looked at the
clock meanwhile. The tracer already counts a long run of opcodes with no operation
(``busy_wait.LONG_RUN``, about a tenth of a second of traced code) and calls the detector; there
the clock is read (``passed``), and past the limit the execution is abandoned as a real-time wait
past it is (``patch_io_outside.abandon``): no outcome, no failure of its own, the running thread
parked for good until teardown unwinds it, and the reason in the verdict's "bounded by". Armed
while the search runs an execution of its own (``Search.run``) and, since session 46, while it
replays the failing one for its report (``Search._with_sources``: stopped, it is shown without
source lines); a ``--replay`` stopped so is bounded, not a divergence (``cut``), and the
shrinking of a failure gets what is left of the limit (``remaining``). Not seen: a long step with
the race detector off (no tracer counts its opcodes), and a long call of C code (one opcode: the
interpreter runs nothing of ours until it returns).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from model_checks.harness.race_frames import Untraced
from model_checks.harness.rt.objects import EventState, Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

# ``perf_counter()`` when the running search's time runs out, while it runs an execution; else None
ENDS: list[float | None] = [None]
LIMIT: list[float] = [0.0]
STOPPED = "reached inside a step"  # (the reason's words: ``time_limit=2s reached inside a step ...``)
# (taken at import, before patch mode replaces ``time.perf_counter``, whose stand-in reads the
# virtual clock in a controlled thread: the deadline is real time, as ``Search.start`` is)
_clock: Final = time.perf_counter


def arm(start: float, time_limit: float | None) -> None:
    """The search that started at ``start`` runs an execution: its steps end at the time limit."""
    if time_limit is None:
        ENDS[0] = None
    else:
        ENDS[0] = start + time_limit
        LIMIT[0] = time_limit


def disarm() -> None:
    ENDS[0] = None


def passed() -> bool:
    """Is the running search past its time limit?"""
    ends = ENDS[0]
    return ends is not None and _clock() >= ends


# how far past the limit an execution must end for the verdict to say the limit could not hold
LATE = 1.0
OVERRUN = "could not stop it"  # (the note's words)


def late_note() -> str | None:
    """Said when the running execution ends ``LATE`` or more past the limit: what lanecheck could
    not stop (measured, session 46: ``sum(range(10**9))`` ran 12 s past a 2 s limit)."""
    ends = ENDS[0]
    if ends is None or _clock() - ends < LATE:
        return None
    return (
        f"time_limit={LIMIT[0]:g}s overrun by {_clock() - ends:.1f}s inside one execution: lanecheck "
        f"{OVERRUN} there (a long call of C code that runs no Python, such as sum(range(10**9)), or "
        "a long step with the race detector off: nothing counts its opcodes)"
    )


def cut(ex: Execution) -> bool:
    """Was ``ex`` stopped inside a step at the time limit (``stop``)?"""
    return ex.abandoned and any(STOPPED in reason for reason in ex.limit_cut)


def remaining(time_limit: float | None, spent: float) -> float | None:
    """What is left of ``time_limit`` after ``spent`` seconds (None: no limit)."""
    return None if time_limit is None else max(0.0, time_limit - spent)


def stop(ex: Execution, tid: int) -> None:
    """Past the time limit in ``tid``'s step: the execution is abandoned there, ``tid`` parked for
    good (teardown unwinds it)."""
    ex.abandoned = True
    ex.limit_cut.add(
        f"time_limit={LIMIT[0]:g}s {STOPPED} of {ex.thread_label(tid)} (its code ran on with no "
        "operation: that execution was stopped there)"
    )
    made = ex.new_object(lambda oid: EventState(oid, "the time limit (passed inside a step)"))
    assert isinstance(made, EventState)
    with Untraced():
        ex.perform(Op("wait", made, ()))  # never enabled


__all__ = ["ENDS", "OVERRUN", "STOPPED", "arm", "cut", "disarm", "late_note", "passed", "remaining", "stop"]
