"""MODULE AkkaMailbox — Akka/Pekko's Mailbox + Dispatcher, the design Work Lane borrows from.

Every mailbox has one status word, updated only by compare-and-swap: bit 1 is
Closed, bit 2 is Scheduled, and the rest counts suspensions in units of 4
(Pekko ``Mailbox.scala``: ``Closed = 1``, ``Scheduled = 2``, ``suspendUnit = 4``).
A send is Akka's lock-free enqueue: it reads the word (Closed: a dead letter at
once), appends its message to the queue with no lock, and reads the word again:
Open, it *registers* the mailbox for execution — ``setAsScheduled`` (a CAS that
sets Scheduled only when the word is open and not yet scheduled), then
``executor.execute(mailbox)``; Scheduled or suspended, it is done; Closed, it
runs a cleanUp of its own. Registration in general (a run's end, a resume) is
``canBeScheduledForExecution`` (not closed, not suspended, and a message is there
or hinted), ``setAsScheduled``, ``executor.execute``.
A worker of the executor runs the mailbox: unless closed, it processes up to
``max(throughput, 1)`` messages (stopping early when the queue is empty or the
mailbox is suspended or closed), clears Scheduled (``setAsIdle``) and registers
the mailbox again with no hint — the re-check that looks at the queue itself and
so catches a message whose sender found the mailbox still Scheduled.
A supervisor suspends and resumes (the count moves by CAS; resume registers
again) and closes: ``becomeClosed`` then ``cleanUp`` moves what is queued to the
dead letters; a send to a closed mailbox goes to the dead letters at once.

Each action is one atomic step of the real code: one CAS (a CAS loop that
retries is a series of failed attempts that change nothing, i.e. stuttering,
then one atomic success), one read of the status word, one append to the queue
(no lock), or one critical section of the queue's consumer lock (a pop, or a
cleanUp's pops until empty: only appends run meanwhile, at the tail, so the
cleanUp takes effect at its last pop). Actions that an implementation logs carry the
event names of ``docs/akka-mailbox.md``.

A run's end that reads the queue non-empty and then the word exactly Scheduled may
keep its reservation without writing the word: ``SetAsIdle``, ``RegisterSeesOpen``,
``RegisterSeesMessages`` and ``SetAsScheduled`` back to back at that read leave the
word as it was (only a cleanUp could have emptied the queue in between, and it
follows a close, which leaves the word Closed).
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

# EXTENDS akka_mailbox_state: its constants, variables, operators and invariants are this module's too.
from spec.akka_mailbox_state import *  # noqa: F403
from spec.language import (
    WF,
    Append,
    EventuallyAlways,
    Function,
    Head,
    Seq,
    SpecBuilder,
    Tail,
    emit,
)

# ============================================================================ CONSTANTS


AkkaMailbox = SpecBuilder("akka-mailbox", __doc__ or "")


@AkkaMailbox.assume
def PositiveSizes(c: Constants) -> str | None:
    """A dispatcher has at least one mailbox and one worker (throughput may be anything)."""
    if c.mailboxes < 1 or c.workers < 1:
        return "mailboxes and workers must be at least 1"
    return None


@AkkaMailbox.assume
def ScriptsNameMailboxes(c: Constants) -> str | None:
    """Every send and supervisor operation names a mailbox of the dispatcher."""
    targets = [m for script in c.script for m in script] + [m for ops in c.supervise for _, m in ops]
    if any(not 0 <= m < c.mailboxes for m in targets):
        return f"a script names a mailbox outside 0..{c.mailboxes - 1}"
    if any(op not in ("suspend", "resume", "close") for ops in c.supervise for op, _ in ops):
        return "supervisor operations are suspend, resume and close"
    return None


# ============================================================================ INIT


@AkkaMailbox.init
def Init(c: Constants) -> list[Vars]:
    boxes = Mailboxes(c)
    return [
        Vars(
            status=Function.const(boxes, OPEN),
            queue=Function.const(boxes, Seq()),
            executor=(),
            producer=Function.const(Producers(c), (IDLE, 0, None)),
            worker=Function.const(Workers(c), (IDLE, None, 0)),
            supervisor=Function.const(Supervisors(c), (IDLE, 0, None)),
            sent=Function.const(boxes, 0),
            processed=Function.const(boxes, 0),
            last=Function.const(boxes, 0),
            dead=Function.const(boxes, 0),
            closed=Function.const(boxes, False),
        )
    ]


# Where each process is in its program (the pcs are spec.akka_mailbox_state's): each action below
# names the counters it can fire from (``at=``), which its guard also checks; the explorer skips it
# elsewhere. Every thread may run registerForExecution (``Registrars``).
AkkaMailbox.program_counter(Producers)(ProducerPc)
AkkaMailbox.program_counter(Workers)(WorkerPc)
AkkaMailbox.program_counter(Supervisors)(SupervisorPc)
AkkaMailbox.program_counter(Registrars)(RegistrarPc)


# ============================================================================ ACTIONS: producers (dispatch)
# A send is three atomic steps: read the status word and, not Closed, owe the append (P_APPEND);
# append, then re-check the word for registerForExecution (P_RECHECK); found Closed, clean the
# message up (P_CLEANUP). The pcs and the reads are in spec/akka_mailbox_state.py.


@AkkaMailbox.action(Producers, event="send", at=IDLE)
def SendSeesOpen(c: Constants, s: Vars, p: str) -> object:
    """enqueue reads the word: not Closed, so the message is accepted and its append is owed."""
    send = SendAt(c, s, p)
    if send is None:
        return None
    k, mb, item = send
    if IsClosed(s.status[mb]):
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_APPEND, k, mb))), mailbox=mb, item=item, result="ok"
    )


@AkkaMailbox.action(Producers, event="send", at=IDLE)
def SendToClosed(c: Constants, s: Vars, p: str) -> object:
    """enqueue reads the word: Closed, so the message goes to the dead letters at once."""
    send = SendAt(c, s, p)
    if send is None:
        return None
    k, mb, item = send
    if not IsClosed(s.status[mb]):
        return None
    return emit(
        s._replace(
            sent=s.sent.except_(mb, s.sent[mb] + 1),
            dead=s.dead.except_(mb, s.dead[mb] + 1),
            producer=s.producer.except_(p, (IDLE, k + 1, None)),
        ),
        mailbox=mb,
        item=item,
        result="dead_letter",
    )


@AkkaMailbox.action(Producers, event="append", at=P_APPEND)
def Enqueue(c: Constants, s: Vars, p: str) -> object:
    """The append, with no lock and whatever the word is now: one atomic step of the queue.

    Logged as ``append``: without it nothing pins a sender's last append until its message is
    processed, and a validator must hold every place it could have taken in the queue. A trace
    format that does not log it (``config.logs_append`` absent) is judged against this spec with
    the step internal (``WithoutAppendEvents`` in the design's trace search)."""
    pc, k, mb = s.producer[p]
    send = c.send_of(p, k)
    if pc != P_APPEND or mb is None or send is None:
        return None
    item = send[1]
    position = s.sent[mb] + 1
    return emit(
        s._replace(
            queue=s.queue.except_(mb, Append(s.queue[mb], (position, item))),
            sent=s.sent.except_(mb, position),
            producer=s.producer.except_(p, (P_RECHECK, k + 1, mb)),
        ),
        mailbox=mb,
        item=item,
    )


@AkkaMailbox.action(Producers, at=P_RECHECK)
def SendSeesUnscheduled(c: Constants, s: Vars, p: str) -> object:
    """After the append the word reads Open: registerForExecution, straight to setAsScheduled."""
    return ReadWord(s, p, P_RECHECK, lambda word: word == OPEN, R_CAS)


@AkkaMailbox.action(Producers, at=P_RECHECK)
def SendSeesScheduled(c: Constants, s: Vars, p: str) -> object:
    """After the append the word reads Scheduled or suspended: the sender owes nothing more."""
    return ReadWord(s, p, P_RECHECK, lambda word: word not in (OPEN, CLOSED), IDLE)


@AkkaMailbox.action(Producers, at=P_RECHECK)
def SendSeesClosed(c: Constants, s: Vars, p: str) -> object:
    """After the append the word reads Closed: the close came after the first read."""
    return ReadWord(s, p, P_RECHECK, IsClosed, P_CLEANUP)


@AkkaMailbox.action(Producers, event="dead_letter", at=P_CLEANUP)
def SenderCleanUp(c: Constants, s: Vars, p: str) -> object:
    """The sender's cleanUp, under the consumer lock: what is queued goes to the dead letters."""
    mb = At(s, p, P_CLEANUP)
    if mb is None or not s.queue[mb]:
        return None
    cleaned, items = CleanedUp(s, mb)
    return emit(SetLocal(cleaned, p, IDLE, None), mailbox=mb, items=items)


@AkkaMailbox.action(Producers, at=P_CLEANUP)
def SenderCleanUpEmpty(c: Constants, s: Vars, p: str) -> object:
    """The sender's cleanUp finds nothing: the supervisor's cleanUp (or a run) took the message."""
    return ReadQueue(s, p, P_CLEANUP, False, IDLE)


# ============================================================================ ACTIONS: registerForExecution


@AkkaMailbox.action(Registrars, at=R_STATUS)
def RegisterSeesOpen(c: Constants, s: Vars, p: str) -> object:
    """canBeScheduledForExecution reads the word: Open or Scheduled, so it goes on."""
    return ReadWord(s, p, R_STATUS, lambda word: word in (OPEN, SCHEDULED), R_CAS if HasHint(p) else R_QUEUE)


@AkkaMailbox.action(Registrars, at=R_STATUS)
def RegisterSeesBlocked(c: Constants, s: Vars, p: str) -> object:
    """canBeScheduledForExecution reads the word: closed or suspended, so no registration."""
    return ReadWord(s, p, R_STATUS, lambda word: word not in (OPEN, SCHEDULED), IDLE)


@AkkaMailbox.action(Registrars, at=R_QUEUE)
def RegisterSeesMessages(c: Constants, s: Vars, p: str) -> object:
    """With no hint, hasMessages looks at the queue itself: a message is there."""
    return ReadQueue(s, p, R_QUEUE, True, R_CAS)


@AkkaMailbox.action(Registrars, at=R_QUEUE)
def RegisterSeesEmpty(c: Constants, s: Vars, p: str) -> object:
    """With no hint, hasMessages finds the queue empty: nothing to run."""
    return ReadQueue(s, p, R_QUEUE, False, IDLE)


@AkkaMailbox.action(Registrars, event="schedule", at=R_CAS)
def SetAsScheduled(c: Constants, s: Vars, p: str) -> object:
    """setAsScheduled: the CAS that sets Scheduled succeeds (the word is open and not scheduled)."""
    mb = At(s, p, R_CAS)
    if mb is None:
        return None
    word = s.status[mb]
    if word & SHOULD_SCHEDULE_MASK != OPEN:
        return None
    return emit(
        SetLocal(s._replace(status=s.status.except_(mb, word | SCHEDULED)), p, R_EXECUTE, mb), mailbox=mb
    )


@AkkaMailbox.action(Registrars, at=R_CAS)
def AlreadyScheduled(c: Constants, s: Vars, p: str) -> object:
    """setAsScheduled returns false: someone else holds the reservation, or the mailbox closed."""
    return ReadWord(s, p, R_CAS, lambda word: word & SHOULD_SCHEDULE_MASK != OPEN, IDLE)


@AkkaMailbox.action(Registrars, event="execute", at=R_EXECUTE)
def Execute(c: Constants, s: Vars, p: str) -> object:
    """executor.execute(mailbox): the reservation enters the executor's FIFO queue."""
    mb = At(s, p, R_EXECUTE)
    if mb is None:
        return None
    return emit(SetLocal(s._replace(executor=(*s.executor, mb)), p, IDLE, None), mailbox=mb)


# ============================================================================ ACTIONS: workers (Mailbox.run)


@AkkaMailbox.action(Workers, event="run_begin", at=IDLE)
def RunBegin(c: Constants, s: Vars, w: str) -> object:
    """An idle worker takes the oldest mailbox from the executor queue and starts ``run``."""
    if s.worker[w][0] != IDLE or not s.executor:
        return None
    mb = s.executor[0]
    return emit(
        s._replace(executor=s.executor[1:], worker=s.worker.except_(w, (W_CLOSED_CHECK, mb, 0))), mailbox=mb
    )


@AkkaMailbox.action(Workers, at=W_CLOSED_CHECK)
def RunSeesOpen(c: Constants, s: Vars, w: str) -> object:
    """run: ``if (!isClosed)`` — not closed, so it processes messages."""
    return ReadWord(s, w, W_CLOSED_CHECK, lambda word: not IsClosed(word), W_SHOULD)


@AkkaMailbox.action(Workers, at=W_CLOSED_CHECK)
def RunSeesClosed(c: Constants, s: Vars, w: str) -> object:
    """run: the mailbox is closed, so it processes nothing and goes straight to setAsIdle."""
    return ReadWord(s, w, W_CLOSED_CHECK, IsClosed, W_SET_IDLE)


@AkkaMailbox.action(Workers, at=W_SHOULD)
def ShouldProcessYes(c: Constants, s: Vars, w: str) -> object:
    """processMailbox: shouldProcessMessage reads the word: neither closed nor suspended."""
    return ReadWord(s, w, W_SHOULD, ShouldProcess, W_DEQUEUE)


@AkkaMailbox.action(Workers, at=W_SHOULD)
def ShouldProcessNo(c: Constants, s: Vars, w: str) -> object:
    """processMailbox: suspended or closed, so the run stops early."""
    return ReadWord(s, w, W_SHOULD, lambda word: not ShouldProcess(word), W_SET_IDLE)


@AkkaMailbox.action(Workers, event="process", at=W_DEQUEUE)
def Process(c: Constants, s: Vars, w: str) -> object:
    """Under the consumer lock, dequeue the oldest message; the actor handles it; loop while budget left."""
    pc, mb, n = s.worker[w]
    if pc != W_DEQUEUE or mb is None or not s.queue[mb]:
        return None
    (position, item), rest = Head(s.queue[mb]), Tail(s.queue[mb])
    done = n + 1
    return emit(
        s._replace(
            queue=s.queue.except_(mb, rest),
            processed=s.processed.except_(mb, s.processed[mb] + 1),
            last=s.last.except_(mb, position),
            worker=s.worker.except_(w, (W_SHOULD if done < c.budget() else W_SET_IDLE, mb, done)),
        ),
        mailbox=mb,
        item=item,
    )


@AkkaMailbox.action(Workers, at=W_DEQUEUE)
def DequeueEmpty(c: Constants, s: Vars, w: str) -> object:
    """Under the consumer lock, dequeue finds nothing: the run stops early."""
    return ReadQueue(s, w, W_DEQUEUE, False, W_SET_IDLE)


@AkkaMailbox.action(Workers, event="run_end", at=W_SET_IDLE)
def SetAsIdle(c: Constants, s: Vars, w: str) -> object:
    """setAsIdle: the CAS clears Scheduled; then registerForExecution(hints false) re-checks the queue."""
    pc, mb, n = s.worker[w]
    if pc != W_SET_IDLE or mb is None:
        return None
    word = s.status[mb] & ~SCHEDULED
    return emit(
        s._replace(status=s.status.except_(mb, word), worker=s.worker.except_(w, (R_STATUS, mb, 0))),
        mailbox=mb,
        processed=n,
        status=word,  # optional in a trace: the word written shows a setAsIdle that overwrote a close
    )


# ============================================================================ ACTIONS: supervisor


@AkkaMailbox.action(Supervisors, event="suspend", at=IDLE)
def Suspend(c: Constants, s: Vars, t: str) -> object:
    """suspend: a CAS adds one suspend unit (a closed word stays Closed)."""
    op = OpAt(c, s, t, "suspend")
    if op is None:
        return None
    k, mb = op
    word = s.status[mb]
    return emit(
        s._replace(
            status=s.status if IsClosed(word) else s.status.except_(mb, word + SUSPEND_UNIT),
            supervisor=s.supervisor.except_(t, (IDLE, k + 1, None)),
        ),
        mailbox=mb,
    )


@AkkaMailbox.action(Supervisors, event="resume", at=IDLE)
def Resume(c: Constants, s: Vars, t: str, register: bool = True) -> object:
    """resume of a suspended mailbox: a CAS removes one suspend unit, then registerForExecution.

    ``register=False``: without the registerForExecution (the mutant resume-without-register)."""
    op = OpAt(c, s, t, "resume")
    if op is None:
        return None
    k, mb = op
    word = s.status[mb]
    if IsClosed(word) or not IsSuspended(word):  # Dispatcher.resume acts only on a suspended mailbox
        return emit(s._replace(supervisor=s.supervisor.except_(t, (IDLE, k + 1, None))), mailbox=mb)
    then = (R_STATUS, k + 1, mb) if register else (IDLE, k + 1, None)
    return emit(
        s._replace(
            status=s.status.except_(mb, word - SUSPEND_UNIT), supervisor=s.supervisor.except_(t, then)
        ),
        mailbox=mb,
    )


@AkkaMailbox.action(Supervisors, event="close", at=IDLE)
def Close(c: Constants, s: Vars, t: str) -> object:
    """becomeClosed: a CAS sets the word to Closed, whatever it was (Scheduled and suspensions go)."""
    op = OpAt(c, s, t, "close")
    if op is None:
        return None
    k, mb = op
    return emit(
        s._replace(
            status=s.status.except_(mb, CLOSED),
            closed=s.closed.except_(mb, True),
            supervisor=s.supervisor.except_(t, (S_CLEANUP, k, mb)),
        ),
        mailbox=mb,
    )


@AkkaMailbox.action(Supervisors, event="dead_letter", at=S_CLEANUP)
def CleanUp(c: Constants, s: Vars, t: str) -> object:
    """cleanUp, under the consumer lock: what is queued goes to the dead letters."""
    pc, k, mb = s.supervisor[t]
    if pc != S_CLEANUP or mb is None or not s.queue[mb]:
        return None
    cleaned, items = CleanedUp(s, mb)
    return emit(
        cleaned._replace(supervisor=s.supervisor.except_(t, (IDLE, k + 1, None))), mailbox=mb, items=items
    )


@AkkaMailbox.action(Supervisors, at=S_CLEANUP)
def CleanUpEmpty(c: Constants, s: Vars, t: str) -> object:
    """cleanUp finds the queue empty: nothing to dead-letter."""
    pc, k, mb = s.supervisor[t]
    if pc != S_CLEANUP or mb is None or s.queue[mb]:
        return None
    return s._replace(supervisor=s.supervisor.except_(t, (IDLE, k + 1, None)))


# ============================================================================ INVARIANTS
# The state predicates of spec.akka_mailbox_state, checked in every reachable state.

AkkaMailbox.invariant(NoLostWakeup)
AkkaMailbox.invariant(OneRunnerPerMailbox)
AkkaMailbox.invariant(ExecutorQueueOnce)
AkkaMailbox.invariant(ScheduledMeansOneReservation)
AkkaMailbox.invariant(Conservation)
AkkaMailbox.invariant(FifoOnce)
AkkaMailbox.invariant(ThroughputRespected)
AkkaMailbox.invariant(ClosedIsAbsorbing)


# ============================================================================ FAIRNESS & LIVENESS

# Every thread that can take a step eventually does: a worker is not starved by
# the OS, a sender finishes its dispatch, a supervisor finishes its operation.
AkkaMailbox.fairness(WF(Producers), WF(Workers), WF(Supervisors))


AkkaMailbox.property(
    EventuallyAlways(
        "EveryMessageSettles",
        AllSettled,
        "every sent message is eventually processed or dead-lettered (no message waits forever)",
    )
)

# ============================================================================ SYMMETRY & DONE


@AkkaMailbox.symmetry
def WorkersAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """No state refers to a worker by name, so worker local states can be sorted."""
    return s._replace(worker=s.worker.with_values(sorted(s.worker.values(), key=WorkerOrder)))


@AkkaMailbox.terminal
def Done(c: Constants, s: Vars) -> bool:
    """Every script has run out, every thread is idle and the executor queue is empty."""
    producers_done = all(pc == IDLE and c.send_of(p, k) is None for p, (pc, k, _) in s.producer.items())
    supervisors_done = all(pc == IDLE and c.op_of(t, k) is None for t, (pc, k, _) in s.supervisor.items())
    workers_idle = all(pc == IDLE for pc, _, _ in s.worker.values())
    return producers_done and supervisors_done and workers_idle and not s.executor


# How a person reads a state (counterexamples): spec.akka_mailbox_state.Show.
AkkaMailbox.describe(Show)


SPEC = AkkaMailbox.spec
