"""The enabled set of a state of one execution: which thread may take which alternative next.

A thread whose pending operation would block is parked by the scheduler, never in the OS, so at
every step the scheduler asks here which actions exist: a thread's operation as it is
(``NORMAL``), a timed wait's expiry (``TIMEOUT``), a condition wait's spurious wake-up
(``SPURIOUS``), within the execution's modelling limits. Split from ``scheduler.py``, which runs
the chosen action; compiled with it (``setup.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_checks.harness.rt.objects import ASK, NORMAL, SPURIOUS, TIMEOUT, Action, Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution


def thread_actions(ex: Execution, tid: int) -> tuple[list[int], bool]:
    """The enabled alternatives of ``tid``, and whether it may time out "when idle"."""
    t = ex.threads[tid]
    op = t.pending
    if t.finished or op is None:
        return [], False
    if op.obj.enabled(ex, op, tid):
        return [NORMAL], False
    alts = []
    idle = False
    if op.timeout is not None and op.timeout >= 0:
        if ex.virtual_timeouts and ex.timeouts_used.get(tid, 0) < ex.timeout_limit:
            alts.append(TIMEOUT)
        else:
            idle = True
            if ex.virtual_timeouts:
                ex.limit_cut.add(f"timeout_limit={ex.timeout_limit}")
    if ex.spurious_wakeups and op.kind == "wake":
        if ex.spurious_used.get(tid, 0) < ex.spurious_limit:
            alts.append(SPURIOUS)
        else:
            ex.limit_cut.add(f"spurious_limit={ex.spurious_limit}")
    return alts, idle


def can_run(ex: Execution, op: Op, tid: int) -> bool:
    """Is ``op``, ``tid``'s pending operation, enabled as it is (``NORMAL``)?"""
    gate = op.gate
    return not gate or (gate == ASK and op.obj.enabled(ex, op, tid))


def enabled_actions(ex: Execution) -> list[Action]:
    """Enabled actions, the running thread's first (so "index 0" means "no preemption")."""
    prev = ex.last or 0
    out: list[Action] = []
    idle: list[int] = []
    # Live threads by id, the running thread's actions moved to the front. This runs at every
    # step, for every thread, so the common cases are decided here: an operation whose
    # ``gate`` says it always runs (most do) or never runs without a notify needs no call, and
    # the alternatives list of ``thread_actions`` is built only for blocked timed or spurious waits.
    for t in ex.live:
        op = t.pending
        assert op is not None  # live threads always have one
        gate = op.gate
        if not gate or (gate == ASK and op.obj.enabled(ex, op, t.tid)):
            if t.tid == prev:
                out.insert(0, t.action)
            else:
                out.append(t.action)
            continue
        if op.timeout is None and not (ex.spurious_wakeups and op.kind == "wake"):
            continue
        tid = t.tid
        alts, may_idle = thread_actions(ex, tid)
        if tid == prev:
            out[0:0] = [(tid, alt) for alt in alts]
        else:
            out += [(tid, alt) for alt in alts]
        if may_idle:
            idle.append(tid)
    if out or not idle:
        if ex.fairness.waits_for and out:
            out = ex.fairness.allowed(out)
        ex.prev_enabled = bool(out) and out[0][0] == prev
        return out
    # nothing else can run: the virtual clock jumps to the earliest deadline (the first
    # thread of the earliest; a loop, not ``min`` with a key: a lambda here would make the
    # compiled core allocate its closure at every call of this per-step function)
    first = idle[0]
    soonest = _deadline(ex, first)
    for tid in idle[1:]:
        deadline = _deadline(ex, tid)
        if deadline < soonest or (deadline == soonest and tid < first):
            first, soonest = tid, deadline
    ex.prev_enabled = first == prev
    return [(first, TIMEOUT)]


def able_besides(ex: Execution, tid: int) -> set[int]:
    """The threads but ``tid`` whose pending operation could run now (a sleeper gives way to them)."""
    able: set[int] = set()
    for t in ex.live:
        op = t.pending
        if t.tid != tid and op is not None and can_run(ex, op, t.tid):
            able.add(t.tid)
    return able


def _deadline(ex: Execution, tid: int) -> float:
    op = ex.threads[tid].pending
    assert op is not None
    return op.deadline
