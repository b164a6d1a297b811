"""What DPOR (``search.py``) and the state search (``stateful.py``) take as dependent beyond two
operations on a common object (``objects.dependent``): which pairs can never be enabled together
(a race needs both), and the virtual clock, which a thread's code reads and another thread's
timeout moves though the two touch no common object, and a step that changed the process's state
(``as_global``) (docs/harness.md, "The DPOR algorithm")."""

from __future__ import annotations

from model_checks.harness.rt.enabled import thread_actions
from model_checks.harness.rt.objects import GLOBAL, ConditionState, LockState, Op, ThreadState
from model_checks.harness.rt.scheduler import Execution

# Operations that raise unless their thread owns the condition's lock: one that ran without
# raising ran while its thread held the lock.
NEEDS_LOCK = frozenset({"wait", "notify", "notify_all"})

Clock = list[int]  # DPOR's vector clocks (``search.py``)


def join_clocks(a: Clock, b: Clock) -> Clock:
    if len(a) < len(b):
        a = a + [0] * (len(b) - len(a))
    return [max(x, b[i]) if i < len(b) else x for i, x in enumerate(a)]


def may_go_on(ex: Execution, tid: int) -> bool:
    """Could thread ``tid``'s pending operation run (or time out) in the state reached?"""
    alts, idle = thread_actions(ex, tid)
    return bool(alts) or idle


def waits_for(later: Op) -> LockState | None:
    """The lock ``later`` can run only while it is free: a blocking, untimed acquire, or a woken
    waiter's reacquire. None for every other operation."""
    if later.kind == "acquire" and later.timeout is None and isinstance(later.obj, LockState):
        return later.obj if later.args and later.args[0] else None
    if later.kind == "reacquire" and isinstance(later.obj, ConditionState):
        return later.obj.lock
    return None


def coenabled(earlier: Op, later: Op, earlier_raised: bool) -> bool:
    """False only for pairs that can never be enabled together: a thread's exit and a join of it,
    and an operation that needs a lock free (``waits_for``) against one that another thread ran
    while it held that lock (a release, or a condition's wait / notify / notify_all that did not
    raise). In the state before such an ``earlier`` the lock was held by its thread, so ``later``
    (of another thread: races are between threads) was disabled there and cannot be run first."""
    if earlier.kind == "exit" and later.kind == "join":
        return False
    lock = waits_for(later)
    if lock is None or earlier_raised:
        return True
    if earlier.kind == "release":
        return earlier.obj is not lock
    if earlier.kind in NEEDS_LOCK and isinstance(earlier.obj, ConditionState):
        return earlier.obj.lock is not lock
    return True


def as_global(op: Op) -> Op:
    """``op`` as a step whose code changed the process's state (``process_watch``): the same
    operation (its enabledness, what it waits for) dependent with every other."""
    return Op(op.kind, op.obj, op.args, op.timeout, False, GLOBAL, op.source, op.deadline, op.result)


# the pool of idents a worker's spawn takes from and its exit gives back to (``observed``): no
# object's id (those are >= 0; ``GLOBAL`` is -1)
IDENT_POOL = frozenset({-2})


def ident_op(op: Op) -> Op:
    """``op`` of a search whose program read an ident (``observed.Observed.idents``): a spawn or
    an exit also a write of the pool of idents, so that DPOR orders a thread's start both ways
    against another's end (review 13, F5)."""
    obj = op.obj
    # (the main thread's ident is the real one's, never freed: its exit is not the pool's)
    if type(obj) is not ThreadState or op.objs is GLOBAL or (op.kind == "exit" and obj.tid == 0):
        return op
    if op.kind == "spawn" or op.kind == "exit":
        return Op(
            op.kind,
            op.obj,
            op.args,
            op.timeout,
            False,
            op.objs | IDENT_POOL,
            op.source,
            op.deadline,
            op.result,
        )
    return op


class ClockReaders:
    """Which threads' steps read the virtual clock in a search (sticky across its executions).

    The program's own reads always count. A timed operation's deadline (the clock when it
    started) counts once the program has read the clock in this search: until then no execution
    has shown a time, and a deadline decides only what a later read of the clock shows (and which
    idle thread's timeout expires first once the timeout limit is spent: docs/harness.md, "The
    DPOR algorithm", *the virtual clock*). A sleeping thread's step ran where it was explored, so
    whether it reads the clock is known from then on."""

    def __init__(self) -> None:
        self.program: set[int] = set()
        self.deadline: set[int] = set()

    def saw(self, ex: Execution, tid: int) -> bool:
        """Record the step just run by ``tid``; did it read the clock?"""
        if ex.clock_read:
            self.program.add(tid)
        if ex.deadline_read:
            self.deadline.add(tid)
        return ex.clock_read or (ex.deadline_read and bool(self.program))

    def threads(self) -> set[int]:
        return self.program | self.deadline if self.program else set()


NO_THREADS: set[int] = set()


def clock_conflict(reads: bool, moves: bool, tid: int, pending: Op, readers: set[int]) -> bool:
    """Do a step (that read the clock, or moved it) and thread ``tid``'s ``pending`` operation,
    asleep, conflict through the virtual clock though they touch no common object? The step read
    it and ``pending`` may time out and move it; or the step moved it and the sleeper's step
    reads it (``readers``: ``ClockReaders.threads``)."""
    return (reads and pending.timeout is not None) or (moves and tid in readers)
