"""Seeded bugs in the event-pool spec: each must be caught, with a shortest counterexample.

These are the bugs Windows pools and their ports ship: ``PulseEvent`` where
``SetEvent`` belongs, the emptiness check and the idle mark split around the
list lock, an unlocked ``next`` index, manual-reset events nobody resets, an
``if`` where the wait needs a ``while``, a post that signals a busy thread, a
thread that waits again after its callback without looking at the list.
``expect`` and ``length`` are what the explorer must report; the tests assert
both, and that a depth bound of ``length - 1`` finds nothing.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import event_pool as ep
from spec.event_pool import CHECK, POST, RUN, SIGNAL, SPEC, WAIT, Client, Constants, Local, Threads, Vars
from spec.language import Action, emit, variant

# --- pulse-instead-of-set: the post wakes its thread with PulseEvent ------------------------


def PulseSignal(c: Constants, s: Vars, p: str) -> object:
    """BUG: PulseEvent on the picked thread's event: lost if the thread is not blocked yet."""
    t = s.client.target
    if s.client.pc != SIGNAL or t is None:
        return None
    return emit(ep.Release(ep.Signalled(s, t), t, pulse=True)._replace(client=Client(POST)), to=t)


PULSE_INSTEAD_OF_SET = variant(SPEC, "pulse-instead-of-set", replace_actions={"Signal": PulseSignal})

# --- unlocked-check-then-wait: the thread marks itself idle after the list lock --------------

MARK = "mark-idle"


def FindEmptyUnlocked(c: Constants, s: Vars, t: str) -> object:
    """BUG: the list is empty — the thread leaves the lock before it marks itself idle."""
    if ep.at(s, t, CHECK) is None or s.next < s.posted:
        return None
    return emit(ep.goto(s, t, Local(MARK)), item=None)


def MarkIdle(c: Constants, s: Vars, t: str) -> object:
    """BUG: ... then, without the lock, marks itself idle and goes to wait."""
    if ep.at(s, t, MARK) is None:
        return None
    return ep.goto(s, t, Local(WAIT), idle=s.idle.except_(t, True))


UNLOCKED_CHECK_THEN_WAIT = variant(
    SPEC,
    "unlocked-check-then-wait",
    replace_actions={"FindEmpty": FindEmptyUnlocked},
    add_actions=[Action("MarkIdle", MarkIdle, (Threads,), None)],
)

# --- unlocked-next-index: GetWorkFromPool reads next, then writes next + 1, without the lock -

TAKING = "taking"


def HandOut(s: Vars, t: str, i: int) -> object:
    """The buggy takes' end: thread t runs works[i] and next := i + 1, whatever i was."""
    s = ep.goto(s, t, Local(RUN, i), next=i + 1, handed=(*s.handed, i), idle=s.idle.except_(t, False))
    return emit(s, item=i)


def TakeRead(c: Constants, s: Vars, t: str) -> object:
    """BUG: i := next (next < posted), without the list lock."""
    if ep.at(s, t, CHECK) is None or s.next >= s.posted:
        return None
    return ep.goto(s, t, Local(TAKING, s.next))


def TakeWrite(c: Constants, s: Vars, t: str) -> object:
    """BUG: next := i + 1 and run works[i]: another thread may have read the same i."""
    me = ep.at(s, t, TAKING)
    if me is None or me.item is None:
        return None
    return HandOut(s, t, me.item)


UNLOCKED_NEXT_INDEX = split(SPEC, "unlocked-next-index", "Take", TakeRead, TakeWrite)

# --- manual-reset-never-reset: CreateEvent(bManualReset=TRUE) and no ResetEvent ---------------

MANUAL_RESET_NEVER_RESET = variant(SPEC, "manual-reset-never-reset")

# --- if-instead-of-while: after its wait returns the thread takes without looking again ------

BLIND = "take-blind"


def WakeIntoTake(c: Constants, s: Vars, t: str) -> object:
    """BUG: ``if (empty) wait(); take();`` — the wait returned (event or timeout), so take."""
    me = ep.at(s, t, ep.WOKEN)
    if me is None:
        return None
    return emit(ep.goto(s, t, Local(ep.EXITED if me.woke == 1 else BLIND)), result=ep.WokeBy(me))


