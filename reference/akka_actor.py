"""One Akka/Pekko actor's mailbox (the status word, the message queue, ``run``) and its ``ActorRef``.

The status word is one ``runtime.atomic_int`` changed only by compare-and-swap
loops: bit 1 Closed, bit 2 Scheduled, the suspend count in units of 4 (Pekko's
encoding). How a ``Dispatcher`` (``akka_mailbox``) schedules and runs a
mailbox is told there; this module is what one mailbox does when asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from .akka_mailbox import Dispatcher
    from .runtime import FifoLike, LockLike

T = TypeVar("T")

OPEN, CLOSED, SCHEDULED, SUSPEND_UNIT = 0, 1, 2, 4
SHOULD_SCHEDULE_MASK = CLOSED | SCHEDULED
SHOULD_NOT_PROCESS_MASK = ~SCHEDULED
SUSPEND_MASK = ~(CLOSED | SCHEDULED)

EMPTY: Any = object()  # what dequeue returns when the queue is empty (messages may be None)
# The logger of ``akka_mailbox``, as before the mailbox had a module of its own (users may filter on it).
_log = logging.getLogger("reference.akka_mailbox")


class Send(Enum):
    OK = "ok"  # enqueued: it will be processed, or dead-lettered if the mailbox closes first
    DEAD_LETTER = "dead_letter"  # the mailbox was closed: the message went to the dead letters


class Mailbox(Generic[T]):
    """One actor's mailbox: the status word, the message queue and ``run``."""

    def __init__(self, dispatcher: Dispatcher, index: int, name: str, receive: Callable[[T], object]) -> None:
        rt = dispatcher.runtime
        self.dispatcher = dispatcher
        self.index = index
        self.name = name
        self.receive = receive
        self.status = rt.atomic_int(OPEN, name=f"{name}.status")
        # The queue is the runtime's shared FIFO: senders append with no lock (one atomic
        # ``append``, Akka's MPSC enqueue); the consumers (the runner's dequeue and cleanUp) pop
        # under ``lock``, so that a cleanUp takes the queue whole as one step (docs/akka-mailbox.md).
        self.lock = rt.lock(name=f"{name}.queue")
        self.queue: FifoLike[T] = rt.deque(name=f"{name}.queue")
        self.processed = 0  # messages processed; written only by the (single) runner
        # With a tracer: orders each status change with its event (see ``_cas``).
        self.trace_lock = rt.lock(name=f"{name}.trace") if dispatcher.tracer is not None else None

    # -- the status word (Pekko's Mailbox: every change is a CAS loop) ----------------------

    def is_closed(self) -> bool:
        return self.status.load() == CLOSED

    def is_suspended(self) -> bool:
        return self.status.load() & SUSPEND_MASK != 0

    def should_process_message(self) -> bool:
        return self.status.load() & SHOULD_NOT_PROCESS_MASK == 0

    def set_as_scheduled(self) -> bool:
        """Set Scheduled iff the word is open and unscheduled; True when this call took the reservation."""
        status = self.status
        lock = self.trace_lock
        if lock is None:  # untraced: the bare CAS loop, no event fields built
            while True:
                s = status.load()
                if s & SHOULD_SCHEDULE_MASK != OPEN:
                    return False
                if status.compare_and_swap(s, s | SCHEDULED):
                    return True
        # Traced, the read that finds the word taken is made under trace_lock too. It logs nothing,
        # and the caller may go on to another mailbox and log there; read outside the lock, it
        # could see a CAS whose event is not logged yet (``_cas`` makes the two one step only for
        # threads that take the lock), and the log would show this thread's next event first.
        with lock:
            while True:
                s = status.load()
                if s & SHOULD_SCHEDULE_MASK != OPEN:
                    return False
                if status.compare_and_swap(s, s | SCHEDULED):
                    self._emit("schedule", {"mailbox": self.index})
                    return True

    def set_as_idle(self, processed: int) -> None:
        """Clear Scheduled, keeping the rest (a close or suspension in between is kept)."""
        status = self.status
        while True:
            s = status.load()
            new = s & ~SCHEDULED
            if self.trace_lock is None:  # untraced: the bare CAS, no event fields built
                if status.compare_and_swap(s, new):
                    return
            elif self._cas(s, new, "run_end", {"mailbox": self.index, "processed": processed, "status": new}):
                return

    def suspend(self) -> bool:
        """Add one suspension; True if the mailbox was not suspended before. Closed stays Closed."""
        moved = self._move_suspensions("suspend", lambda s: s + SUSPEND_UNIT)
        return moved is not None and moved[0] < SUSPEND_UNIT

    def resume(self) -> bool:
        """Remove one suspension; True if the count reached zero. Closed stays Closed."""
        moved = self._move_suspensions("resume", lambda s: s if s < SUSPEND_UNIT else s - SUSPEND_UNIT)
        return moved is not None and moved[1] < SUSPEND_UNIT

    def _move_suspensions(self, event: str, change: Callable[[int], int]) -> tuple[int, int] | None:
        """CAS the word from s to ``change(s)``, logged as ``event``: (s, new); None if it is Closed."""
        while True:
            s = self.status.load()
            if s == CLOSED:
                self._emit_status(event, {"mailbox": self.index})
                return None
            new = change(s)
            if self._cas(s, new, event, {"mailbox": self.index}):
                return s, new

    def become_closed(self) -> bool:
        """Make the word exactly Closed (Scheduled and suspensions go); True if this call closed it."""
        while True:
            s = self.status.load()
            if s == CLOSED:
                return False
            if self._cas(s, CLOSED, "close", {"mailbox": self.index}):
                return True

    def _cas(self, expected: int, new: int, event: str, fields: dict[str, Any]) -> bool:
        """One CAS of the status word; with a tracer, the CAS and its event are made one step.

        A CAS and a later ``tracer.emit`` are two steps: another thread could act on the new word
        and log its own event first, and the trace would show them out of order. So when tracing,
        every status event is logged under ``trace_lock`` together with the change it reports.
        Without a tracer this is the bare CAS.
        """
        lock = self.trace_lock
        if lock is None:
            return self.status.compare_and_swap(expected, new)
        with lock:
            if not self.status.compare_and_swap(expected, new):
                return False
            self._emit(event, fields)
            return True

    def _emit_status(self, event: str, fields: dict[str, Any]) -> None:
        """Log a status event that changed nothing (on a closed word), ordered after the close."""
        lock = self.trace_lock
        if lock is not None:
            with lock:
                self._emit(event, fields)

    def logged_word(self) -> int:
        """The status word, read under ``trace_lock`` (traced only): for a read after which this
        thread may log nothing on this mailbox and go on elsewhere (above)."""
        lock = self.trace_lock
        assert lock is not None
        with lock:
            return self.status.load()

    def can_be_scheduled(self, has_message_hint: bool) -> bool:
        """Pekko's canBeScheduledForExecution (no system messages here)."""
        lock = self.trace_lock
        if lock is None:
            return self._schedulable(has_message_hint)
        with lock:  # traced: a "no" logs nothing, so it reads the word as the log has it (above)
            return self._schedulable(has_message_hint)

    def _schedulable(self, has_message_hint: bool) -> bool:
        s = self.status.load()
        if s in (OPEN, SCHEDULED):
            return has_message_hint or self.has_messages()
        return False

    # -- the message queue: appended with no lock, popped under the consumers' lock -------------

    def enqueue(self, msg: T) -> bool:
        """Akka's enqueue: append ``msg`` unless the word reads Closed (then it is a dead letter).

        Two atomic steps, the read of the word and the ``append``, with no lock: a close may come
        between them, so the caller reads the word again after the append and, finding it
        Closed, cleans up itself (``Dispatcher.send``). False means it went to the dead letters.
        The ``send`` event is logged with the read, where the send's fate is decided (ok: it
        will be processed or dead-lettered); the ``append`` event with the append.
        """
        trace_lock = self.trace_lock
        if trace_lock is None:
            if self.status.load() != CLOSED:
                self.queue.append(msg)
                return True
        else:
            # The label is user code: computed first, so that if it raises nothing was
            # enqueued and the message stays with the sender.
            label = self._label(msg)
            error: BaseException | None = None
            with trace_lock:  # the read and its send event are one step
                closed = self.status.load() == CLOSED
                result = "dead_letter" if closed else "ok"
                try:
                    self._emit("send", {"mailbox": self.index, "item": label, "result": result})
                except BaseException as exc:
                    # The read has decided: a tracer that fails must not lose the message, so
                    # the append (or the dead letter) is still made, and then the error raised.
                    error = exc
            if not closed:
                if error is None:
                    self._append_traced(msg, label, trace_lock)
                else:
                    self.queue.append(msg)  # the message is accepted: appended, unlogged, then the error
                    raise error
                return True
            if error is not None:
                self.dispatcher.dead_letter(self, [msg])
                raise error
        self.dispatcher.dead_letter(self, [msg])
        return False

    def _append_traced(self, msg: T, label: Any, trace_lock: LockLike) -> None:
        """The append and its ``append`` event as one step, under ``trace_lock``.

        The event tells a validator where the message stands in the queue, so the trace must show
        the appends in queue order and each before anything that took its message out. Every
        traced append holds ``trace_lock``, which orders the appends with their events (and with
        cleanUps and status events); a runner may pop the message before its event is logged, but
        it logs ``process`` under ``trace_lock`` too (``dequeue``), so after it. A lock-free read
        of the queue's length (a registration's ``has_messages``, a run's end) may also see the
        message first: it logs nothing itself, and what it leads to either takes ``trace_lock``
        (setAsScheduled's CAS, staying scheduled: after the event) or ends the registration as a
        read of the queue without the message would. Untraced, the append takes no lock.
        """
        with trace_lock:
            self.queue.append(msg)
            self._emit("append", {"mailbox": self.index, "item": label})

    def dequeue(self) -> T:
        """The oldest message, or ``EMPTY``; emits ``process`` when it takes one."""
        with self.lock:
            try:
                msg = self.queue.popleft()
            except IndexError:
                return EMPTY  # type: ignore[no-any-return]
            trace_lock = self.trace_lock
            if trace_lock is not None:
                # Logged under trace_lock too: the run's read of the word before this pop may have
                # seen a status CAS (a resume) whose event is not logged yet; this event then
                # waits for it, as the spec orders them (tests/akka/test_append_harness.py).
                # The label and the tracer are user code: the message is popped and must
                # still be processed, so a failure is logged and the trace lacks the event.
                try:
                    with trace_lock:
                        self._emit("process", {"mailbox": self.index, "item": self._label(msg)})
                except Exception:
                    _log.exception("tracing a process on %s failed; the message still runs", self.name)
            return msg

    def has_messages(self) -> bool:
        return len(self.queue) > 0  # one atomic read of the FIFO

    def clean_up(self) -> list[T]:
        """Move every queued message out (to the dead letters, by the caller)."""
        with self.lock:
            trace_lock = self.trace_lock
            if trace_lock is None:
                left = self._pop_all()
            else:
                # With the status events (``_cas``): the drain and its dead_letter event are one
                # step after the close event that allowed it.
                with trace_lock:
                    left = self._pop_all()
                    self._emit_dead_letters(left)
        return left

    def _pop_all(self) -> list[T]:
        """Pop until empty (the caller holds ``lock``). Not ``list`` then ``clear``: an append
        between the two would be cleared unseen. Only appends run meanwhile, at the tail, so the
        drain takes effect at its last pop: it is the spec's one-step cleanUp."""
        left: list[T] = []
        pop = self.queue.popleft
        while True:
            try:
                left.append(pop())
            except IndexError:
                return left

    def _emit_dead_letters(self, left: list[T]) -> None:
        if left and self.dispatcher.tracer is not None:
            # User code (label, tracer): the messages are out of the queue and must still
            # reach the dead letters, so a failure is logged and the trace lacks the event.
            try:
                self._emit("dead_letter", {"mailbox": self.index, "items": [self._label(m) for m in left]})
            except Exception:
                _log.exception("tracing the dead letters of %s failed; they are still reported", self.name)

    # -- run, on an executor worker -------------------------------------------------------------

    def run(self) -> None:
        processed = 0
        try:
            if self.status.load() != CLOSED:  # ``is_closed``, written out (once per run)
                processed = self.process_mailbox()
        finally:
            self.after_run(processed)

    def process_mailbox(self) -> int:
        """Process up to ``max(throughput, 1)`` messages; stop early if empty, suspended or closed.

        ``should_process_message`` and ``invoke`` written out in the loop: per message the loop
        is the worker's whole cost, and two calls fewer is a fifth of it. One message is dequeued
        at a time, after its own read of the word, so a suspension or close made while a message
        runs (by its ``receive``, or by supervision in ``on_error``) stops the run before the next.
        """
        budget = max(self.dispatcher.throughput, 1)
        status, dequeue, receive = self.status, self.dequeue, self.receive
        done = 0
        while done < budget and not status.load() & SHOULD_NOT_PROCESS_MASK:
            msg = dequeue()
            if msg is EMPTY:
                break
            done += 1
            self.processed += 1
            try:
                receive(msg)
            except Exception as exc:  # the actor's failure is reported; the mailbox goes on
                self.dispatcher.on_error(self.name, msg, exc)
        return done

    def invoke(self, msg: T) -> None:
        """One message to the actor (what ``process_mailbox`` does for each)."""
        self.processed += 1
        try:
            self.receive(msg)
        except Exception as exc:
            self.dispatcher.on_error(self.name, msg, exc)

    def after_run(self, processed: int) -> None:
        """setAsIdle, then the re-check: register again, looking at the queue itself."""
        if self.queue and self._stay_scheduled(processed):
            self.dispatcher.execute(self, wake=False)
            return
        self.set_as_idle(processed)
        self.dispatcher.register_for_execution(self, has_message_hint=False, wake=False)

    def _stay_scheduled(self, processed: int) -> bool:
        """setAsIdle, the re-check and setAsScheduled as one step, when the word reads exactly Scheduled.

        The caller saw messages queued just before. Only a cleanUp could have taken them since,
        and a cleanUp follows a close, which would have left the word Closed: so at this read the
        queue still holds them, and the spec's SetAsIdle, RegisterSeesOpen, RegisterSeesMessages
        and SetAsScheduled, taken back to back at this instant, end with the word as it is: the
        two CASes, which would write Open and then Scheduled again, are left out. Under fan-in
        (a mailbox that stays busy) this is the end of nearly every run. With a tracer the two
        events are logged under ``trace_lock`` with the read, as ``_cas`` logs a CAS.
        """
        lock = self.trace_lock
        if lock is None:
            return self.status.load() == SCHEDULED
        with lock:
            if self.status.load() != SCHEDULED:
                return False
            self._emit("run_end", {"mailbox": self.index, "processed": processed, "status": OPEN})
            self._emit("schedule", {"mailbox": self.index})
            return True

    # -- helpers ------------------------------------------------------------------------------------

    def _emit(self, event: str, fields: dict[str, Any]) -> None:
        tracer = self.dispatcher.tracer
        if tracer is not None:
            tracer.emit(self.dispatcher.runtime.thread_name(), event, fields)

    def _label(self, msg: T) -> Any:
        return self.dispatcher.item_label(msg)

    def __repr__(self) -> str:
        return f"Mailbox({self.name!r}, status={self.status.load()})"


