"""The lock-free Work Lane: an atomic state word changed only by CAS, and a lock-free queue.

A lane has no mutex. Its state ``Idle | Scheduled | Draining`` is one ``atomic_int`` and its
queue a ``BoundedQueue`` (linearizable push and pop). The two decisions the lock-based lane
makes under its mutex become sequences of atomic steps (spec/work_lane_lockfree.py, one action
per step; docs/work-lane-lockfree.md):

* a post: **push** the item, then **CAS Idle -> Scheduled**; the thread whose CAS wins owes the
  lane's submission. Pushing first is what makes it safe: a drainer that lets the lane go
  after our push re-checks and sees the item, and one that let it go before leaves the lane
  Idle for our CAS.
* the end of a drain: **CAS Draining -> Idle**, **re-check** the queue, and if it holds items
  **CAS Idle -> Scheduled**; the winner resubmits. A producer whose CAS lost to Draining pushed
  before it, so the re-check after the release sees its item.

Between the steps other threads run, and the explorer found two things the lock-based lane
cannot do (both harmless, both documented): a drainer may pop and run an item between its
producer's push and CAS, so the producer then reserves a lane that may be empty (an *empty
drain* follows: one wasted take); and a producer's CAS may win the lane from a drainer that
re-checked.

**Trace events** (trace format version 2, design ``work-lane-lockfree``; docs/trace-format.md,
"Trace format v2"), one event per atomic step: ``push`` (ok, or the load that saw the queue
full), ``cas`` (from, to, ok) for each of the three lane-word CASes a post or a drain end makes,
``drain_begin`` at the Scheduled -> Draining CAS, ``pop`` and ``invoke``, ``recheck``, and
``reset`` with the items Stop(discard)'s reset destroyed. No event has to guess an outcome
that a later step decides.

**The trace order is a linearisation order.** With a tracer, each atomic step and its event are
made under a trace lock of the object the step touches (one for the lane word, one for the
queue; ``_word_step``, ``_queue_step``). Without it a thread can be preempted between its step
and its event: a drainer's pop frees a slot, a producer's push fills it and is logged, and the
pop is logged after it, so the trace shows a push ok on a full queue (rule 6) although the
queue never held more than ``lane_capacity`` items. Under the locks each object's steps are
logged in the order they took effect, and each thread's in program order, so the trace is an
execution of the same steps with the same results. A lock spans one step, never the window
between two (push and CAS, release and re-check): the races the spec explores stay open.
Without a tracer there are no locks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from .arguments import show
from .runtime import AtomicInt
from .tracing import Fields
from .work_lane import POST_ACCEPTED, POST_ACCEPTED_SUBMIT, POST_FULL, LaneBase, PostOutcome, SharedEnv
from .work_lane_lockfree_queue import EMPTY, BoundedQueue, Empty

T = TypeVar("T")

_log = logging.getLogger("reference")

_UNTRACED: AbstractContextManager[object] = nullcontext()

# The lane word's values.
IDLE, SCHEDULED, DRAINING = 0, 1, 2
STATE_NAMES = ("idle", "scheduled", "draining")


@dataclass(eq=False)
class LockFreeEnv(SharedEnv):
    """A lock-free scheduler's: the shared fields, the Stop(discard) flag as an atomic, and
    tracing that never lets a tracer's failure undo a step."""

    # 1 once Stop(discard) closed admission (or the scheduler failed): no new drain begins. An
    # atomic, not a plain flag: workers read it with no lock held.
    discarding: AtomicInt = field(init=False)

    def __post_init__(self) -> None:
        self.discarding = self.runtime.atomic_int(0, name="scheduler.discarding")

    def emit(self, event: str, fields: Fields) -> None:
        """Record one trace event, if tracing. The tracer is user code and the step it describes
        has taken effect, so if it raises the step must stand (an accepted item must not look
        refused, a popped one must still run): the failure is logged, the trace lacks the event."""
        tracer = self.tracer
        if tracer is None:
            return
        try:
            tracer.emit(self.runtime.thread_name(), event, fields)
        except BaseException:
            _log.exception("tracing %s failed; the step stands", event)

    def item_label(self, item: object) -> object:
        """An item's name in trace events; never raises (``item_label`` is user code)."""
        try:
            return self.label(item)
        except BaseException:
            _log.exception("item_label raised for %s", show(item))
            return show(item)


