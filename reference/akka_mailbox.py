"""Akka/Pekko's Mailbox + Dispatcher, in Python, on the runtime seam.

    dispatcher = Dispatcher(throughput=16, workers=4)
    ref = dispatcher.spawn(lambda msg: print(msg), name="printer")
    ref.tell("hello")                      # Send.OK, or Send.DEAD_LETTER once closed
    ref.suspend(); ref.resume(); ref.close()
    report = dispatcher.shutdown()         # finishes what can run, closes every mailbox, joins
    report.dead_letters                    # every message that was never processed

Each mailbox has one status word (``runtime.atomic_int``) changed only by
compare-and-swap loops: bit 1 Closed, bit 2 Scheduled, suspend count in units
of 4 — Pekko's encoding. ``tell`` is Akka's lock-free enqueue: one read of the word
(Closed: a dead letter at once), one ``append`` to the runtime's shared FIFO with no
lock, then one more read of the word, which decides: Open, ``set_as_scheduled``
(a CAS that sets Scheduled only when the word is open and unscheduled: one
reservation) and ``executor.execute``; Scheduled or suspended, nothing (whoever
holds the reservation looks at the queue after its run); Closed, the close came
between the two reads, so the sender cleans up itself. A worker runs the
mailbox: unless closed, it processes up to ``max(throughput, 1)`` messages, each
popped under the queue's consumer lock, stopping early when the queue is empty or
the mailbox is suspended or closed; then ``set_as_idle`` (a CAS clearing
Scheduled) and registers again with no hint, which looks at the queue itself: a
message whose sender found the mailbox still Scheduled is not stranded.

Closing is ``become_closed`` (the word becomes exactly Closed) then ``clean_up``
(under the consumer lock, what is queued goes to the dead letters). A message
appended after that cleanUp is cleaned up by its own sender, which reads Closed
after its append: nothing is dropped silently (Pekko swaps the actor's mailbox
for the dead-letter mailbox instead, and may drop such a message).

Trace events (``docs/akka-mailbox.md``) are emitted at each step's linearisation
point: ``send`` with the read that decides its fate, ``append`` with the append (under the
trace lock: the trace shows the queue's order), ``process`` and ``dead_letter`` with their pops
(``process`` under the trace lock too, after any status event its run's read saw), the status events right
after their successful CAS, ``execute``/``run_begin`` under the executor lock. With
no tracer each emit is skipped behind one ``is not None``.

One mailbox and its ``ActorRef`` are in ``akka_actor`` (re-exported here); this
module is the dispatcher that runs them.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from . import arguments
from .akka_actor import CLOSED, OPEN, SCHEDULED, ActorRef, Mailbox, Send
from .arguments import MAX_WORKERS
from .runtime import DEFAULT_RUNTIME, Runtime, ThreadHandle
from .tracing import Tracer

T = TypeVar("T")

DESIGN = "akka-mailbox"

_log = logging.getLogger(__name__)


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

    def config(self) -> dict[str, int | bool]:
        """The ``config`` of this dispatcher's trace header: ``logs_append`` says its trace logs
        every accepted message's ``append`` (docs/akka-mailbox.md)."""
        return {"workers": self.workers, "throughput": self.throughput, "logs_append": True}

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
        return self.send(mailbox, msg)

    def send(self, mailbox: Mailbox[T], msg: T) -> Send:
        """``dispatch`` without the ownership check (an ``ActorRef`` of this dispatcher's ``spawn``).

        The append takes no lock; then one read of the status word decides: Scheduled (or
        suspended), nothing to do, as the reservation's holder re-checks the queue after its
        ``set_as_idle``; Open, ``set_as_scheduled`` and ``execute``; Closed, the close came
        between our read and our append, maybe after its cleanUp, so we clean up ourselves.
        """
        if self._failure is not None:
            self.dead_letter(mailbox, [msg])
            return Send.DEAD_LETTER
        try:
            enqueued = mailbox.enqueue(msg)
        except BaseException:
            # The tracer raised after the read that decided (the message was appended or
            # dead-lettered all the same), or the label raised before it (nothing was): the
            # sender does its part as after an append, harmless if there was none.
            self._after_append(mailbox, mailbox.status.load())
            raise
        if not enqueued:
            return Send.DEAD_LETTER
        # Traced, a Scheduled (or suspended) word sends this thread on with no event of this
        # mailbox: it must not see a CAS whose event is not logged yet (``Mailbox.logged_word``).
        word = mailbox.status.load() if mailbox.trace_lock is None else mailbox.logged_word()
        if word != SCHEDULED:  # Scheduled, by far the commonest under load, owes nothing
            self._after_append(mailbox, word)
        return Send.OK

    def _after_append(self, mailbox: Mailbox[Any], word: int) -> None:
        """What a sender owes once its message is queued, decided by ``word``, read after the append."""
        if word == OPEN:
            if mailbox.set_as_scheduled():
                self.execute(mailbox)
        elif word == CLOSED:
            left = mailbox.clean_up()
            if left:
                self.dead_letter(mailbox, left)

    def _check_own(self, mailbox: object) -> None:
        """A public method's ``mailbox`` must be one of this dispatcher's (``TypeError``/``ValueError``)."""
        if not isinstance(mailbox, Mailbox):
            raise TypeError(f"mailbox must be a Mailbox, got {type(mailbox).__name__}")
        if mailbox.dispatcher is not self:
            raise ValueError(f"mailbox {mailbox.name!r} belongs to another dispatcher")

    def register_for_execution(
        self, mailbox: Mailbox[Any], has_message_hint: bool, wake: bool = True
    ) -> bool:
        """Schedule ``mailbox`` if it may run and has (or is hinted to have) messages.

        ``wake=False``: the caller is the worker that just ran it and goes straight back to the
        executor queue, so no idle worker is woken for it (see ``execute``).
        """
        if mailbox.can_be_scheduled(has_message_hint) and mailbox.set_as_scheduled():
            self.execute(mailbox, wake)
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
        """becomeClosed, then cleanUp: what is queued goes to the dead letters (and is returned).

        Only the call that closes the mailbox cleans up: a message appended after that cleanUp
        is cleaned up by its own sender, which reads Closed after its append (``send``), so a
        second close finds nothing to do (and the reference mutant ``send-no-clean-up`` is seen).
        Such a sender may also clean up between ``become_closed`` and this cleanUp, so the list
        returned can lack messages that were queued at the close: every message still reaches the
        dead letters (``dead_letters``, the ``on_dead_letter`` hook), once.
        """
        self._check_own(mailbox)
        if not mailbox.become_closed():
            return []
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

    def execute(self, mailbox: Mailbox[Any], wake: bool = True) -> None:
        """Queue ``mailbox`` for a worker; ``wake=False`` only from the worker whose run just ended.

        That worker takes from the queue next, so it runs the mailbox again itself (or an older
        one, whose own ``execute`` woke a worker): waking another worker instead hands the
        mailbox from thread to thread after every run, which on a multi-core machine costs more
        than the run (many senders into one mailbox: a GIL hand-off per ``throughput`` messages).
        """
        with self._mutex:
            self._ready.append(mailbox)
            tracer = self.tracer
            if tracer is not None:
                tracer.emit(self.runtime.thread_name(), "execute", {"mailbox": mailbox.index})
            if wake and self._idle_workers:
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


__all__ = ["DESIGN", "Dispatcher", "MailboxFactory", "ShutdownReport", "trace_header"]
# Also offered here, as before the mailbox had a module of its own (tests import them from here).
__all__ += ["CLOSED", "OPEN", "ActorRef", "Mailbox", "Send"]
