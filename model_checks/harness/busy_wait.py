"""A thread spinning on plain data is given scheduling points (docs/harness.md, "Data races").

``while not flag.done: pass`` makes no operation the explorer controls: in a schedule that runs
the spinning thread first, no other thread would ever run again, the flag's writer included, and
the check hung with no verdict (session 36). CPython switches threads every few milliseconds; the
explorer switches only at operations. So the race detector counts the plain accesses in a row a
thread makes, with no operation between them, to locations it already accessed since its last
operation; at ``SPIN`` of them the thread sleeps for no time (a scheduling point that orders
nothing, as ``time.sleep(0)`` would), and then every ``SPIN_AGAIN`` accesses until it makes an
operation of its own. A loop over a list's items (a new location each) is work, not a spin. The tracer
also counts the opcodes of code under test: every ``LONG_RUN`` of them it asks what the run did
(``long_run``). A run in which no thread made an operation, no shared location was written, and
the running thread was found spinning (it gave way above) is a spin's: ``ENDLESS`` such runs in a
row, with every other thread given its turn and none making an operation or a write, and the
execution is a livelock (nothing the spinner reads can change). A run of local work (no access:
``for i in range(3_000_000): s += i & 7``) or of progress (a write, a new location) is just long
and goes on, without a scheduling point (it commutes with every other thread's steps); until
session 46 it gave way and, eight runs on, was a livelock: review 13's A7 (p176), a correct
program. A local run is a livelock only where ``endless_loops`` proves the thread can never leave
its loop (``while True: n += 1``); otherwise the time limit, looked at every ``LONG_RUN``
(``step_deadline``), ends it and the verdict is bounded.
Fairness at sleeps (``Options.fair_sleeps``) then lets the others run: the writer sets the flag,
and the spinner's next read of it races with that write (a data race: nothing orders them). A
spin that nothing ends is a livelock at ``max_steps``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_checks.harness import endless_loops, step_deadline
from model_checks.harness.race_frames import Untraced
from model_checks.harness.rt.clock import YieldState
from model_checks.harness.rt.ending import ExecFailure
from model_checks.harness.rt.objects import Op

if TYPE_CHECKING:
    from types import FrameType

    from model_checks.harness.rt.scheduler import Execution

# A step of the programs lanecheck checks makes tens of plain accesses; a spin, a few a loop.
SPIN = 10_000
SPIN_AGAIN = 100
# Opcodes of code under test between two looks at whether any operation ran (``_race_tracer.c``
# counts them too): about a tenth of a second of traced code.
LONG_RUN = 1 << 21
ENDLESS = 8  # spinning runs in a row with no operation or write: about a second of its code


class BusyWait:
    """The plain accesses since the last operation, for one execution."""

    __slots__ = ("cell", "ex", "idle_runs", "limit", "operated", "spun", "touched", "unsynced", "wrote")

    def __init__(self, ex: Execution) -> None:
        self.ex = ex
        # the locations accessed in this step, and how many accesses in a row met one of them
        # again (a loop over a list's items, each a new location, is work, not a spin)
        self.touched: set[tuple[int, object]] = set()
        self.unsynced = 0
        self.limit = SPIN
        self.cell: YieldState | None = None  # made at the first spin: other executions keep their ids
        # since the last ``long_run``: an operation ran, a thread gave way spinning, a shared
        # location was written (progress)
        self.operated = False
        self.spun = False
        self.wrote = False
        self.idle_runs = 0  # spinning runs in a row with none of the others

    def synced(self, op: Op) -> None:
        """An operation ran: a new step (one of the thread's own ends its spin)."""
        self.unsynced = 0
        if self.touched:
            self.touched.clear()
        if op.obj is not self.cell:  # not a busy-wait's own scheduling point
            self.limit = SPIN
            self.operated = True

    def again(self, location: tuple[int, object], write: bool = False) -> bool:
        """An access to ``location`` in this step: is the thread spinning (time to give way)?"""
        touched = self.touched
        if write:
            self.wrote = True  # (a loop writing shared data changes what a spinner reads)
        if location in touched:
            self.unsynced += 1
            return self.unsynced >= self.limit and self.ex.current is not None
        touched.add(location)
        self.unsynced = 0
        return False

    def long_run(self, frame: FrameType | None = None) -> None:
        """``LONG_RUN`` opcodes of code under test ran, the last in ``frame``: a spin's run gives
        way and counts towards a livelock; a local or progressing run goes on (A7)."""
        ex = self.ex
        if step_deadline.ENDS[0] is not None and step_deadline.passed() and ex.current is not None:
            if not ex.aborting and not ex.abandoned:
                step_deadline.stop(ex, ex.current)  # (C2: the check's time limit, inside a long step)
            return
        operated, spun, wrote = self.operated, self.spun, self.wrote
        self.operated = self.spun = self.wrote = False
        tid = ex.current
        if operated or tid is None:
            self.idle_runs = 0
            return
        if not spun or wrote:
            # work (local, writing, or over new locations): not stuck, unless provably endless
            self.idle_runs = 0
            if not spun and not wrote and frame is not None and not ex.aborting:
                self._endless(tid, frame)
            return
        self.idle_runs += 1
        if self.idle_runs >= ENDLESS:
            ex.failure = ex.failure or ExecFailure(
                "livelock",
                f"{ex.thread_label(tid)} spun for {ENDLESS * LONG_RUN:,} instructions re-reading shared "
                "locations with no operation, and no thread made one or wrote a shared location "
                "meanwhile: nothing it reads can change (a spin nothing ends)",
            )
        self.give_way()
        self.spun = False  # (this run's own scheduling point: the next run must spin on its own)

    def _endless(self, tid: int, frame: FrameType) -> None:
        """A local run: a livelock if ``frame`` is in a loop it can never leave (``endless_loops``)."""
        lines = endless_loops.endless(frame)
        if lines is None:
            return
        where = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{lines[0]}"
        ex = self.ex
        ex.failure = ex.failure or ExecFailure(
            "livelock",
            f"{ex.thread_label(tid)} is in an endless loop at {where} (lines {lines[0]}-{lines[1]}): "
            "it runs only plain arithmetic on its own ints, floats and bools, and no instruction in "
            "it leaves the loop or can raise",
        )
        self.give_way()

    def give_way(self) -> None:
        """The running thread sleeps for no time: a scheduling point in its spin (none while the
        execution is torn down: its threads unwind, and what they run on the way is no spin)."""
        if self.ex.aborting:
            return
        self.spun = True
        cell = self.cell
        if cell is None:
            cell = self.cell = YieldState(len(self.ex.objects), "busy-wait")
            self.ex.add_object(cell)
        self.limit = SPIN_AGAIN
        with Untraced():
            self.ex.perform(Op("sleep", cell, (0.0,)))
