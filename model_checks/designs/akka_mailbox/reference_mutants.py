"""Seeded bugs in the *real* Akka-mailbox reference, and the harness program that catches them.

Each mutant is a subclass of ``Mailbox`` or ``Dispatcher`` overriding one
method, plugged into an otherwise unchanged dispatcher through its
``mailbox_factory`` seam (or used instead of ``Dispatcher``), so the harness runs
exactly the production algorithm but for one step. ``REFERENCE_MUTANTS`` names
them with the kind of failure the harness must report and the spec mutant that
is the same bug one level up.

``program(constants, build)`` turns a configuration of the spec
(``spec.akka_mailbox.Constants``: producers' scripts, a supervisor's script,
workers, throughput) into a harness test program over the real code, with the
spec's invariants as harness checks:

* ``one_reservation`` — a mailbox is at most once in the executor queue, and at
  most one thread is inside its actor's ``receive``;
* ``closed_absorbing`` — a status word that was Closed stays exactly Closed;
* ``throughput`` — no run processes more than ``max(throughput, 1)`` messages
  (read from the trace: ``process`` events between ``run_begin`` and ``run_end``);
* pending work — an open mailbox holding messages: a deadlock then is a lost wakeup;
* final — every message sent was processed or dead-lettered, each once, in send
  order per sender and mailbox.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from model_checks.mutant import by_name
from reference.akka_actor import CLOSED, EMPTY, OPEN, SCHEDULED, SHOULD_SCHEDULE_MASK, Mailbox, Send
from reference.akka_mailbox import Dispatcher
from reference.runtime import Runtime
from reference.tracing import RecordingTracer
from spec.akka_mailbox import Constants

Build = Callable[..., Dispatcher]
T = TypeVar("T")


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    build: Build  # same signature as ``Dispatcher``
    expect: str  # the kind of failure a harness run must report
    spec_variant: str | None  # the same bug in the spec
    constants: Constants  # the smallest scenario that shows it


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = {}
MutantClass = type[Mailbox[Any]] | type[Dispatcher]


def _mutant(name: str, doc: str, expect: str, constants: Constants) -> Callable[[MutantClass], MutantClass]:
    """The class below is the mutant ``name``, named as its spec twin: a ``Mailbox`` class is
    plugged in through ``mailbox_factory``, a ``Dispatcher`` class is used instead of ``Dispatcher``."""

    def register(cls: MutantClass) -> MutantClass:
        build = cls if issubclass(cls, Dispatcher) else partial(Dispatcher, mailbox_factory=cls)
        mutant = ReferenceMutant(name, doc, build, expect=expect, spec_variant=name, constants=constants)
        REFERENCE_MUTANTS.update(by_name(*REFERENCE_MUTANTS.values(), mutant))
        return cls

    return register


def _c(
    script: tuple[tuple[int, ...], ...],
    supervise: tuple[tuple[tuple[str, int], ...], ...] = (),
    workers: int = 1,
    throughput: int = 1,
) -> Constants:
    return Constants(mailboxes=1, workers=workers, throughput=throughput, script=script, supervise=supervise)


@_mutant("no-recheck", "the re-check after setAsIdle dropped", "lost_wakeup", _c(((0, 0),)))
class NoRecheckMailbox(Mailbox[Any]):
    """BUG: the run ends with setAsIdle and does not register the mailbox again."""

    def after_run(self, processed: int) -> None:
        self.set_as_idle(processed)


# Two senders' CASes race: both find the word Open after their appends. (A sender's CAS racing
# the runner's re-check shows the same bug with one sender, but deeper: a run that ends with
# messages queued keeps its reservation without a CAS, so that race needs the queue read empty
# at the run's end and an append just after.)
@_mutant("check-then-set", "setAsScheduled as load, test and plain store", "invariant", _c(((0,), (0,))))
class CheckThenSetMailbox(Mailbox[Any]):
    """BUG: setAsScheduled loads, tests and then stores: two threads can both take the reservation."""

    def set_as_scheduled(self) -> bool:
        s = self.status.load()
        if s & SHOULD_SCHEDULE_MASK != OPEN:
            return False
        self.status.store(s | SCHEDULED)
        self._emit("schedule", {"mailbox": self.index})
        return True


@_mutant(
    "schedule-while-closed",
    "setAsScheduled testing only the Scheduled bit",
    "invariant",
    _c(((0,),), ((("close", 0),),)),
)
class ScheduleWhileClosedMailbox(Mailbox[Any]):
    """BUG: setAsScheduled tests only the Scheduled bit, so a closed mailbox gets scheduled."""

    def set_as_scheduled(self) -> bool:
        while True:
            s = self.status.load()
            if s & SCHEDULED:
                return False
            if self._cas(s, s | SCHEDULED, "schedule", {"mailbox": self.index}):
                return True


@_mutant("past-throughput", "the processing loop ignoring the throughput budget", "invariant", _c(((0, 0),)))
class PastThroughputMailbox(Mailbox[Any]):
    """BUG: the processing loop forgets the budget and runs until the queue is empty."""

    def process_mailbox(self) -> int:
        done = 0
        while self.should_process_message():
            msg = self.dequeue()
            if msg is EMPTY:
                break
            done += 1
            self.invoke(msg)
        return done


@_mutant(
    "resume-without-register",
    "resume not registering the mailbox again",
    "lost_wakeup",
    _c(((0,),), ((("suspend", 0), ("resume", 0)),)),
)
class ResumeWithoutRegisterDispatcher(Dispatcher):
    """BUG: resume lowers the suspend count but does not register the mailbox again."""

    def resume(self, mailbox: Mailbox[Any]) -> None:
        if not mailbox.is_suspended():
            mailbox._emit_status("resume", {"mailbox": mailbox.index})
            return
        mailbox.resume()


@_mutant("idle-store", "setAsIdle as a load and a plain store", "invariant", _c(((0,),), ((("close", 0),),)))
class IdleStoreMailbox(Mailbox[Any]):
    """BUG: setAsIdle loads and stores instead of a CAS loop: a close in between is overwritten."""

    def set_as_idle(self, processed: int) -> None:
        s = self.status.load()
        self.status.store(s & ~SCHEDULED)
        # It logs the word it wrote, as the reference does: that is what shows the lost close.
        self._emit("run_end", {"mailbox": self.index, "processed": processed, "status": s & ~SCHEDULED})


@_mutant(
    "send-no-clean-up",
    "a sender reading Closed after its append leaves its message queued",
    "assertion",
    _c(((0,),), ((("close", 0),),)),
)
class SendNoCleanUpDispatcher(Dispatcher):
    """BUG: after its append the sender reads Closed and does nothing: the close's cleanUp may
    already be over, and the message waits in a closed mailbox for good."""

    def _after_append(self, mailbox: Mailbox[Any], word: int) -> None:
        if word != CLOSED:
            super()._after_append(mailbox, word)


@_mutant(
    "decide-before-append",
    "the sender reads the word before its append and acts on that read after it",
    "lost_wakeup",
    _c(((0, 0),)),
)
class DecideBeforeAppendDispatcher(Dispatcher):
    """BUG: the word read that decides what the sender owes is taken before the append: a run
    that ends between them re-checks a queue without this message, and the sender, having
    seen Scheduled, registers nothing."""

    def send(self, mailbox: Mailbox[T], msg: T) -> Send:
        word = mailbox.status.load()
        if not mailbox.enqueue(msg):
            return Send.DEAD_LETTER
        if word != SCHEDULED:
            self._after_append(mailbox, word)
        return Send.OK


# --------------------------------------------------------------------------- the harness program


def program(c: Constants, build: Build = Dispatcher) -> Callable[[Any], object]:
    """A harness test program: the spec's configuration ``c`` run on real code built by ``build``."""

    def test(rt: Any) -> object:
        runtime: Runtime = rt
        tracer = RecordingTracer()
        d = build(c.throughput, c.workers, runtime=runtime, tracer=tracer)
        inside = [0] * c.mailboxes
        got: list[list[str]] = [[] for _ in range(c.mailboxes)]

        def receiver(mb: int) -> Callable[[str], None]:
            def receive(msg: str) -> None:
                inside[mb] += 1
                rt.yield_point("receive")
                got[mb].append(msg)
                inside[mb] -= 1

            return receive

        refs = [d.spawn(receiver(mb), name=f"mb{mb}") for mb in range(c.mailboxes)]
        mailboxes = [r.mailbox for r in refs]
        ever_closed = [False] * c.mailboxes
        budget = c.budget()
        scanned = [0]
        run_count: dict[str, int] = {}

        def one_reservation() -> bool:
            ready = list(d._ready)
            for mb, box in enumerate(mailboxes):
                assert ready.count(box) <= 1, (
                    f"mailbox {mb} is {ready.count(box)} times in the executor queue"
                )
                assert inside[mb] <= 1, f"{inside[mb]} threads run mailbox {mb}'s actor at once"
            return True

        def closed_absorbing() -> bool:
            for mb, box in enumerate(mailboxes):
                word = box.status.load()
                if word & CLOSED:
                    ever_closed[mb] = True
                    assert word == CLOSED, f"mailbox {mb} closed but its status word is {word}"
                assert not ever_closed[mb] or word == CLOSED, (
                    f"mailbox {mb} was closed, now its word is {word}"
                )
            return True

        def throughput() -> bool:
            events = tracer.events(scanned[0])
            scanned[0] += len(events)
            for e in events:
                if e["event"] == "run_begin":
                    run_count[e["thread"]] = 0
                elif e["event"] == "process":
                    run_count[e["thread"]] = run_count.get(e["thread"], 0) + 1
                    n = run_count[e["thread"]]
                    assert n <= budget, f"{e['thread']} processed {n} messages in one run, budget {budget}"
            return True

        rt.invariant(one_reservation, "one_reservation")
        rt.invariant(closed_absorbing, "closed_absorbing")
        rt.invariant(throughput, "throughput")
        rt.pending_work(lambda: any(b.status.load() == OPEN and b.queue for b in mailboxes))
        rt.trace(lambda: list(tracer.events()))

        def producer(p: str) -> Callable[[], None]:
            def body() -> None:
                k = 0
                while (send := c.send_of(p, k)) is not None:
                    mb, item = send
                    refs[mb].tell(item)
                    k += 1

            return body

        def supervisor(t: str) -> Callable[[], None]:
            def body() -> None:
                k = 0
                while (op := c.op_of(t, k)) is not None:
                    name, mb = op
                    getattr(refs[mb], name)()
                    k += 1

            return body

        threads = [rt.start_thread(producer(p), p) for p in c.producer_names()]
        threads += [rt.start_thread(supervisor(t), t) for t in c.supervisor_names()]
        for t in threads:
            t.join()
        report = d.shutdown()

        def final() -> tuple[tuple[str, ...], ...]:
            for mb in range(c.mailboxes):
                sent = [item for p in c.producer_names() for m, item in _sends(c, p) if m == mb]
                dead = [str(x) for x in report.dead_letters.get(f"mb{mb}", [])]
                assert sorted(got[mb] + dead) == sorted(sent), (
                    f"mailbox {mb}: sent {sent}, got {got[mb]} + {dead}"
                )
                for p in c.producer_names():
                    mine = [item for item in got[mb] if item.startswith(f"{p}.")]
                    assert mine == sorted(mine, key=lambda i: int(i.split(".")[1])), f"not FIFO: {mine}"
            return tuple(tuple(g) for g in got)

        return final

    return test


def _sends(c: Constants, p: str) -> list[tuple[int, str]]:
    out = []
    k = 0
    while (send := c.send_of(p, k)) is not None:
        out.append(send)
        k += 1
    return out