class ActorRef(Generic[T]):
    """What senders hold: ``tell`` a message; a supervisor may ``suspend``/``resume``/``close``."""

    __slots__ = ("_dispatcher", "_mailbox")

    def __init__(self, dispatcher: Dispatcher, mailbox: Mailbox[T]) -> None:
        dispatcher._check_own(mailbox)  # once here, so that ``tell`` need not
        self._dispatcher = dispatcher
        self._mailbox = mailbox

    @property
    def mailbox(self) -> Mailbox[T]:
        """Read-only: ``tell`` skips the ownership check, which holds only for the pair ``spawn`` made."""
        return self._mailbox

    @property
    def name(self) -> str:
        return self._mailbox.name

    def tell(self, msg: T) -> Send:
        return self._dispatcher.send(self._mailbox, msg)  # ``spawn`` made the pair: no ownership check

    def suspend(self) -> None:
        self._dispatcher.suspend(self._mailbox)

    def resume(self) -> None:
        self._dispatcher.resume(self._mailbox)

    def close(self) -> list[T]:
        """Close the mailbox; returns the messages that went to the dead letters."""
        return self._dispatcher.close(self._mailbox)

    def __repr__(self) -> str:
        return f"ActorRef({self._mailbox.name!r})"


__all__ = [
    "CLOSED",
    "EMPTY",
    "OPEN",
    "SCHEDULED",
    "SHOULD_NOT_PROCESS_MASK",
    "SHOULD_SCHEDULE_MASK",
    "SUSPEND_MASK",
    "SUSPEND_UNIT",
    "ActorRef",
    "Mailbox",
    "Send",
]
