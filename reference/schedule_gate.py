"""The older design: runnable permits + a lock-free Schedule Gate per actor (PrivateServer).

    sched = GateScheduler([handler0, handler1, ...], permits=4, workers=2)
    sched.post(actor, event)     # SUCCESS, REJECTED (no permit), CAPACITY_EXCEEDED (mailbox full), ...
    sched.stop()                 # waits until every accepted event ran, then joins the workers

Each actor has a bounded mailbox and a Schedule Gate: **one atomic word**
(``runtime.atomic_int``) changed only by compare-and-swap loops: a phase (Idle,
Admitting, Scheduled, Draining, DrainCompleting), two flags (pending, resched)
and ``inside``, the count of producers between admit_begin and admit_end (the
bits: ``gate_word``).

A producer of an Idle actor takes a runnable permit (an atomic counter) and
CASes Idle -> Admitting; a producer of a runnable actor adds one to ``inside``.
It publishes, then CASes ``inside - 1`` and follows the directive the CAS gave
it: NoAction, EnqueueReadyToken (the last one out of a window that published)
or ReleasePermit (the last one out of a window that published nothing). A
worker takes an actor token from the ready queue (a lock + condition FIFO),
CASes Scheduled -> Draining, processes up to ``max_per_drain`` events and
decides with one CAS: EnqueueReadyToken (budget spent, or a publish landed
during the drain), FinalizationDeferred (producers are still inside: the last
one decides) or ReleasePermit (Idle).

The word's transition functions (``gate_word``) are the table of
docs/schedule-gate.md and the spec's ``*Word`` operators, bit for bit; the
arguments' checks, the defaults and the trace header are in ``gate_config``
(both re-exported here); the permits, the gate CAS and the ready queue are
``gate_permits``'s. Trace events are those of the "schedule-gate" design; with
no tracer each emit is skipped behind one ``is not None`` test. With a
tracer, every CAS on a gate or the permit counter is made under one trace lock
together with its emit, so the trace's order is the order in which the CASes
took effect (a lock-free step has no critical section of its own to log from).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from . import arguments
from .failure import FailureState, SchedulerFailure
from .gate_config import DESIGN, checked_config, config_error, default_label, header, log_error
from .gate_permits import PermitsAndTokens
from .gate_word import (
    ADMITTING,
    COMPLETING,
    DEFERRED,
    DRAINING,
    ENQUEUE,
    IDLE,
    IDLE_WORD,
    NO_ACTION,
    ONE,
    PENDING,
    PHASE_MASK,
    PHASE_NAMES,
    RELEASE,
    RESCHED,
    SCHEDULED,
    Directive,
    GateView,
    admit_end_word,
    admit_first_word,
    admit_join_word,
    decode,
    drain_begin_word,
    drain_end_word,
)
from .results import Result
from .runtime import DEFAULT_RUNTIME, LockLike, Runtime, ThreadHandle
from .tracing import Tracer

T = TypeVar("T")
_log = logging.getLogger(__name__)


class _Mailbox(Generic[T]):
    """A bounded MPSC queue: many producers push, the actor's one drainer pops.

    The C++ original is lock-free; here a short lock makes each push and pop one
    atomic step (as in the spec), and gives their trace events a critical section.
    """

    __slots__ = ("_items", "_lock", "capacity")

    def __init__(self, capacity: int, lock: LockLike) -> None:
        self.capacity = capacity
        self._items: deque[T] = deque()
        self._lock = lock

    def __len__(self) -> int:
        return len(self._items)


class GateScheduler(PermitsAndTokens, FailureState, Generic[T]):
    """Runs each actor's events in order, one at a time, on a shared pool of workers.

    ``actors[i](event)`` processes one event of actor ``i``; what it raises goes
    to ``on_error(actor, event, exc)`` (default: log it) and the actor goes on.
    ``permits`` bounds how many actors may be runnable at once (and so the ready
    queue's length); a post to an Idle actor when none is free is REJECTED and
    the event stays with the caller. ``mailbox_capacity`` bounds each mailbox
    (CAPACITY_EXCEEDED when full); ``max_per_drain`` is the drain budget.

    Arguments are checked strictly (``reference.arguments``): ``TypeError`` or
    ``ValueError`` naming the field; at most ``MAX_LANES`` actors and
    ``MAX_WORKERS`` workers.

    If the scheduler's own code raises (not a handler), it *fails*: the
    exception still ends the thread it was raised in (a worker, or the post's
    caller), ``failed`` becomes True, later posts get INVALID_STATE, and
    ``stop`` joins the workers, hands every accepted event that did not run to
    ``on_discard(actor, event)`` (and ``failure.discarded``) and returns
    UNKNOWN.
    """

    def __init__(
        self,
        actors: Sequence[Callable[[T], object]],
        *,
        permits: int,
        workers: int,
        mailbox_capacity: int = 64,
        max_per_drain: int = 8,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        on_error: Callable[[int, T, BaseException], None] | None = None,
        item_label: Callable[[T], object] | None = None,
        on_discard: Callable[[int, T], None] | None = None,
    ) -> None:
        handlers = checked_config(actors, permits, workers, mailbox_capacity, max_per_drain)
        arguments.runtime(runtime)
        arguments.tracer(tracer)
        for name, value in (("on_error", on_error), ("item_label", item_label), ("on_discard", on_discard)):
            arguments.function(name, value, optional=True)
        self._rt = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_discard = on_discard
        # Set once, by the first fault of our own code.
        self._failure: SchedulerFailure | None = None
        self._handlers = handlers
        self._actor_count = len(self._handlers)
        self.permits = permits
        self.workers = workers
        self.mailbox_capacity = mailbox_capacity
        self.max_per_drain = max_per_drain
        self._on_error = log_error if on_error is None else on_error
        self._label: Callable[[Any], object] = default_label if item_label is None else item_label
        n = self._actor_count
        self._gates = [rt.atomic_int(IDLE_WORD, name=f"gate[{i}]") for i in range(n)]
        self._mailboxes: list[_Mailbox[T]] = [
            _Mailbox(mailbox_capacity, rt.lock(name=f"mailbox[{i}]")) for i in range(n)
        ]
        self._free = rt.atomic_int(permits, name="permits.free")
        self._trace_lock: LockLike | None = rt.lock(name="trace") if tracer is not None else None
        self._ready_lock = rt.lock(name="ready.mutex")
        self._ready_cv = rt.condition(self._ready_lock, name="ready.not_empty")
        self._ready: deque[int] = deque()  # guarded by _ready_lock
        self._shutdown = False  # guarded by _ready_lock
        self._state_lock = rt.lock(name="scheduler.state")
        self._posts_settled = rt.condition(self._state_lock, name="scheduler.posts_settled")
        self._stopping = False  # written under _state_lock
        self._stopped = False
        self._in_flight = 0  # guarded by _state_lock
        self._worker_idents: set[object] = set()
        if tracer is not None:
            tracer.begin(self.trace_config())
        self._threads: list[ThreadHandle] = [
            rt.start_thread(self._worker_main, f"w{i}") for i in range(workers)
        ]

    def trace_config(self) -> dict[str, int]:
        return {
            "actors": self._actor_count,
            "workers": self.workers,
            "permits": self.permits,
            "mailbox_capacity": self.mailbox_capacity,
            "max_per_drain": self.max_per_drain,
        }

    def __repr__(self) -> str:
        return f"GateScheduler({self.trace_config()}, free={self._free.load()})"

    # -- introspection (tests, invariants) ----------------------------------------------------

    @property
    def actor_count(self) -> int:
        return self._actor_count

    def free_permits(self) -> int:
        return self._free.load()

    def gate(self, actor: int) -> GateView:
        return decode(self._gates[arguments.checked_index("actor", actor, self._actor_count)].load())

    def queued(self, actor: int) -> int:
        """Events in the actor's mailbox."""
        return len(self._mailboxes[arguments.checked_index("actor", actor, self._actor_count)])

    def ready_tokens(self) -> list[int]:
        return list(self._ready)

    # -- post ---------------------------------------------------------------------------------

    def post(self, actor: int, event: T) -> Result:
        """Publish ``event`` to ``actor`` without waiting for it to run.

        SUCCESS: accepted (the handler may even have run already). REJECTED: the
        actor is idle and no runnable permit is free. CAPACITY_EXCEEDED: the
        mailbox is full. INVALID_ARGUMENT: ``actor`` is not an ``int`` naming an
        actor (``True`` is not). INVALID_STATE: stop has begun, or the scheduler
        failed. Every refusal leaves the event with the caller. A fault of the
        scheduler's own code here fails the scheduler and propagates.
        """
        if type(actor) is not int or not 0 <= actor < self._actor_count:
            return Result.INVALID_ARGUMENT
        with self._state_lock:
            if self._stopping or self._failure is not None:
                return Result.INVALID_STATE
            self._in_flight += 1
        try:
            return self._post(actor, event)
        except Exception as exc:
            self._fail(exc)
            raise
        finally:
            with self._state_lock:
                self._in_flight -= 1
                if not self._in_flight and self._stopping:
                    self._posts_settled.notify_all()

    def _post(self, actor: int, event: T) -> Result:
        gate = self._gates[actor]
        while True:
            old = gate.load()
            if old & PHASE_MASK == IDLE:
                result = self._post_first(actor, event)
            else:
                result = self._post_joining(actor, event, old)
            if result is not None:
                return result

    def _post_first(self, actor: int, event: T) -> Result | None:
        """The actor looked Idle: take a permit, then CAS Idle -> Admitting. None: retry."""
        granted = self._acquire_permit(actor, event)
        if granted is None:
            return None  # the actor became runnable meanwhile: join it instead
        if not granted:
            return Result.REJECTED
        if self._cas(actor, IDLE_WORD, ADMITTING | ONE, "admit_begin", event, permit=True):
            return self._publish_and_leave(actor, event)
        # Another producer made it runnable first. The release is a step of its own: by then the
        # actor may be Idle again (spec: AdmitCasLost, then ReleaseSurplus); permits are fungible.
        self._release_permit(actor, "surplus")
        return None

    def _post_joining(self, actor: int, event: T, old: int) -> Result | None:
        """The actor looked runnable: register as one more producer inside. None: retry."""
        new = admit_join_word(old)
        if new is None or not self._cas(actor, old, new, "admit_begin", event, permit=False):
            return None
        return self._publish_and_leave(actor, event)

    def _publish_and_leave(self, actor: int, event: T) -> Result:
        ok = self._publish(actor, event)
        directive = self._admit_end(actor, event, ok)
        if directive is ENQUEUE:
            self._enqueue(actor)
        elif directive is RELEASE:
            self._release_permit(actor, "idle")
        return Result.SUCCESS if ok else Result.CAPACITY_EXCEEDED

    def _publish(self, actor: int, event: T) -> bool:
        box = self._mailboxes[actor]
        with box._lock:
            ok = len(box._items) < box.capacity
            if ok:
                box._items.append(event)
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(
                    self._rt.thread_name(),
                    "publish",
                    {"actor": actor, "item": self._label(event), "result": "ok" if ok else "full"},
                )
        return ok

    def _admit_end(self, actor: int, event: T, ok: bool) -> Directive:
        gate = self._gates[actor]
        while True:
            old = gate.load()
            new, directive = self._admit_end_word(old, ok)
            deferred = old & PHASE_MASK == COMPLETING and directive is not NO_ACTION
            if self._cas(actor, old, new, "admit_end", event, directive=directive.value, deferred=deferred):
                return directive

    @staticmethod
    def _admit_end_word(old: int, ok: bool) -> tuple[int, Directive]:
        return admit_end_word(old, ok)

    # -- the workers' side --------------------------------------------------------------------

    def _worker_main(self) -> None:
        self._worker_idents.add(self._rt.current_thread())
        try:
            while True:
                actor = self._take()
                if actor is None:
                    return
                self._drain(actor)
        except Exception as exc:
            # Our own code failed: the worker ends with the exception (loudly, as it
            # always did), and the scheduler fails so that stop neither waits for this
            # worker's work nor loses its events.
            self._fail(exc)
            raise

    def _fail(self, error: BaseException) -> None:
        """Enter the failed state (the first fault is kept) and wake a waiting stop."""
        if self._failure is None:
            self._failure = SchedulerFailure(error)
        with self._ready_lock:
            self._ready_cv.notify_all()

    def _drain(self, actor: int) -> None:
        gate = self._gates[actor]
        while True:
            old = gate.load()
            new = drain_begin_word(old)
            if new is None:
                raise RuntimeError(
                    f"schedule gate: a ready token of actor {actor} found its gate {decode(old).show()}"
                    " (two tokens for one actor?)"
                )
            if self._cas(actor, old, new, "drain_begin"):
                break
        box = self._mailboxes[actor]
        handler = self._handlers[actor]
        budget = self.max_per_drain
        processed = 0
        while processed < budget:
            with box._lock:
                if not box._items:
                    break
                event = box._items.popleft()
                if self._tracer is not None:
                    self._trace_process(actor, event)
            processed += 1
            try:
                handler(event)
            except Exception as exc:
                self._report_error(actor, event, exc)
        directive = self._drain_end(actor, processed >= budget, processed)
        self._finish_drain(actor, directive)

    def _trace_process(self, actor: int, event: T) -> None:
        # The label and the tracer are user code; the event is already popped and must
        # still run, so a failure is logged and the trace lacks this event.
        try:
            assert self._tracer is not None
            self._tracer.emit(self._rt.thread_name(), "process", {"actor": actor, "item": self._label(event)})
        except Exception:
            _log.exception("tracing a process on actor %d failed; the event still runs", actor)

    def _report_error(self, actor: int, event: T, exc: Exception) -> None:
        try:
            self._on_error(actor, event, exc)
        except Exception:  # the user's hook: logged, and the actor goes on
            _log.exception("on_error raised on actor %d", actor)

    def _drain_end(self, actor: int, budget_spent: bool, processed: int) -> Directive:
        gate = self._gates[actor]
        while True:
            old = gate.load()
            new, directive = self._drain_end_word(old, budget_spent)
            if self._cas(actor, old, new, "drain_end", directive=directive.value, processed=processed):
                return directive

    @staticmethod
    def _drain_end_word(old: int, budget_spent: bool) -> tuple[int, Directive]:
        return drain_end_word(old, budget_spent)

    def _finish_drain(self, actor: int, directive: Directive) -> None:
        """Carry out the end-of-drain directive; FinalizationDeferred leaves it to the last producer."""
        if directive is ENQUEUE:
            self._enqueue(actor)
        elif directive is RELEASE:
            self._release_permit(actor, "idle")

    # -- stop ---------------------------------------------------------------------------------

    def _quiescent(self) -> bool:
        return self._free.load() == self.permits and not any(len(box) for box in self._mailboxes)

    def stop(self) -> Result:
        """Refuse new posts, wait until every accepted event ran and every permit is back, join workers.

        SUCCESS (also when already stopped). INVALID_STATE from inside a handler (it would
        wait for itself) or while another stop is in progress. UNKNOWN if the scheduler
        failed: the workers are joined and every accepted event that did not run went to
        ``on_discard`` (and ``failure.discarded``).
        """
        if self._rt.current_thread() in self._worker_idents:
            return Result.INVALID_STATE
        with self._state_lock:
            if self._stopped:
                return Result.SUCCESS if self._failure is None else Result.UNKNOWN
            if self._stopping:
                return Result.INVALID_STATE
            self._stopping = True
            while self._in_flight:
                self._posts_settled.wait()
        with self._ready_lock:
            while not self._quiescent() and self._failure is None:
                self._ready_cv.wait()
            self._shutdown = True
            tracer = self._tracer
            if tracer is not None and self._failure is None:
                # Quiescent: a validator may now judge the trace complete. Under the trace lock,
                # because a permit's return and its permit_release event are one step under it:
                # the release that made the pool quiescent is logged before stop_end, not after.
                assert self._trace_lock is not None
                with self._trace_lock:
                    tracer.emit(self._rt.thread_name(), "stop_end", {})
            self._ready_cv.notify_all()
        for thread in self._threads:
            thread.join()
        failure = self._failure
        if failure is not None:
            self._report_left(failure)
        with self._state_lock:
            self._stopped = True
        return Result.SUCCESS if failure is None else Result.UNKNOWN

    def _report_left(self, failure: SchedulerFailure) -> None:
        """After a fault, with the workers joined: every event still in a mailbox is reported."""
        for actor, box in enumerate(self._mailboxes):
            with box._lock:
                left = list(box._items)
                box._items.clear()
            for event in left:
                failure.discarded.append((actor, event))
                if self._on_discard is not None:
                    try:
                        self._on_discard(actor, event)
                    except Exception:
                        _log.exception("on_discard raised on actor %d", actor)
        _log.error("%s", failure.describe())

    def _stop_on_exit(self, exc_type: type[BaseException] | None) -> Result:
        return self.stop()  # the gate's Stop has one mode: it waits for every accepted event


# What the module offered before its word and configuration had modules of their own (the
# design's reference mutants import the word's names from here).
# fmt: off
__all__ = [
    "ADMITTING", "COMPLETING", "DEFERRED", "DESIGN", "DRAINING", "ENQUEUE", "IDLE", "IDLE_WORD",
    "NO_ACTION", "ONE", "PENDING", "PHASE_MASK", "PHASE_NAMES", "RELEASE", "RESCHED", "SCHEDULED",
    "Directive", "GateScheduler", "GateView", "admit_end_word", "admit_first_word", "admit_join_word",
    "checked_config", "config_error", "decode", "default_label", "drain_begin_word", "drain_end_word",
    "header", "log_error",
]
# fmt: on
