"""Where a task is, in words, and the stop events of the sequential model (``model.Model`` inherits
them): ``stop_begin``, ``discard``, ``stop_end`` (rule 8)."""

from __future__ import annotations

from collections import deque
from typing import Any

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_stealing.trace.places import Places
from model_checks.designs.work_stealing.trace.shown import first, show

Task = str | int
Event = dict[str, Any]

# Where a task is (``Model.loc``): a worker index >= 0 means queued in that worker's deque.
INJECTOR, HELD, RUNNING, DONE, DISCARDED = -1, -2, -3, -4, -5


FAILED_WORDS = (
    "stop_end reports the pool failed: no behaviour of the spec fails (the pool's own code raised; "
    "a task that raises is a done with outcome raised)"
)


def same_stopper(ev: Event, stopper: str, began: int) -> None:
    """``stop_end`` is the return of the Stop call whose ``stop_begin`` came at seq ``began``: it is
    logged on the thread that called it (the contract: "the Stop call that began returns"; the
    reference logs both in ``stop``). Both engines refuse another thread's (rule 8)."""
    if ev["thread"] != stopper:
        raise Rejected(
            8,
            f"stop_end by {clip(repr(ev['thread']), 80)}, but the Stop in progress began on "
            f"{clip(repr(stopper), 80)} (stop_begin at seq {began}): a Stop call returns on the "
            "thread that called it",
        )


class StopEvents:
    """The stop handlers and the words of where a task is; the state is ``model.Model``'s."""

    loc: Places
    holder: dict[Task, int]
    injector: deque[Task]
    deques: dict[int, deque[Task]]
    phantom: dict[int, Task]
    stacks: dict[int, list[Task]]
    queued: int
    open: int
    stop_mode: str | None
    stop_seq: int
    stopper: str
    stopped: bool
    stop_returned: int

    def _where(self, task: Task) -> str:
        at = self.loc.get(task)
        if at is None:
            return "was never introduced (no submit ok or push names it)"
        if at >= 0:
            return f"waits in w{at}'s deque (nobody took or stole it)"
        if at == RUNNING:
            on = next((w for w, s in self.stacks.items() if task in s), None)
            return f"runs on w{on} (its done is not logged yet)" if on is not None else "runs"
        return {
            INJECTOR: "waits in the injector (nobody stole it from there)",
            HELD: f"was taken by w{self.holder.get(task)}",
            DONE: "already ran and is done (a task runs at most once)",
            DISCARDED: "was discarded by stop",
        }[at]

    def stop_begin(self, ev: Event) -> None:
        if self.stop_mode is not None:
            raise Rejected(8, f"a second stop_begin: stop already began at seq {self.stop_seq}")
        self.stop_mode = ev["mode"]
        self.stop_seq = ev["seq"]
        self.stopper = ev["thread"]

    def discard(self, ev: Event) -> None:
        if self.stop_mode != "discard":
            began = f"stop({self.stop_mode}) began" if self.stop_mode else "no stop began"
            raise Rejected(
                8, f"discard of {len(ev['tasks'])} tasks, but {began}: only stop(discard) drops tasks"
            )
        gone: dict[int, set[Task]] = {}
        for task in ev["tasks"]:
            at = self.loc.get(task)
            if at is None or at < HELD:
                raise Rejected(8, f"discard lists {show(task)}, which {self._where(task)}")
            if at == HELD:
                del self.holder[task]
            else:
                gone.setdefault(at, set()).add(task)
                self.queued -= 1
            self.loc[task] = DISCARDED
            self.open -= 1
        for at, tasks in gone.items():
            if at == INJECTOR:
                self.injector = deque(x for x in self.injector if x not in tasks)
            else:
                self.deques[at] = deque(x for x in self.deques[at] if x not in tasks)
                if self.phantom.get(at) in tasks:
                    del self.phantom[at]

    def stop_end(self, ev: Event) -> None:
        if self.stop_mode is None or self.stop_returned:
            what = f"stop already ended at seq {self.stop_returned}" if self.stop_mode else "no stop_begin"
            raise Rejected(8, f"stop_end with {what}")
        same_stopper(ev, self.stopper, self.stop_seq)
        self.stop_returned = ev["seq"]
        if ev["mode"] != self.stop_mode:
            began = f"its stop_begin (seq {self.stop_seq}) was {self.stop_mode}"
            raise Rejected(8, f"stop_end reports mode {ev['mode']}, but {began}")
        if ev["result"] != "ok":
            # The reference fails only when its own code raised (a task's exception is its outcome):
            # no behaviour of the spec fails, as every other design's validator says.
            raise Rejected(8, FAILED_WORDS)
        self._all_accounted(f"stop({self.stop_mode}) returns ok")
        self.stopped = True

    def _all_accounted(self, when: str) -> None:
        if not self.open:
            return
        left = first((x for x, at in self.loc.items() if at >= RUNNING), 3)
        words = "; ".join(
            f"{show(x)} " + ("runs and logged no done" if self.loc[x] == RUNNING else self._where(x))
            for x in left
        )
        raise Rejected(
            8, f"{when} while {self.open} tasks neither ran to done nor were discarded: {words} (lost)"
        )
