"""MODULE AkkaMailboxState — the constants, variables and state operators of ``spec.akka_mailbox``.

``spec.akka_mailbox`` EXTENDS this module with the initial state, the actions and
fairness, and checks the invariants defined here; everything here is a pure function
of the constants and one state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from spec.language import Function, Seq, variables
from spec.processes import Producers as Producers  # re-exported: spec/akka_mailbox.py
from spec.processes import Scripted
from spec.processes import Workers as Workers

# ============================================================================ CONSTANTS


OPEN, CLOSED, SCHEDULED, SUSPEND_UNIT = 0, 1, 2, 4


SHOULD_SCHEDULE_MASK = CLOSED | SCHEDULED  # setAsScheduled needs these bits clear


Item = str


Queued = tuple[int, Item]  # (position in the mailbox's send order, item)


Op = tuple[str, int]  # a supervisor operation: ("suspend" | "resume" | "close", mailbox)


@dataclass(frozen=True)
class Constants(Scripted[int]):
    mailboxes: int
    workers: int
    throughput: int  # Akka's dispatcher throughput; a run processes at most max(throughput, 1)
    # script[i] lists the mailboxes producer p<i> sends one message to, in order.
    script: tuple[tuple[int, ...], ...] = ()
    # supervise[i] lists the operations of supervisor s<i>, in order.
    supervise: tuple[tuple[Op, ...], ...] = ()

    HEADER: ClassVar[tuple[str, ...]] = ("mailboxes", "workers", "throughput")

    def header(self) -> dict[str, int]:
        """The trace header's ``config``: the sizes, and ``logs_append`` (this spec's ``Enqueue``
        logs ``append``, so a trace of its behaviours has one per accepted send)."""
        return {**super().header(), "logs_append": True}

    def supervisor_names(self) -> tuple[str, ...]:
        return tuple(f"s{i}" for i in range(len(self.supervise)))

    def send_of(self, producer: str, k: int) -> tuple[int, Item] | None:
        """The k-th send of ``producer``: (mailbox, item), or None when its script is done."""
        return self.post_of(producer, k)

    def op_of(self, supervisor: str, k: int) -> Op | None:
        ops = self.supervise[int(supervisor[1:])]
        return ops[k] if k < len(ops) else None

    def budget(self) -> int:
        """Messages one run may process: Pekko's ``processMailbox(left = max(throughput, 1))``."""
        return max(self.throughput, 1)


def Mailboxes(c: Constants) -> tuple[int, ...]:
    return tuple(range(c.mailboxes))


def Supervisors(c: Constants) -> tuple[str, ...]:
    return c.supervisor_names()


def Registrars(c: Constants) -> tuple[str, ...]:
    """Every thread that may call ``registerForExecution``: senders, runners, resumers."""
    return (*Producers(c), *Workers(c), *Supervisors(c))


# ============================================================================ VARIABLES


@variables
class Vars(NamedTuple):
    status: Function[int, int]  # the status word: Closed bit 1, Scheduled bit 2, suspend count * 4
    queue: Function[int, Seq[Queued]]  # the message queue (under its own lock)
    executor: tuple[int, ...]  # the executor's FIFO of mailboxes to run
    # Per process: the program counter and what it holds.
    producer: Function[str, tuple[str, int, int | None]]  # (pc, sends done, mailbox being registered)
    worker: Function[str, tuple[str, int | None, int]]  # (pc, mailbox, processed in this run)
    supervisor: Function[str, tuple[str, int, int | None]]  # (pc, ops done, mailbox)
    # History, per mailbox, kept as counters so that states stay small.
    sent: Function[int, int]
    processed: Function[int, int]
    last: Function[int, int]  # the send position of the last message processed
    dead: Function[int, int]  # dead-lettered (sent to a closed mailbox, or cleaned up)
    closed: Function[int, bool]  # becomeClosed has happened (a history variable)


IDLE = "idle"


