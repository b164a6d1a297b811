"""The runnable side of a ``GateScheduler``: its permits, the CAS on an actor's gate word, and the
ready queue of actor tokens, each step with its trace event.

A mixin, so that the design's reference mutants and the harness reach these steps as the
scheduler's own methods, under the names they always had.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from .gate_word import IDLE, PHASE_MASK
from .runtime import AtomicInt, ConditionLike, LockLike, Runtime
from .tracing import Fields, Tracer


class PermitsAndTokens:
    """Taking and returning runnable permits, the gate CAS, enqueueing and taking actor tokens."""

    # Set by ``GateScheduler.__init__``.
    permits: int
    _rt: Runtime
    _tracer: Tracer | None
    _trace_lock: LockLike | None
    _label: Callable[[Any], object]
    _gates: list[AtomicInt]
    _free: AtomicInt
    _ready_lock: LockLike
    _ready_cv: ConditionLike
    _ready: deque[int]  # guarded by _ready_lock
    _shutdown: bool  # guarded by _ready_lock
    _stopping: bool

    # -- permits ------------------------------------------------------------------------------

    def _acquire_permit(self, actor: int, event: object) -> bool | None:
        """Take a permit: True; none free while the actor is Idle: False; the actor is runnable now: None."""
        tracer = self._tracer
        if tracer is None:
            return self._take_permit(actor)
        assert self._trace_lock is not None
        with self._trace_lock:
            granted = self._take_permit(actor)
            if granted is not None:
                tracer.emit(
                    self._rt.thread_name(),
                    "permit_acquire",
                    {"actor": actor, "item": self._label(event), "granted": granted},
                )
            return granted

    def _take_permit(self, actor: int) -> bool | None:
        free = self._free
        while True:
            v = free.load()
            if v == 0:
                # Refuse only if the actor still needs a permit; else the caller joins it.
                return False if self._gates[actor].load() & PHASE_MASK == IDLE else None
            if free.compare_and_swap(v, v - 1):
                return True

    def _release_permit(self, actor: int, reason: str) -> None:
        tracer = self._tracer
        if tracer is None:
            self._free.fetch_add(1)
        else:
            assert self._trace_lock is not None
            with self._trace_lock:
                self._free.fetch_add(1)
                tracer.emit(self._rt.thread_name(), "permit_release", {"actor": actor, "reason": reason})
        if self._stopping:  # stop waits for every permit to come home
            with self._ready_lock:
                self._ready_cv.notify_all()

    # -- the gate CAS -------------------------------------------------------------------------

    def _cas(
        self, actor: int, old: int, new: int, event: str, item: object | None = None, **fields: Any
    ) -> bool:
        tracer = self._tracer
        if tracer is None:
            return self._gates[actor].compare_and_swap(old, new)
        assert self._trace_lock is not None
        with self._trace_lock:
            if not self._gates[actor].compare_and_swap(old, new):
                return False
            record: Fields = {"actor": actor}
            if event in ("admit_begin", "admit_end"):
                record["item"] = self._label(item)
            record.update(fields)
            tracer.emit(self._rt.thread_name(), event, record)
            return True

    # -- the ready queue ----------------------------------------------------------------------

    def _enqueue(self, actor: int) -> None:
        with self._ready_lock:
            self._ready.append(actor)
            if len(self._ready) > self.permits:
                raise RuntimeError(
                    f"schedule gate: {len(self._ready)} ready tokens for {self.permits} permits"
                )
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._rt.thread_name(), "token_enqueue", {"actor": actor})
            self._ready_cv.notify()

    def _take(self) -> int | None:
        with self._ready_lock:
            while not self._ready and not self._shutdown:
                self._ready_cv.wait()
            if not self._ready:
                return None
            actor = self._ready.popleft()
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._rt.thread_name(), "take", {"actor": actor})
            return actor
