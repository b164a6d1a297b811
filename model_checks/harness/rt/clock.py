"""The virtual clock: where it starts, what a thread's read of it shows and how that passes between
threads, sleeps, and what a failure's report is told about timeouts and sleeps (docs/harness.md,
"The clocks" under patch mode, and "The DPOR algorithm", *the virtual clock*)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final

from model_checks.harness.rt.enabled import able_besides
from model_checks.harness.rt.objects import ASK, GLOBAL, RESUME_NONE, TIMEOUT, ObjState, Op, Outcome

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

# The clock starts where a real process's would be (CLOCK_MONOTONIC counts from boot), not at 0,
# so that a program that takes 0.0 for "never" sees a time long past it, as it would in real life.
# Internal: the schedule and the state fingerprint depend only on it, never on real times. Patch
# mode shows the program the real clocks' readings when its check began plus the time since this
# origin (``patch_clock.py``), so a replay in another process reads other absolute times.
MONOTONIC_ORIGIN: Final = 1_000_000.0
# Each read of the clock by a thread is at least this much after the last time the thread has
# seen (its own reads, and those ordered before it by synchronisation): successive reads differ
# and elapsed time is never 0, as on a real clock, while a read stays a function of what happens
# before it, so two reads of different threads still commute.
READ_QUANTUM: Final = 1e-6


def read_clock(ex: Execution) -> float:
    """The running thread reads the virtual clock: at least ``READ_QUANTUM`` after the last time
    it has seen, so a thread's successive reads increase, and so does a read ordered after
    another thread's by synchronisation (``pass_time``)."""
    ex.clock_read = True
    clock = ex.clock
    tid = ex.running_thread()
    if tid is None:  # an invariant or a final check
        return clock
    seen = ex.seen.get(tid)
    if seen is not None and seen + READ_QUANTUM > clock:
        clock = seen + READ_QUANTUM
        ex.compute_time = True
    ex.seen[tid] = clock
    return clock


def now(ex: Execution, tid: int) -> float:
    """The time thread ``tid`` is at: the clock, or the last time it has seen if later (a
    deadline it computed from its reads is where its timed wait ends)."""
    seen = ex.seen.get(tid)
    return ex.clock if seen is None or seen < ex.clock else seen


def pass_time(ex: Execution, tid: int, op: Op) -> None:
    """The time ``tid`` has seen passes along ``op`` as happens-before does: the thread takes the
    latest time handed to its objects, and an operation that is not a pure read hands them its
    own. Only through operations DPOR takes as dependent (two pure reads of an object commute,
    and so do their times), so a read's value is the same in every order DPOR takes as
    equivalent; a ``GLOBAL`` one (a yield, a sleep) passes nothing."""
    objs = op.objs
    if op.timeout is not None and ex.steps[-1].alt == TIMEOUT:
        _past(ex, tid, op.deadline)
    if objs is GLOBAL:
        return
    seen = ex.seen.get(tid)
    by_object = ex.seen_by_object
    for o in objs:
        handed = by_object.get(o)
        if handed is not None and (seen is None or handed > seen):
            seen = handed
    if seen is None:
        return
    ex.seen[tid] = seen
    if not op.read:
        for o in objs:
            by_object[o] = seen


def _past(ex: Execution, tid: int, end: float) -> None:
    """``tid``'s timed wait timed out at ``end``: it returns a quantum past it, as a real one
    returns some time after its deadline, never at it. Read at the very end, in floats near the
    origin (or near ``time.time()``'s 1.8e9 s), a timed-out ``wait(0.05)`` measured
    0.04999999999972715 s (review 13's A2). The step that moved the clock to the deadline moves
    it a quantum further (DPOR already takes it as moving the clock); one that found the clock
    past the deadline leaves it, and the thread's next read is a quantum past the deadline."""
    if ex.clock_moved:
        ex.clock += READ_QUANTUM
    seen = ex.seen.get(tid)
    if seen is None or seen < end:
        ex.seen[tid] = end


def note_timing(ex: Execution, tid: int, op: Op) -> None:
    """Record, for the report (``report_timing.py``), who could run when ``tid``'s timeout or
    sleep ended, and whose timed operation would have ended earlier."""
    ends = op.deadline if op.timeout is not None else now(ex, tid) + float(op.args[0] if op.args else 0.0)
    able = able_besides(ex, tid)
    earlier = []
    for t in ex.live:
        o = t.pending
        timed = o is not None and o.timeout is not None
        if timed and t.tid != tid and t.tid not in able and o is not None and o.deadline < ends:
            earlier.append(t.tid)
    ex.timing.append((len(ex.steps) - 1, sorted(able), earlier))


class YieldState(ObjState):
    """Explicit yield points (and ``time.sleep`` in patch mode): dependent with everything,
    because they stand for shared accesses the harness does not see. A sleep moves the clock by
    its length; one with a timeout (``virtual_timeouts=False``) ends only by timing out, once no
    thread can run, earliest deadline first, as a timed wait does then (the timeout moved the
    clock to its deadline)."""

    kind = "yield"
    fixed_footprint = False
    gates: ClassVar[dict[str, int]] = {"sleep": ASK}

    def footprint(self, op: Op) -> frozenset[int]:
        return GLOBAL

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        return op.timeout is None

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "sleep" and op.args and alt != TIMEOUT:
            ex.clock += float(op.args[0])
        if ex.seen and op.kind == "sleep" and op.args and op.args[0] > 0:
            # (a real sleep returns some time after its end: ``_past``)
            ex.clock += READ_QUANTUM
        return RESUME_NONE