def TakeBlind(c: Constants, s: Vars, t: str) -> object:
    """BUG: GetWorkFromPool trusts the wakeup: works[next], next + 1, whether or not next < posted."""
    if ep.at(s, t, BLIND) is None:
        return None
    i = s.next
    return HandOut(s, t, i)


IF_INSTEAD_OF_WHILE = variant(
    SPEC,
    "if-instead-of-while",
    replace_actions={"Wake": WakeIntoTake},
    add_actions=[Action("TakeBlind", TakeBlind, (Threads,), "take")],
)

# --- signal-busy-thread: the post picks any thread, busy or idle -----------------------------


def PostToAnyThread(c: Constants, s: Vars, p: str, t: str) -> object:
    """BUG: append the work and signal thread t, whether t is idle or in a callback."""
    if s.client.pc != POST or s.posted >= c.submits:
        return None
    s = s._replace(posted=s.posted + 1, idle=s.idle.except_(t, False), client=Client(SIGNAL, t))
    return emit(s, item=s.posted - 1, to=t)


SIGNAL_BUSY_THREAD = variant(SPEC, "signal-busy-thread", replace_actions={"Post": PostToAnyThread})

# --- wait-after-done: a finishing thread waits again without looking at the list --------------


def DoneThenWait(c: Constants, s: Vars, t: str) -> object:
    """BUG: the callback returns; the thread marks itself idle and waits, the list unread."""
    me = ep.at(s, t, ep.CALLBACK)
    if me is None or me.item is None:
        return None
    i, raised = me.item, me.item in c.raises
    fate = s.fate.except_(i, "raised" if raised else "returned")
    return emit(ep.goto(s, t, Local(WAIT), fate=fate, idle=s.idle.except_(t, True)), item=i, raised=raised)


WAIT_AFTER_DONE = variant(SPEC, "wait-after-done", replace_actions={"Done": DoneThenWait})


# --- wait-ignores-running: the wait for callbacks returns once the list is empty -------------


def CallbacksDoneEarly(c: Constants, s: Vars, p: str) -> object:
    """BUG: WaitForThreadpoolWorkCallbacks returns when nothing is listed, callbacks still running."""
    if s.client.pc != ep.WAITING or s.next < s.posted:
        return None
    return emit(s._replace(client=Client(ep.CLOSE)))


WAIT_IGNORES_RUNNING = variant(
    SPEC, "wait-ignores-running", replace_actions={"CallbacksDone": CallbacksDoneEarly}
)

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "pulse-instead-of-set",
        "a post wakes its thread with PulseEvent, which a thread not yet blocked misses",
        PULSE_INSTEAD_OF_SET,
        expect="NoLostWakeup",
        length=2,
    ),
    SpecMutant(
        "unlocked-check-then-wait",
        "the thread finds the list empty under the lock but marks itself idle after it",
        UNLOCKED_CHECK_THEN_WAIT,
        expect="NoLostWakeup",
        length=10,
        overrides={"threads": 1},
    ),
    SpecMutant(
        "unlocked-next-index",
        "GetWorkFromPool reads next and writes next + 1 without the list lock",
        UNLOCKED_NEXT_INDEX,
        expect="WorkIndexExact",
        length=10,
    ),
    SpecMutant(
        "manual-reset-never-reset",
        "the threads' events are manual-reset and nobody resets them: every wait returns at once",
        MANUAL_RESET_NEVER_RESET,
        expect="OneWakePerSignal",
        length=9,
        overrides={"manual_reset": True},
    ),
    SpecMutant(
        "if-instead-of-while",
        "a woken thread takes a work without looking whether the list still holds one",
        IF_INSTEAD_OF_WHILE,
        expect="WorkIndexExact",
        length=9,
    ),
    SpecMutant(
        "signal-busy-thread",
        "a post signals any thread, a busy one too, while idle threads sleep",
        SIGNAL_BUSY_THREAD,
        expect="IdleFirst",
        length=3,
    ),
    SpecMutant(
        "wait-after-done",
        "a thread whose callback returned waits again without looking at the list",
        WAIT_AFTER_DONE,
        expect="IdleFirst",
        length=10,
    ),
    SpecMutant(
        "wait-ignores-running",
        "the wait for callbacks returns once the list is empty, while callbacks still run",
        WAIT_IGNORES_RUNNING,
        expect="SettledWhenWaitReturns",
        length=10,
    ),
)
