"""A thread spinning on plain data is given scheduling points (docs/harness.md, "Data races").

``while not flag.done: pass`` makes no operation the explorer controls: in a schedule that runs
the spinning thread first, no other thread would ever run again, the flag's writer included, and
the check hung with no verdict (session 36). CPython switches threads every few milliseconds; the
explorer switches only at operations. So the race detector counts the plain accesses in a row a
thread makes, with no operation between them, to locations it already accessed since its last
operation; at ``SPIN`` of them the thread sleeps for no time (a scheduling point that orders
nothing, as ``time.sleep(0)`` would), and then every ``SPIN_AGAIN`` accesses until it makes an
operation of its own. A loop over a list's items (a new location each) is work, not a spin. A loop
that makes no access at all (``while True: n += 1``, its locals only) is seen by the tracer's
count of opcodes: ``LONG_RUN`` of them with no operation of any thread since the last count and
the thread gives way too; ``ENDLESS`` such runs in a row, with every other thread given its turn
and none making an operation, and the execution is a livelock (session 37: it ran for ever,
past the time limit, with no verdict).
Fairness at sleeps (``Options.fair_sleeps``) then lets the others run: the writer sets the flag,
and the spinner's next read of it races with that write (a data race: nothing orders them). A
spin that nothing ends is a livelock at ``max_steps``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_checks.harness import step_deadline
from model_checks.harness.race_frames import Untraced
from model_checks.harness.rt.clock import YieldState
from model_checks.harness.rt.ending import ExecFailure
from model_checks.harness.rt.objects import Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

# A step of the programs lanecheck checks makes tens of plain accesses; a spin, a few a loop.
SPIN = 10_000
SPIN_AGAIN = 100
# Opcodes of code under test between two looks at whether any operation ran (``_race_tracer.c``
# counts them too): about a tenth of a second of traced code.
LONG_RUN = 1 << 21
ENDLESS = 8  # long runs in a row with no operation: about half a second to a second of its code


class BusyWait:
    """The plain accesses since the last operation, for one execution."""

    __slots__ = ("cell", "ex", "idle_runs", "limit", "operated", "touched", "unsynced")

    def __init__(self, ex: Execution) -> None:
        self.ex = ex
        # the locations accessed in this step, and how many accesses in a row met one of them
        # again (a loop over a list's items, each a new location, is work, not a spin)
        self.touched: set[tuple[int, object]] = set()
        self.unsynced = 0
        self.limit = SPIN
        self.cell: YieldState | None = None  # made at the first spin: other executions keep their ids
        self.operated = False  # an operation ran since the last ``long_run``
        self.idle_runs = 0  # long runs in a row with none

    def synced(self, op: Op) -> None:
        """An operation ran: a new step (one of the thread's own ends its spin)."""
        self.unsynced = 0
        if self.touched:
            self.touched.clear()
        if op.obj is not self.cell:  # not a busy-wait's own scheduling point
            self.limit = SPIN
            self.operated = True

    def again(self, location: tuple[int, object]) -> bool:
        """An access to ``location`` in this step: is the thread spinning (time to give way)?"""
        touched = self.touched
        if location in touched:
            self.unsynced += 1
            return self.unsynced >= self.limit and self.ex.current is not None
        touched.add(location)
        self.unsynced = 0
        return False

    def long_run(self) -> None:
        """``LONG_RUN`` opcodes of code under test ran: with no operation among them, the running
        thread loops on its own (``while True: n += 1``) and gives way as a spin does."""
        ex = self.ex
        if step_deadline.ENDS[0] is not None and step_deadline.passed() and ex.current is not None:
            if not ex.aborting and not ex.abandoned:
                step_deadline.stop(ex, ex.current)  # (C2: the check's time limit, inside a long step)
            return
        if self.operated:
            self.operated = False
            self.idle_runs = 0
            return
        tid = ex.current
        if tid is None:
            return
        self.idle_runs += 1
        if self.idle_runs >= ENDLESS:
            ex.failure = ex.failure or ExecFailure(
                "livelock",
                f"{ex.thread_label(tid)} ran {ENDLESS * LONG_RUN:,} instructions of its own code with "
                "no operation and no shared access, and no other thread made one meanwhile: an "
                "endless loop (or a computation longer than lanecheck waits for)",
            )
        self.give_way()

    def give_way(self) -> None:
        """The running thread sleeps for no time: a scheduling point in its spin (none while the
        execution is torn down: its threads unwind, and what they run on the way is no spin)."""
        if self.ex.aborting:
            return
        cell = self.cell
        if cell is None:
            cell = self.cell = YieldState(len(self.ex.objects), "busy-wait")
            self.ex.add_object(cell)
        self.limit = SPIN_AGAIN
        with Untraced():
            self.ex.perform(Op("sleep", cell, (0.0,)))