# A send is Akka's lock-free enqueue, three atomic steps with no lock around them: a read of
# the word (Closed: a dead letter at once), the append to the queue, and one more read of the
# word that decides what the sender owes: nothing when it is Scheduled or suspended (whoever
# holds the reservation re-checks the queue after setAsIdle), setAsScheduled when it is Open,
# and a cleanUp of its own when it is Closed (the close came between the two reads, maybe after
# the supervisor's cleanUp: without this step the message would wait in a closed mailbox).
P_APPEND = "append"  # the word read not Closed: the append is owed
P_RECHECK = "reg-send-status"  # appended: the read that decides is owed ("reg-": about to register)
P_CLEANUP = "send-clean-up"  # read Closed after the append: the sender's own cleanUp is owed


# registerForExecution, shared by every registrar: status read -> queue read -> CAS -> execute
R_STATUS, R_QUEUE, R_CAS, R_EXECUTE = "reg-status", "reg-queue", "reg-cas", "owes-execute"


# Mailbox.run on a worker: isClosed? -> (shouldProcessMessage? -> dequeue)* -> setAsIdle -> register
W_CLOSED_CHECK, W_SHOULD, W_DEQUEUE, W_SET_IDLE = "closed?", "should-process?", "dequeue", "set-idle"


RUNNING = (W_CLOSED_CHECK, W_SHOULD, W_DEQUEUE, W_SET_IDLE)


# Supervisor: close -> cleanUp
S_CLEANUP = "clean-up"


# ============================================================================ helpers (TLA+ operators)


def IsClosed(word: int) -> bool:
    """Pekko's ``isClosed``: the word is exactly Closed (becomeClosed clears every other bit)."""
    return word == CLOSED


def IsSuspended(word: int) -> bool:
    return word >= SUSPEND_UNIT


def ShouldProcess(word: int) -> bool:
    """Pekko's ``shouldProcessMessage``: neither closed nor suspended (Scheduled is ignored)."""
    return (word & ~SCHEDULED) == 0


def Local(s: Vars, p: str) -> tuple[str, int | None]:
    """The program counter and mailbox of any process."""
    if p[0] == "p":
        pc, _, mb = s.producer[p]
        return pc, mb
    if p[0] == "w":
        wpc, wmb, _ = s.worker[p]
        return wpc, wmb
    spc, _, smb = s.supervisor[p]
    return spc, smb


def ProducerPc(c: Constants, s: Vars, p: str) -> str:
    return s.producer[p][0]


def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w][0]


def SupervisorPc(c: Constants, s: Vars, t: str) -> str:
    return s.supervisor[t][0]


def RegistrarPc(c: Constants, s: Vars, p: str) -> str:
    """Inside registerForExecution a thread's pc is its own program counter."""
    return Local(s, p)[0]


def At(s: Vars, p: str, pc: str) -> int | None:
    """The mailbox process ``p`` is about, when it is at ``pc``; else None."""
    here, mb = Local(s, p)
    return mb if here == pc else None


def SetLocal(s: Vars, p: str, pc: str, mb: int | None) -> Vars:
    """Move a process to ``pc`` about ``mb``; back to idle forgets the mailbox.

    A worker keeps the count of its run (0 from its setAsIdle on, through registerForExecution)."""
    if pc == IDLE:
        mb = None
    if p[0] == "p":
        _, k, _ = s.producer[p]
        return s._replace(producer=s.producer.except_(p, (pc, k, mb)))
    if p[0] == "w":
        return s._replace(worker=s.worker.except_(p, (pc, mb, s.worker[p][2])))
    _, k, _ = s.supervisor[p]
    return s._replace(supervisor=s.supervisor.except_(p, (pc, k, mb)))


def ReadWord(s: Vars, p: str, at: str, test: Callable[[int], bool], then: str) -> Vars | None:
    """One read of the status word by ``p`` at ``at``: when ``test(word)`` holds, ``p`` goes to ``then``."""
    here, mb = Local(s, p)
    if here != at or mb is None or not test(s.status[mb]):
        return None
    return SetLocal(s, p, then, mb)


def ReadQueue(s: Vars, p: str, at: str, messages: bool, then: str) -> Vars | None:
    """One look at the queue by ``p`` at ``at``: when it holds messages (or, ``messages=False``,
    none), ``p`` goes on to ``then``."""
    here, mb = Local(s, p)
    if here != at or mb is None or bool(s.queue[mb]) != messages:
        return None
    return SetLocal(s, p, then, mb)


