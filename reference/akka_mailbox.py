"""Akka/Pekko's Mailbox + Dispatcher, in Python, on the runtime seam.

    dispatcher = Dispatcher(throughput=16, workers=4)
    ref = dispatcher.spawn(lambda msg: print(msg), name="printer")
    ref.tell("hello")                      # Send.OK, or Send.DEAD_LETTER once closed
    ref.suspend(); ref.resume(); ref.close()
    report = dispatcher.shutdown()         # finishes what can run, closes every mailbox, joins
    report.dead_letters                    # every message that was never processed

Each mailbox has one status word (``runtime.atomic_int``) changed only by
compare-and-swap loops: bit 1 Closed, bit 2 Scheduled, suspend count in units
of 4 — Pekko's encoding. ``tell`` enqueues under the queue lock and then
registers the mailbox for execution: ``can_be_scheduled`` (not closed, not
suspended), ``set_as_scheduled`` (a CAS that sets Scheduled only when the word
is open and unscheduled: one reservation), ``executor.execute``. A worker runs
the mailbox: unless closed, it processes up to ``max(throughput, 1)`` messages,
stopping early when the queue is empty or the mailbox is suspended or closed;
then ``set_as_idle`` (a CAS clearing Scheduled) and registers again with no
hint, which looks at the queue itself: a message whose sender found the mailbox
still Scheduled is not stranded.

Closing is ``become_closed`` (the word becomes exactly Closed) then ``clean_up``
(what is queued goes to the dead letters). A ``tell`` checks the Closed bit under
the queue lock, so a message sent after close is dead-lettered at once and a
message enqueued before it is drained by ``clean_up``: nothing is dropped
silently (Pekko swaps the actor's mailbox for the dead-letter mailbox instead).

Trace events (``docs/akka-mailbox.md``) are emitted at each step's linearisation
point: ``send``/``process``/``dead_letter`` under the queue lock, the status
events right after their successful CAS, ``execute``/``run_begin`` under the
executor lock. With no tracer each emit is skipped behind one ``is not None``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

from . import arguments
from .arguments import MAX_WORKERS
from .runtime import DEFAULT_RUNTIME, Runtime, ThreadHandle
from .tracing import Tracer

T = TypeVar("T")

DESIGN = "akka-mailbox"
OPEN, CLOSED, SCHEDULED, SUSPEND_UNIT = 0, 1, 2, 4
SHOULD_SCHEDULE_MASK = CLOSED | SCHEDULED
SHOULD_NOT_PROCESS_MASK = ~SCHEDULED
SUSPEND_MASK = ~(CLOSED | SCHEDULED)

EMPTY: Any = object()  # what dequeue returns when the queue is empty (messages may be None)
_log = logging.getLogger(__name__)


class Send(Enum):
    OK = "ok"  # enqueued: it will be processed, or dead-lettered if the mailbox closes first
    DEAD_LETTER = "dead_letter"  # the mailbox was closed: the message went to the dead letters


def trace_header(config: Mapping[str, int]) -> dict[str, Any]:
    """The header object of an akka-mailbox trace."""
    return {"trace": "lanecheck", "version": 1, "design": DESIGN, "config": dict(config)}


@dataclass
class ShutdownReport:
    """What ``shutdown`` leaves behind: every message that was never processed, per mailbox name.

    ``failure`` is the first exception the dispatcher's own code raised (None if
    it ran clean): a failed dispatcher stops running mailboxes, and every message
    it accepted but did not process is in ``dead_letters``.
    """

    dead_letters: dict[str, list[Any]] = field(default_factory=dict)
    processed: int = 0
    failure: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def dead_letter_count(self) -> int:
        return sum(len(v) for v in self.dead_letters.values())


class Mailbox(Generic[T]):
    """One actor's mailbox: the status word, the message queue and ``run``."""

    def __init__(self, dispatcher: Dispatcher, index: int, name: str, receive: Callable[[T], object]) -> None:
        rt = dispatcher.runtime
        self.dispatcher = dispatcher
        self.index = index
        self.name = name
        self.receive = receive
        self.status = rt.atomic_int(OPEN, name=f"{name}.status")
        self.lock = rt.lock(name=f"{name}.queue")
        self.queue: deque[T] = deque()  # guarded by self.lock
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
        while True:
            s = self.status.load()
            if s & SHOULD_SCHEDULE_MASK != OPEN:
                return False
            if self._cas(s, s | SCHEDULED, "schedule", {"mailbox": self.index}):
                return True

    def set_as_idle(self, processed: int) -> None:
        """Clear Scheduled, keeping the rest (a close or suspension in between is kept)."""
        while True:
            s = self.status.load()
            new = s & ~SCHEDULED
            if self._cas(s, new, "run_end", {"mailbox": self.index, "processed": processed, "status": new}):
                return

    def suspend(self) -> bool:
        """Add one suspension; True if the mailbox was not suspended before. Closed stays Closed."""
        while True:
            s = self.status.load()
            if s == CLOSED:
                self._emit_status("suspend", {"mailbox": self.index})
                return False
            if self._cas(s, s + SUSPEND_UNIT, "suspend", {"mailbox": self.index}):
                return s < SUSPEND_UNIT

    def resume(self) -> bool:
        """Remove one suspension; True if the count reached zero. Closed stays Closed."""
        while True:
            s = self.status.load()
            if s == CLOSED:
                self._emit_status("resume", {"mailbox": self.index})
                return False
            nxt = s if s < SUSPEND_UNIT else s - SUSPEND_UNIT
            if self._cas(s, nxt, "resume", {"mailbox": self.index}):
                return nxt < SUSPEND_UNIT

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

    def can_be_scheduled(self, has_message_hint: bool) -> bool:
        """Pekko's canBeScheduledForExecution (no system messages here)."""
        s = self.status.load()
        if s in (OPEN, SCHEDULED):
            return has_message_hint or self.has_messages()
        return False

    # -- the message queue (one lock) ---------------------------------------------------------

    def enqueue(self, msg: T) -> bool:
        """Append ``msg`` unless the mailbox is closed; False means it went to the dead letters."""
        with self.lock:
            trace_lock = self.trace_lock
            if trace_lock is None:
                if not self.status.load() & CLOSED:
                    self.queue.append(msg)
                    return True
            else:
                # The label is user code: computed first, so that if it raises nothing was
                # enqueued and the message stays with the sender.
                label = self._label(msg)
                with trace_lock:  # the Closed bit read and the send event are one step
                    if not self.status.load() & CLOSED:
                        self.queue.append(msg)
                        self._emit("send", {"mailbox": self.index, "item": label, "result": "ok"})
                        return True
                    self._emit("send", {"mailbox": self.index, "item": label, "result": "dead_letter"})
        self.dispatcher.dead_letter(self, [msg])
        return False

    def dequeue(self) -> T:
        """The oldest message, or ``EMPTY``; emits ``process`` when it takes one."""
        with self.lock:
            if not self.queue:
                return EMPTY  # type: ignore[no-any-return]
            msg = self.queue.popleft()
            if self.dispatcher.tracer is not None:
                # The label and the tracer are user code: the message is popped and must
                # still be processed, so a failure is logged and the trace lacks the event.
                try:
                    self._emit("process", {"mailbox": self.index, "item": self._label(msg)})
                except Exception:
                    _log.exception("tracing a process on %s failed; the message still runs", self.name)
            return msg

    def has_messages(self) -> bool:
        with self.lock:
            return bool(self.queue)

    def clean_up(self) -> list[T]:
        """Move every queued message out (to the dead letters, by the caller)."""
        with self.lock:
            left = list(self.queue)
            self.queue.clear()
            if left and self.dispatcher.tracer is not None:
                # User code (label, tracer): the messages are out of the queue and must still
                # reach the dead letters, so a failure is logged and the trace lacks the event.
                try:
                    self._emit(
                        "dead_letter", {"mailbox": self.index, "items": [self._label(m) for m in left]}
                    )
                except Exception:
                    _log.exception(
                        "tracing the dead letters of %s failed; they are still reported", self.name
                    )
        return left

    # -- run, on an executor worker -------------------------------------------------------------

    def run(self) -> None:
        processed = 0
        try:
            if not self.is_closed():
                processed = self.process_mailbox()
        finally:
            self.after_run(processed)

    def process_mailbox(self) -> int:
        """Process up to ``max(throughput, 1)`` messages; stop early if empty, suspended or closed."""
        left = max(self.dispatcher.throughput, 1)
        done = 0
        while left > 0 and self.should_process_message():
            msg = self.dequeue()
            if msg is EMPTY:
                break
            done += 1
            left -= 1
            self.invoke(msg)
        return done

    def invoke(self, msg: T) -> None:
        self.processed += 1
        try:
            self.receive(msg)
        except Exception as exc:  # the actor's failure is reported; the mailbox goes on
            self.dispatcher.on_error(self.name, msg, exc)

    def after_run(self, processed: int) -> None:
        """setAsIdle, then the re-check: register again, looking at the queue itself."""
        self.set_as_idle(processed)
        self.dispatcher.register_for_execution(self, has_message_hint=False)

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

    __slots__ = ("_dispatcher", "mailbox")

    def __init__(self, dispatcher: Dispatcher, mailbox: Mailbox[T]) -> None:
        self._dispatcher = dispatcher
        self.mailbox = mailbox

    @property
    def name(self) -> str:
        return self.mailbox.name

    def tell(self, msg: T) -> Send:
        return self._dispatcher.dispatch(self.mailbox, msg)

    def suspend(self) -> None:
        self._dispatcher.suspend(self.mailbox)

    def resume(self) -> None:
        self._dispatcher.resume(self.mailbox)

    def close(self) -> list[T]:
        """Close the mailbox; returns the messages that went to the dead letters."""
        return self._dispatcher.close(self.mailbox)

    def __repr__(self) -> str:
        return f"ActorRef({self.mailbox.name!r})"


