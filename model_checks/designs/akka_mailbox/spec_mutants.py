"""Seeded bugs in the Akka/Pekko mailbox spec: each must be caught, with a shortest counterexample.

Each mutant is the design with one step dropped, split or loosened, the way a
port of ``Mailbox.scala`` could get it wrong. The expected property and
counterexample length are what ``lanecheck check akka-mailbox --variant NAME``
must report; the tests assert both, and that one step less finds nothing.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import akka_mailbox as am
from spec.akka_mailbox import (
    CLOSED,
    IDLE,
    R_CAS,
    R_EXECUTE,
    R_STATUS,
    SCHEDULED,
    SPEC,
    W_DEQUEUE,
    W_SET_IDLE,
    W_SHOULD,
    At,
    Constants,
    ReadWord,
    SetLocal,
    Vars,
)
from spec.language import Append, Head, Tail, emit, variant

# --- no-recheck: the run ends with setAsIdle and never registers again ----------------------


def SetAsIdleNoRecheck(c: Constants, s: Vars, w: str) -> object:
    """BUG: setAsIdle clears Scheduled and the worker leaves, without registerForExecution."""
    pc, mb, n = s.worker[w]
    if pc != W_SET_IDLE or mb is None:
        return None
    return emit(
        s._replace(
            status=s.status.except_(mb, s.status[mb] & ~SCHEDULED),
            worker=s.worker.except_(w, (IDLE, None, 0)),
        ),
        mailbox=mb,
        processed=n,
    )


NO_RECHECK = variant(SPEC, "no-recheck", replace_actions={"SetAsIdle": SetAsIdleNoRecheck})

# --- check-then-set: setAsScheduled as a load, a test and a plain store ----------------------

R_STORE = "reg-store"


def ScheduleCheck(c: Constants, s: Vars, p: str) -> object:
    """BUG: setAsScheduled loads the word and sees it open and unscheduled ..."""
    return ReadWord(s, p, R_CAS, lambda word: not word & (CLOSED | SCHEDULED), R_STORE)


def ScheduleStore(c: Constants, s: Vars, p: str) -> object:
    """BUG: ... and later stores Scheduled without comparing: two threads can both get here."""
    mb = At(s, p, R_STORE)
    if mb is None:
        return None
    return emit(
        SetLocal(s._replace(status=s.status.except_(mb, s.status[mb] | SCHEDULED)), p, R_EXECUTE, mb),
        mailbox=mb,
    )


CHECK_THEN_SET = split(SPEC, "check-then-set", "SetAsScheduled", ScheduleCheck, ScheduleStore)

# --- schedule-while-closed: setAsScheduled tests only the Scheduled bit -----------------------


def SetAsScheduledIgnoringClosed(c: Constants, s: Vars, p: str) -> object:
    """BUG: setAsScheduled masks with Scheduled only (2, not 3), so a closed word gets scheduled."""
    mb = At(s, p, R_CAS)
    if mb is None or s.status[mb] & SCHEDULED:
        return None
    word = s.status[mb]
    return emit(
        SetLocal(s._replace(status=s.status.except_(mb, word | SCHEDULED)), p, R_EXECUTE, mb), mailbox=mb
    )


def AlreadyScheduledIgnoringClosed(c: Constants, s: Vars, p: str) -> object:
    """The refusal that goes with it: only a set Scheduled bit refuses."""
    return ReadWord(s, p, R_CAS, lambda word: bool(word & SCHEDULED), IDLE)


SCHEDULE_WHILE_CLOSED = variant(
    SPEC,
    "schedule-while-closed",
    replace_actions={
        "SetAsScheduled": SetAsScheduledIgnoringClosed,
        "AlreadyScheduled": AlreadyScheduledIgnoringClosed,
    },
)

# --- past-throughput: the run loops until the queue is empty ------------------------------------


def ProcessPastThroughput(c: Constants, s: Vars, w: str) -> object:
    """BUG: the loop forgets ``left``: it processes while messages are there, ignoring throughput."""
    pc, mb, n = s.worker[w]
    if pc != W_DEQUEUE or mb is None or not s.queue[mb]:
        return None
    (position, item), rest = Head(s.queue[mb]), Tail(s.queue[mb])
    return emit(
        s._replace(
            queue=s.queue.except_(mb, rest),
            processed=s.processed.except_(mb, s.processed[mb] + 1),
            last=s.last.except_(mb, position),
            worker=s.worker.except_(w, (W_SHOULD, mb, n + 1)),
        ),
        mailbox=mb,
        item=item,
    )


PAST_THROUGHPUT = variant(SPEC, "past-throughput", replace_actions={"Process": ProcessPastThroughput})

# --- resume-without-register: resume lowers the count and leaves ---------------------------------


def ResumeNoRegister(c: Constants, s: Vars, t: str) -> object:
    """BUG: resume removes the suspend unit but does not registerForExecution."""
    return am.Resume(c, s, t, register=False)


RESUME_WITHOUT_REGISTER = variant(
    SPEC, "resume-without-register", replace_actions={"Resume": ResumeNoRegister}
)

# --- idle-store: setAsIdle as a load and a plain store ------------------------------------------

W_IDLE_STORE = "idle-store"


def SetAsIdleLoad(c: Constants, s: Vars, w: str) -> object:
    """BUG: setAsIdle loads the word (the worker remembers it in its program counter) ..."""
    pc, mb, n = s.worker[w]
    if pc != W_SET_IDLE or mb is None:
        return None
    return s._replace(worker=s.worker.except_(w, (f"{W_IDLE_STORE}:{s.status[mb]}", mb, n)))


def SetAsIdleStore(c: Constants, s: Vars, w: str) -> object:
    """BUG: ... and stores it back without Scheduled: a close or suspend in between is overwritten."""
    pc, mb, n = s.worker[w]
    if not pc.startswith(W_IDLE_STORE) or mb is None:
        return None
    seen = int(pc.split(":")[1])
    return emit(
        s._replace(
            status=s.status.except_(mb, seen & ~SCHEDULED), worker=s.worker.except_(w, (R_STATUS, mb, 0))
        ),
        mailbox=mb,
        processed=n,
    )


IDLE_STORE = split(SPEC, "idle-store", "SetAsIdle", SetAsIdleLoad, SetAsIdleStore)

# --- send-no-clean-up: a sender that reads Closed after its append walks away --------------------


def SendSeesClosedLeaves(c: Constants, s: Vars, p: str) -> object:
    """BUG: the word reads Closed after the append and the sender leaves, its message queued."""
    return ReadWord(s, p, am.P_RECHECK, am.IsClosed, IDLE)


SEND_NO_CLEAN_UP = variant(SPEC, "send-no-clean-up", replace_actions={"SendSeesClosed": SendSeesClosedLeaves})

# --- decide-before-append: the read that decides made before the append ---------------------------


def SendSeesOpenDecides(c: Constants, s: Vars, p: str) -> object:
    """BUG: the read before the append also decides (the sender remembers the word in its pc) ..."""
    send = am.SendAt(c, s, p)
    if send is None:
        return None
    k, mb, item = send
    word = s.status[mb]
    if am.IsClosed(word):
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (f"{am.P_APPEND}:{word}", k, mb))),
        mailbox=mb,
        item=item,
        result="ok",
    )


def EnqueueDecided(c: Constants, s: Vars, p: str) -> object:
    """BUG: ... and after the append acts on that old word: Scheduled then, so nothing owed."""
    pc, k, mb = s.producer[p]
    send = c.send_of(p, k)
    if not pc.startswith(f"{am.P_APPEND}:") or mb is None or send is None:
        return None
    word = int(pc.split(":")[1])
    position = s.sent[mb] + 1
    then = (R_CAS, k + 1, mb) if word == am.OPEN else (IDLE, k + 1, None)
    return emit(
        s._replace(
            queue=s.queue.except_(mb, Append(s.queue[mb], (position, send[1]))),
            sent=s.sent.except_(mb, position),
            producer=s.producer.except_(p, then),
        ),
        mailbox=mb,
        item=send[1],
    )


DECIDE_BEFORE_APPEND = variant(
    SPEC,
    "decide-before-append",
    replace_actions={"SendSeesOpen": SendSeesOpenDecides, "Enqueue": EnqueueDecided},
)

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "no-recheck",
        "the run ends with setAsIdle and does not registerForExecution again (the re-check dropped)",
        NO_RECHECK,
        expect="NoLostWakeup",
        length=13,
    ),
    SpecMutant(
        "check-then-set",
        "setAsScheduled as a load, a test and a plain store instead of one CAS",
        CHECK_THEN_SET,
        expect="ScheduledMeansOneReservation",
        length=11,
    ),
    SpecMutant(
        "schedule-while-closed",
        "setAsScheduled testing only the Scheduled bit, so a closed mailbox is scheduled",
        SCHEDULE_WHILE_CLOSED,
        expect="ClosedIsAbsorbing",
        length=17,
    ),
    SpecMutant(
        "past-throughput",
        "the processing loop ignoring the throughput budget",
        PAST_THROUGHPUT,
        expect="ThroughputRespected",
        length=13,
    ),
    SpecMutant(
        "resume-without-register",
        "resume lowering the suspend count without registering the mailbox",
        RESUME_WITHOUT_REGISTER,
        expect="NoLostWakeup",
        length=5,
    ),
    SpecMutant(
        "idle-store",
        "setAsIdle as a load and a plain store instead of a CAS loop",
        IDLE_STORE,
        expect="ClosedIsAbsorbing",
        length=24,
    ),
    SpecMutant(
        "send-no-clean-up",
        "a sender reading Closed after its append leaves its message queued (no cleanUp of its own)",
        SEND_NO_CLEAN_UP,
        expect="EveryMessageSettles",
        length=5,
        # One send to mailbox 1 racing its close: the shortest loss is the send's two steps
        # around the close and its cleanUp (the standard script adds nothing but length).
        overrides={"script": ((1,),), "supervise": ((("close", 1),),)},
    ),
    SpecMutant(
        "decide-before-append",
        "the sender reads the word before its append and acts on that read after it",
        DECIDE_BEFORE_APPEND,
        expect="NoLostWakeup",
        length=6,
    ),
)