def CleanedUp(s: Vars, mb: int) -> tuple[Vars, list[Item]]:
    """cleanUp under the consumer lock (pops until empty: one step): the queue goes to the dead
    letters. The next state and the messages it dead-lettered."""
    items = [item for _, item in s.queue[mb]]
    return s._replace(
        queue=s.queue.except_(mb, Seq()), dead=s.dead.except_(mb, s.dead[mb] + len(items))
    ), items


def SendAt(c: Constants, s: Vars, p: str) -> tuple[int, int, Item] | None:
    """The send producer ``p`` makes next, when it is idle: (sends done, mailbox, message), or None."""
    pc, k, _ = s.producer[p]
    send = c.send_of(p, k)
    if pc != IDLE or send is None:
        return None
    return k, send[0], send[1]


def OpAt(c: Constants, s: Vars, t: str, kind: str) -> tuple[int, int] | None:
    """Supervisor ``t``'s next operation, when it is idle and that is a ``kind``: (ops done, mailbox)."""
    pc, k, _ = s.supervisor[t]
    op = c.op_of(t, k)
    if pc != IDLE or op is None or op[0] != kind:
        return None
    return k, op[1]


def HasHint(p: str) -> bool:
    """``dispatch`` registers with hasMessageHint = true; a run's end and resume with false."""
    return p[0] == "p"


def Registering(pc: str) -> bool:
    """Inside registerForExecution, before its CAS has succeeded (every such pc starts with ``reg-``)."""
    return pc.startswith("reg-")


def Runners(s: Vars, mb: int) -> list[str]:
    """The workers inside ``run`` of ``mb``: from run_begin until their setAsIdle."""
    return [
        w
        for w, (pc, at, _) in s.worker.items()
        if at == mb and not (pc in (IDLE, R_EXECUTE) or Registering(pc))
    ]


def Reservations(s: Vars, mb: int) -> int:
    """How many times the mailbox is reserved: owed to, queued in, or run by the executor."""
    owed = sum(1 for p in s.producer.domain() if Local(s, p) == (R_EXECUTE, mb))
    owed += sum(1 for w in s.worker.domain() if Local(s, w) == (R_EXECUTE, mb))
    owed += sum(1 for t in s.supervisor.domain() if Local(s, t) == (R_EXECUTE, mb))
    return owed + s.executor.count(mb) + len(Runners(s, mb))


def AboutToRegister(s: Vars, mb: int) -> list[str]:
    """The threads inside registerForExecution for ``mb``, before its CAS."""
    procs = (*s.producer.domain(), *s.worker.domain(), *s.supervisor.domain())
    return [p for p in procs if Local(s, p)[1] == mb and Registering(Local(s, p)[0])]


def ShowWord(word: int) -> str:
    if word == CLOSED:
        return "Closed"
    parts = ["Scheduled" if word & SCHEDULED else "Open"]
    if word & CLOSED:
        parts.append("Closed")  # never in the design: a broken word shows as such
    if IsSuspended(word):
        parts.append(f"Suspended({word // SUSPEND_UNIT})")
    return "+".join(parts)


# ===================================================== INVARIANTS (registered by spec.akka_mailbox)


def NoLostWakeup(c: Constants, s: Vars) -> str | None:
    """An open, unsuspended mailbox holding messages is Scheduled or about to be registered."""
    for mb in Mailboxes(c):
        if s.status[mb] == OPEN and s.queue[mb] and not AboutToRegister(s, mb):
            items = ", ".join(item for _, item in s.queue[mb])
            return f"mailbox {mb} holds {items}, is open and not Scheduled, and nobody will register it"
    return None


def OneRunnerPerMailbox(c: Constants, s: Vars) -> str | None:
    """The actor is single-threaded: at most one worker runs a mailbox at a time."""
    for mb in Mailboxes(c):
        runners = Runners(s, mb)
        if len(runners) > 1:
            return f"mailbox {mb} is run by {' and '.join(runners)} at once"
    return None