MailboxFactory = Callable[["Dispatcher", int, str, Callable[[Any], object]], Mailbox[Any]]


class Dispatcher:
    """Runs mailboxes on ``workers`` threads (``w0``, ``w1``...) taking them from one FIFO queue.

    Arguments are checked strictly (``reference.arguments``): ``TypeError`` or
    ``ValueError`` naming the field. ``throughput`` must be at least 1 (Pekko
    treats 0 or less as 1; here it is refused as the mistake it almost always
    is); at most ``MAX_WORKERS`` workers.

    If the dispatcher's own code raises while a worker runs a mailbox (not the
    actor's ``receive``, whose errors go to ``on_error``), the dispatcher
    *fails*: ``failure`` is set, no mailbox runs any more, later ``tell``s are
    dead-lettered, and ``shutdown`` dead-letters every message left and returns
    a report whose ``failure`` says why.
    """

    def __init__(
        self,
        throughput: int,
        workers: int,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        *,
        on_error: Callable[[str, Any, BaseException], None] | None = None,
        on_dead_letter: Callable[[str, Any], None] | None = None,
        item_label: Callable[[Any], Any] = str,
        mailbox_factory: MailboxFactory | None = None,
    ) -> None:
        arguments.count("throughput", throughput)
        arguments.count("workers", workers, maximum=MAX_WORKERS)
        arguments.runtime(runtime)
        arguments.tracer(tracer)
        arguments.function("on_error", on_error, optional=True)
        arguments.function("on_dead_letter", on_dead_letter, optional=True)
        arguments.function("item_label", item_label)
        arguments.function("mailbox_factory", mailbox_factory, optional=True)
        self.throughput = throughput
        self.workers = workers
        self.runtime = runtime or DEFAULT_RUNTIME
        self.tracer = tracer
        self.item_label = item_label
        self._on_error = on_error
        self._on_dead_letter = on_dead_letter
        self._mailbox_factory: MailboxFactory = mailbox_factory or Mailbox
        rt = self.runtime
        self._mutex = rt.lock(name="executor")
        self._work = rt.condition(self._mutex, name="executor.work")
        self._quiet = rt.condition(self._mutex, name="executor.quiet")
        # Guarded by _mutex:
        self._ready: deque[Mailbox[Any]] = deque()
        self._active = 0  # workers running a mailbox
        self._idle_workers = 0
        self._stopping = False
        self._mailboxes: list[Mailbox[Any]] = []
        self._dead: dict[str, list[Any]] = {}
        self._dead_lock = rt.lock(name="dead_letters")
        self._threads: list[ThreadHandle] = []
        self._worker_idents: set[object] = set()  # each worker adds itself (set.add is atomic)
        self._shut_down = False
        self._failure: BaseException | None = None  # the first fault of our own code
        if tracer is not None:
            tracer.begin(self.config())
        for i in range(workers):
            self._threads.append(rt.start_thread(self._worker, name=f"w{i}"))

    def config(self) -> dict[str, int]:
        """The ``config`` of this dispatcher's trace header (mailboxes counts those spawned so far)."""
        return {"workers": self.workers, "throughput": self.throughput}

    # -- actors --------------------------------------------------------------------------------------

    def spawn(self, receive: Callable[[T], object], name: str | None = None) -> ActorRef[T]:
        """A new actor running ``receive``; ``TypeError`` if ``receive`` is not callable or ``name``
        not a string, ``RuntimeError`` once the dispatcher is shut down."""
        arguments.function("receive", receive)
        arguments.text("name", name, optional=True)
        with self._mutex:
            if self._stopping:
                raise RuntimeError("the dispatcher is shut down")
            index = len(self._mailboxes)
            mailbox = self._mailbox_factory(self, index, name or f"mb{index}", receive)
            self._mailboxes.append(mailbox)
        return ActorRef(self, mailbox)

    @property
    def mailboxes(self) -> list[Mailbox[Any]]:
        with self._mutex:
            return list(self._mailboxes)

    # -- Pekko's MessageDispatcher -------------------------------------------------------------------

    @property
    def failure(self) -> BaseException | None:
        """The first exception the dispatcher's own code raised, or None."""
        return self._failure

    def dispatch(self, mailbox: Mailbox[T], msg: T) -> Send:
        """Enqueue, then register the mailbox with the message hint (a failed dispatcher dead-letters)."""
        self._check_own(mailbox)
        if self._failure is not None:
            self.dead_letter(mailbox, [msg])
            return Send.DEAD_LETTER
        try:
            enqueued = mailbox.enqueue(msg)
        except BaseException:
            # The tracer raised after the message was queued: it must still run (or be
            # dead-lettered at shutdown), so the mailbox is registered before the error propagates.
            self.register_for_execution(mailbox, has_message_hint=True)
            raise
        if not enqueued:
            return Send.DEAD_LETTER
        self.register_for_execution(mailbox, has_message_hint=True)
        return Send.OK

    def _check_own(self, mailbox: object) -> None:
        """A public method's ``mailbox`` must be one of this dispatcher's (``TypeError``/``ValueError``)."""
        if not isinstance(mailbox, Mailbox):
            raise TypeError(f"mailbox must be a Mailbox, got {type(mailbox).__name__}")
        if mailbox.dispatcher is not self:
            raise ValueError(f"mailbox {mailbox.name!r} belongs to another dispatcher")

    def register_for_execution(self, mailbox: Mailbox[Any], has_message_hint: bool) -> bool:
        """Schedule ``mailbox`` if it may run and has (or is hinted to have) messages."""
        if mailbox.can_be_scheduled(has_message_hint) and mailbox.set_as_scheduled():
            self.execute(mailbox)
            return True
        return False

    def suspend(self, mailbox: Mailbox[Any]) -> None:
        self._check_own(mailbox)
        mailbox.suspend()
        self._poke_shutdown()  # its messages no longer hold a shutdown back

    def resume(self, mailbox: Mailbox[Any]) -> None:
        """Remove one suspension and register again (messages may have arrived meanwhile)."""
        self._check_own(mailbox)
        if not mailbox.is_suspended():
            mailbox._emit_status("resume", {"mailbox": mailbox.index})  # a no-op, logged as the spec does
            return
        mailbox.resume()
        self.register_for_execution(mailbox, has_message_hint=False)

    def close(self, mailbox: Mailbox[T]) -> list[T]:
        """becomeClosed, then cleanUp: what is queued goes to the dead letters (and is returned)."""
        self._check_own(mailbox)
        mailbox.become_closed()
        left = mailbox.clean_up()
        if left:
            self.dead_letter(mailbox, left)
        self._poke_shutdown()
        return left

    def dead_letter(self, mailbox: Mailbox[Any], msgs: list[Any]) -> None:
        with self._dead_lock:
            self._dead.setdefault(mailbox.name, []).extend(msgs)
        hook = self._on_dead_letter
        if hook is not None:
            for msg in msgs:
                # The user's hook: a raise must not stop the others being offered (or,
                # in shutdown, the workers being joined). The message is recorded anyway.
                try:
                    hook(mailbox.name, msg)
                except Exception:
                    _log.exception("on_dead_letter raised for %s", mailbox.name)

    def on_error(self, name: str, msg: Any, exc: BaseException) -> None:
        if self._on_error is not None:
            try:
                self._on_error(name, msg, exc)
            except Exception:  # the user's hook: logged, and the mailbox goes on
                _log.exception("on_error raised for %s", name)
        else:
            _log.error("actor %s failed on %r", name, msg, exc_info=exc)

    @property
    def dead_letters(self) -> dict[str, list[Any]]:
        with self._dead_lock:
            return {k: list(v) for k, v in self._dead.items()}

    # -- the executor ----------------------------------------------------------------------------------

    def execute(self, mailbox: Mailbox[Any]) -> None:
        with self._mutex:
            self._ready.append(mailbox)
            tracer = self.tracer
            if tracer is not None:
                tracer.emit(self.runtime.thread_name(), "execute", {"mailbox": mailbox.index})
            if self._idle_workers:
                self._work.notify()

    def _worker(self) -> None:
        self._worker_idents.add(self.runtime.current_thread())
        try:
            self._work_loop()
        except Exception as exc:  # the executor's own loop failed: this worker is gone, say so
            _log.exception("worker %s died", self.runtime.thread_name())
            self._fail(exc)

    def _work_loop(self) -> None:
        finished = False
        while True:
            mailbox = self._take(finished)
            if mailbox is None:
                return
            if self._failure is None:
                try:
                    mailbox.run()
                except BaseException as exc:  # a last resort: a bug must not silently lose a worker
                    _log.exception("running %r raised", mailbox)
                    if isinstance(exc, Exception):
                        self._fail(exc)
            finished = True

    def _fail(self, error: BaseException) -> None:
        """Our own code raised: keep the first fault; the rest runs nothing and dead-letters all."""
        with self._mutex:
            if self._failure is None:
                self._failure = error
            self._quiet.notify_all()

    def _take(self, finished: bool) -> Mailbox[Any] | None:
        with self._mutex:
            if finished:
                self._active -= 1
                if not self._active and not self._ready:
                    self._quiet.notify_all()
            self._idle_workers += 1
            while not self._ready and not self._stopping:
                self._work.wait()
            self._idle_workers -= 1
            if not self._ready:
                return None
            mailbox = self._ready.popleft()
            self._active += 1
            tracer = self.tracer
            if tracer is not None:
                tracer.emit(self.runtime.thread_name(), "run_begin", {"mailbox": mailbox.index})
            return mailbox

    def _runnable_work_left(self) -> bool:
        """Called with _mutex held: something queued, running, or an open mailbox holding messages."""
        if self._ready or self._active:
            return True
        return any(mb.status.load() == OPEN and mb.has_messages() for mb in self._mailboxes)

    def _poke_shutdown(self) -> None:
        """A suspension or a close can end the wait of ``shutdown`` without any run ending."""
        with self._mutex:
            if self._shut_down:
                self._quiet.notify_all()

    def shutdown(self) -> ShutdownReport:
        """Finish what can run, close every mailbox (the rest goes to the dead letters), join the workers.

        Call it once the senders have stopped: a ``tell`` racing with it is either processed or
        dead-lettered, never lost. Suspended mailboxes are not waited for; their messages are
        reported as dead letters. ``RuntimeError`` if called twice, or from an actor's
        ``receive`` (it would wait for itself).
        """
        if self.runtime.current_thread() in self._worker_idents:
            # It would wait for the run it is called from to end: a deadlock, not a shutdown.
            raise RuntimeError("shutdown called from an actor's receive (it would wait for itself)")
        with self._mutex:
            if self._shut_down:
                raise RuntimeError("shutdown called twice")
            self._shut_down = True
            # A failed dispatcher runs nothing more: what is left goes to the dead letters.
            while self._runnable_work_left() and self._failure is None:
                self._quiet.wait()
            mailboxes = list(self._mailboxes)
        for mailbox in mailboxes:
            self.close(mailbox)
        with self._mutex:
            self._stopping = True
            self._work.notify_all()
        for thread in self._threads:
            thread.join()
        processed = sum(mb.processed for mb in mailboxes)
        if self._failure is not None:
            _log.error(
                "the dispatcher failed (%s: %s); every message it did not process is a dead letter",
                type(self._failure).__name__,
                self._failure,
            )
        return ShutdownReport(self.dead_letters, processed, self._failure)