class LockFreeLane(LaneBase[T, LockFreeEnv]):
    """One lane: its word, its queue, its ``invoke(context, item)``. The scheduler is the only caller;
    the protected methods are the seams the reference mutants override one at a time."""

    def __init__(
        self, index: int, invoke: Callable[[Any, T], object], context: Any, env: LockFreeEnv
    ) -> None:
        super().__init__(index, invoke, context, env)
        self.word = env.runtime.atomic_int(IDLE, name=f"lane[{index}].word")
        self.queue: BoundedQueue[T] = BoundedQueue(env.runtime, env.capacity, name=f"lane[{index}].queue")
        # One trace lock per object, not per lane: a push and a word CAS stay independent steps.
        traced = env.tracer is not None
        self._word_lock = env.runtime.lock(name=f"lane[{index}].word.trace") if traced else None
        self._queue_lock = env.runtime.lock(name=f"lane[{index}].queue.trace") if traced else None

    def __repr__(self) -> str:
        return f"LockFreeLane(index={self.index})"

    # -- tracing ---------------------------------------------------------

    def _emit(self, event: str, fields: Fields) -> None:
        self.env.emit(event, fields)

    def _label(self, item: T) -> object:
        return self.env.item_label(item)

    def _post_fields(self, item: T, result: str) -> Fields:
        """A ``post`` event's fields: the post refused before its push (INVALID_STATE)."""
        return {"lane": self.index, "item": self._label(item), "result": result}

    def _word_step(self) -> AbstractContextManager[object]:
        """The lane word's trace lock around one step on the word and its event (untraced: none)."""
        lock = self._word_lock
        return _UNTRACED if lock is None else lock

    def _queue_step(self) -> AbstractContextManager[object]:
        """The queue's trace lock around one step on the queue and its event (untraced: none)."""
        lock = self._queue_lock
        return _UNTRACED if lock is None else lock

    def _cas_word(self, expect: int, new: int, **extra: object) -> bool:
        """CAS the lane word and log the ``cas`` event, as one step."""
        if self._tracer is None:
            return self.word.compare_and_swap(expect, new)
        with self._word_step():
            ok = self.word.compare_and_swap(expect, new)
            fields = {"lane": self.index, "from": STATE_NAMES[expect], "to": STATE_NAMES[new], "ok": ok}
            self._emit("cas", {**fields, **extra})
        return ok

    def _push(self, item: T) -> bool:
        """Push ``item`` and log the ``push`` event, as one step: False when the queue was full."""
        if self._tracer is None:
            return self.queue.push(item)
        label = self._label(item)  # user code: outside the lock
        with self._queue_step():
            pushed = self.queue.push(item)
            result = "ok" if pushed else "capacity_exceeded"
            self._emit("push", {"lane": self.index, "item": label, "result": result})
        return pushed

    def trace_refused(self, item: T) -> None:
        """The admission check saw Stop: the ``post`` of an INVALID_STATE refusal."""
        if self._tracer is not None:
            self._emit("post", self._post_fields(item, "invalid_state"))

    # -- producers' side -------------------------------------------------

    def publish(self, item: T) -> PostOutcome:
        """Push ``item``, then CAS Idle -> Scheduled (the caller passed the admission check)."""
        if not self._push(item):
            return POST_FULL
        won = self._cas_word(IDLE, SCHEDULED)
        # Lost: Scheduled or Draining; its holder will pop our item, or its drainer's re-check,
        # which comes after its release, which comes after our CAS saw Draining, will see it.
        return POST_ACCEPTED_SUBMIT if won else POST_ACCEPTED

    # -- the draining worker's side --------------------------------------

    def _begin_drain(self) -> bool:
        with self._word_step():
            # Only the holder of the reservation CASes Scheduled -> Draining, so it cannot lose.
            if not self.word.compare_and_swap(SCHEDULED, DRAINING):
                raise RuntimeError(f"lane {self.index}: a drain began on a lane that was not Scheduled")
            # Once Stop(discard) has begun no new drain begins: the taken work item is
            # given up (Scheduled again: only we could have changed Draining) and Stop resets the
            # lane. Checked after the CAS, so that a drain that begins saw ``discarding`` unset at
            # its event's place: the spec's DrainBegin checks and CASes in one step (and Stop
            # waits for this lock after setting the flag: ``settle_drain_begin``).
            if self.env.discarding.load():
                self.word.store(SCHEDULED)
                return False
            self._emit("drain_begin", {"lane": self.index})
        return True

    def settle_drain_begin(self) -> None:
        """Called by Stop(discard) after it set ``discarding``: returns once a drain that began
        on this lane before the flag was set has logged its ``drain_begin``, so that event comes
        before ``stop_begin`` (a drain that saw the flag unset is logged where the spec's
        DrainBegin, which checks it, can still run)."""
        with self._word_step():
            pass

    def _pop(self) -> T | Literal[Empty.EMPTY]:
        """Pop and log the ``pop`` event, as one step (traced only: untraced, ``queue.pop``)."""
        with self._queue_step():
            item = self.queue.pop()
            # item_label runs under the lock here: the popped item is known only now
            label = None if item is EMPTY else self._label(item)
            self._emit("pop", {"lane": self.index, "item": label})
        if item is not EMPTY:
            # The hand-over is this thread's own step: no lock, and a push may be logged before it.
            self._emit("invoke", {"lane": self.index, "item": label})
        return item

    def _invoke_items(self) -> int:
        pop = self.queue.pop if self._tracer is None else self._pop
        invoke = self.invoke
        context = self.context
        n = 0
        for n in range(self.budget):
            item = pop()
            if item is EMPTY:
                return n
            try:
                invoke(context, item)
            except BaseException as exc:
                self._report(item, exc)
        return n + 1

    def _end_drain(self, invoked: int) -> bool:
        """Draining -> Idle, re-check, Idle -> Scheduled: True when this worker won the lane back."""
        if not self._cas_word(DRAINING, IDLE, invoked=invoked):
            raise RuntimeError(f"lane {self.index}: a drain ended on a lane that was not Draining")
        # From here a producer's CAS can win the lane; an item pushed before the release is ours
        # to see now, one pushed after it is its producer's to schedule.
        with self._queue_step():
            empty = not len(self.queue)
            if self._tracer is not None:
                self._emit("recheck", {"lane": self.index, "empty": empty})
        if empty:
            return False
        return self._cas_word(IDLE, SCHEDULED)  # lost: a producer (maybe another drain) has the lane

    # -- Stop's side -----------------------------------------------------

    def reset(self) -> list[T]:
        """Stop, once the workers are joined: take every queued item out, report it, set the word Idle.

        The lane may be Scheduled with items and no work item: Stop(discard) refused its
        owed resubmission. This is where those items are answered for."""
        items: list[T] = []
        with self._queue_step():
            while True:
                item = self.queue.pop()
                if item is EMPTY:
                    break
                items.append(item)
            if items and self._tracer is not None:
                self._emit("reset", {"lane": self.index, "items": [self._label(item) for item in items]})
        self.word.store(IDLE)
        return items

    def state_name(self) -> str:
        """The word as a name, for reports."""
        return STATE_NAMES[self.word.load()]


__all__ = [
    "DRAINING",
    "IDLE",
    "SCHEDULED",
    "LockFreeEnv",
    "LockFreeLane",
    "PostOutcome",
]