def ExecutorQueueOnce(c: Constants, s: Vars) -> str | None:
    """A mailbox waits in the executor queue at most once (one reservation)."""
    for mb in Mailboxes(c):
        if s.executor.count(mb) > 1:
            return f"mailbox {mb} is in the executor queue {s.executor.count(mb)} times: {list(s.executor)}"
    return None


def ScheduledMeansOneReservation(c: Constants, s: Vars) -> str | None:
    """Scheduled is set iff exactly one reservation exists (owed, queued or running); never two."""
    for mb in Mailboxes(c):
        held = Reservations(s, mb)
        if held > 1:
            return f"mailbox {mb} holds {held} reservations (status {ShowWord(s.status[mb])})"
        if s.status[mb] & CLOSED:
            continue  # becomeClosed clears Scheduled; a reservation made before it runs out harmlessly
        if bool(s.status[mb] & SCHEDULED) != (held == 1):
            return f"mailbox {mb} is {ShowWord(s.status[mb])} but holds {held} reservations"
    return None


def Conservation(c: Constants, s: Vars) -> str | None:
    """Sent = processed + queued + dead-lettered, per mailbox: nothing lost, nothing invented."""
    for mb in Mailboxes(c):
        accounted = s.processed[mb] + len(s.queue[mb]) + s.dead[mb]
        if s.sent[mb] != accounted:
            return f"mailbox {mb}: {s.sent[mb]} sent but {accounted} processed, queued or dead-lettered"
    return None


def FifoOnce(c: Constants, s: Vars) -> str | None:
    """A mailbox's messages are processed in send order, each once."""
    for mb in Mailboxes(c):
        positions = [position for position, _ in s.queue[mb]]
        if positions != sorted(positions) or (positions and positions[0] <= s.last[mb]):
            return f"mailbox {mb}: after message #{s.last[mb]} the queue holds #{positions}"
        if s.dead[mb] == 0 and s.processed[mb] != s.last[mb]:
            return f"mailbox {mb}: {s.processed[mb]} processed but the last one was message #{s.last[mb]}"
    return None


def ThroughputRespected(c: Constants, s: Vars) -> str | None:
    """A run processes at most max(throughput, 1) messages, so other mailboxes get a turn."""
    for w, (_, mb, n) in s.worker.items():
        if n > c.budget():
            return f"{w} processed {n} messages of mailbox {mb} in one run, throughput {c.throughput}"
    return None


def ClosedIsAbsorbing(c: Constants, s: Vars) -> str | None:
    """Once closed, the word is exactly Closed for good: never scheduled, suspended or reopened."""
    for mb in Mailboxes(c):
        word = s.status[mb]
        if (s.closed[mb] or word & CLOSED) and word != CLOSED:
            return f"mailbox {mb} was closed but its status word is {ShowWord(word)} ({word})"
    return None


def AllSettled(c: Constants, s: Vars) -> bool:
    """Every message sent is processed or dead-lettered (``EveryMessageSettles`` eventually always)."""
    return all(s.sent[mb] == s.processed[mb] + s.dead[mb] for mb in Mailboxes(c))


def WorkerOrder(w: tuple[str, int | None, int]) -> tuple[str, int, int]:
    """The order the workers' symmetry sorts their local states in (None before every mailbox)."""
    pc, mb, n = w
    return (pc, -1 if mb is None else mb, n)


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    # Over the state's own mailboxes, not Mailboxes(c): a trace's words show its mailbox numbers.
    return {
        "status": {mb: ShowWord(word) for mb, word in s.status.items()},
        "queue": {mb: [item for _, item in queue] for mb, queue in s.queue.items()},
        "executor": list(s.executor),
        "producer": {
            p: f"{pc}#{k}" + (f" mailbox {mb}" if mb is not None else "")
            for p, (pc, k, mb) in s.producer.items()
        },
        "worker": {
            w: pc if mb is None else f"{pc} mailbox {mb} n={n}" for w, (pc, mb, n) in s.worker.items()
        },
        "supervisor": {
            t: f"{pc}#{k}" + (f" mailbox {mb}" if mb is not None else "")
            for t, (pc, k, mb) in s.supervisor.items()
        },
        "processed": s.processed.as_dict(),
        "dead": s.dead.as_dict(),
    }
