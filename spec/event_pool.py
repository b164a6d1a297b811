"""MODULE EventPool — a thread pool built from Win32 event objects (seeds.md, design 003).

The seed's pool: a **work list** (an array of posted works and the index
``next`` of the next one to hand out) and a **thread list**; each pool thread
has its own auto-reset event and an ``idle`` flag, both in its thread-list
record. A thread waits on its event; posting a work appends it to the array
and, under the same list lock, picks an **idle** thread (any one: every choice
is explored), clears its flag, and — after the lock — ``SetEvent``s its event.
The woken thread takes works (``GetWorkFromPool``: under the list lock,
``works[next]`` and ``next + 1``) and runs them until the list is empty;
finding it empty, it sets its own ``idle`` flag *under the lock* and waits
again. So when every thread is busy a post signals nobody: the work waits in
the list and the first thread to finish its callback takes it before it waits
again (``NoLostWakeup``, ``WorkIsTaken``).

A pool thread waits with ``WaitForMultipleObjects({its event, stop}, any)``;
``stop`` is one manual-reset event that closing the pool sets. The wait may
have a timeout (``Constants.timeouts``): then a blocked wait may return
``WAIT_TIMEOUT`` at any moment — a nondeterministic step enabled only while the
thread is blocked. The pool never relies on it: ``NoLostWakeup`` ignores
timeouts. The Win32 rules (auto/manual reset, PulseEvent, any/all) live in
``spec.win32_events``.

The client uses the pool as the Windows thread-pool API: one work object
submitted ``submits`` times (one callback per submission), then
``WaitForThreadpoolWorkCallbacks(work, cancel)`` — with ``cancel``, the
submissions not yet started (still in the list) are cancelled and reported;
either way it returns when no callback runs — then the pool is closed (``stop``
set) and its threads exit. A callback that raises (``Constants.raises``) is
caught by the pool thread, which carries on: the submission counts as run.

Each action is one critical section of the list lock, one event call, or one
step of a callback.
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

# EXTENDS event_pool_state: its constants, variables and operators are this module's too.
from spec.event_pool_state import *  # noqa: F403
from spec.language import WF, EventuallyAlways, Function, LeadsTo, SpecBuilder, emit
from spec.symmetry import least_renaming
from spec.win32_events import WAIT_TIMEOUT, Event, satisfy

# ============================================================================ CONSTANTS


EventPool = SpecBuilder("event-pool", __doc__ or "")


@EventPool.assume
def Sizes(c: Constants) -> str | None:
    """At least one thread and one submission; raising submissions exist."""
    if c.threads < 1 or c.submits < 1:
        return "threads and submits must be at least 1"
    if any(not 0 <= i < c.submits for i in c.raises):
        return f"raises names submissions 0..{c.submits - 1} only, not {list(c.raises)}"
    return None


# ============================================================================ INIT


@EventPool.init
def Init(c: Constants) -> list[Vars]:
    """Every thread created idle, about to wait on its own unsignalled event."""
    ts, items = Threads(c), range(c.submits)
    return [
        Vars(
            posted=0,
            next=0,
            idle=Function.const(ts, True),
            events=Function.of(Handles(c), lambda h: Event(manual=h == STOP or c.manual_reset)),
            thread=Function.const(ts, Local(WAIT)),
            client=Client(POST),
            handed=(),
            runs=Function.const(items, 0),
            fate=Function.const(items, None),
            owed=Function.const(ts, 0),
            spurious=None,
        )
    ]


# ============================================================================ ACTIONS: pool threads


@EventPool.program_counter(Threads)
def ThreadPc(c: Constants, s: Vars, t: str) -> str:
    return s.thread[t].pc


@EventPool.action(Threads, event="wait", at=WAIT)
def WaitForWork(c: Constants, s: Vars, t: str) -> object:
    """WaitForMultipleObjects({event, stop}, any): returns at once if one is signalled, else blocks."""
    if at(s, t, WAIT) is None:
        return None
    outcome = satisfy(s.events, PoolWait(t))
    if outcome is None:
        return emit(goto(s, t, Local(BLOCKED)), blocked=True)
    events, index = outcome
    return emit(Woke(goto(s, t, Local(WOKEN, woke=index), events=events), t, index), blocked=False)


@EventPool.action(Threads, at=BLOCKED)
def TimeOut(c: Constants, s: Vars, t: str) -> object:
    """The wait's timeout expires (only with ``timeouts``; enabled only while blocked)."""
    if not c.timeouts or at(s, t, BLOCKED) is None:
        return None
    return goto(s, t, Local(WOKEN, woke=WAIT_TIMEOUT))


@EventPool.action(Threads, event="wake", at=WOKEN)
def Wake(c: Constants, s: Vars, t: str) -> object:
    """The wait returned: its event or a timeout — look at the list again (the ``while``); stop — exit."""
    me = at(s, t, WOKEN)
    if me is None:
        return None
    return emit(goto(s, t, Local(EXITED if me.woke == 1 else CHECK)), result=WokeBy(me))


@EventPool.action(Threads, event="take", at=CHECK)
def Take(c: Constants, s: Vars, t: str) -> object:
    """GetWorkFromPool under the list lock: works[next], next + 1; the thread is busy."""
    if at(s, t, CHECK) is None or s.next >= s.posted:
        return None
    i = s.next
    s = goto(s, t, Local(RUN, i), next=i + 1, handed=(*s.handed, i), idle=s.idle.except_(t, False))
    return emit(s, item=i)


@EventPool.action(Threads, event="take", at=CHECK)
def FindEmpty(c: Constants, s: Vars, t: str) -> object:
    """GetWorkFromPool finds the list empty: still under the lock, the thread marks itself idle."""
    if at(s, t, CHECK) is None or s.next < s.posted:
        return None
    return emit(goto(s, t, Local(WAIT), idle=s.idle.except_(t, True)), item=None)


@EventPool.action(Threads, event="run", at=RUN)
def Run(c: Constants, s: Vars, t: str) -> object:
    """The callback starts."""
    me = at(s, t, RUN)
    if me is None or me.item is None:
        return None
    i = me.item
    runs = s.runs.except_(i, s.runs[i] + 1) if i in s.runs.domain() else s.runs
    return emit(goto(s, t, me._replace(pc=CALLBACK), runs=runs), item=i)


@EventPool.action(Threads, event="done", at=CALLBACK)
def Done(c: Constants, s: Vars, t: str) -> object:
    """The callback returns or raises (caught: the thread carries on); look at the list again."""
    me = at(s, t, CALLBACK)
    if me is None or me.item is None:
        return None
    i, raised = me.item, me.item in c.raises
    fate = s.fate.except_(i, "raised" if raised else "returned") if i in s.fate.domain() else s.fate
    return emit(goto(s, t, Local(CHECK), fate=fate), item=i, raised=raised)


# ============================================================================ ACTIONS: the client


@EventPool.action(Clients, Threads, event="post")
def Post(c: Constants, s: Vars, p: str, t: str) -> object:
    """SubmitThreadpoolWork, under the list lock: append the work, pick idle thread t, clear its flag."""
    if s.client.pc != POST or s.posted >= c.submits or not s.idle[t]:
        return None
    s = s._replace(posted=s.posted + 1, idle=s.idle.except_(t, False), client=Client(SIGNAL, t))
    return emit(s, item=s.posted - 1, to=t)


@EventPool.action(Clients, event="post")
def PostAllBusy(c: Constants, s: Vars, p: str) -> object:
    """No thread is idle: append the work and signal nobody — a thread finishing its callback takes it."""
    if s.client.pc != POST or s.posted >= c.submits or any(s.idle.values()):
        return None
    return emit(s._replace(posted=s.posted + 1), item=s.posted, to=None)


@EventPool.action(Clients, event="signal")
def Signal(c: Constants, s: Vars, p: str) -> object:
    """After the lock: SetEvent on the picked thread's event."""
    t = s.client.target
    if s.client.pc != SIGNAL or t is None:
        return None
    return emit(Release(Signalled(s, t), t)._replace(client=Client(POST)), to=t)


@EventPool.action(Clients, event="cancel")
def WaitForCallbacks(c: Constants, s: Vars, p: str) -> object:
    """Every work submitted: wait for callbacks; with ``cancel``, the list's works are cancelled first."""
    if s.client.pc != POST or s.posted < c.submits:
        return None
    dropped = tuple(Listed(s)) if c.cancel else ()
    fate = s.fate
    for i in dropped:
        fate = fate.except_(i, "cancelled")
    s = s._replace(next=s.next + len(dropped), handed=s.handed + dropped, fate=fate, client=Client(WAITING))
    return emit(s, items=list(dropped))


@EventPool.action(Clients, event="waited")
def CallbacksDone(c: Constants, s: Vars, p: str) -> object:
    """WaitForThreadpoolWorkCallbacks returns: no callback runs, every submission is settled."""
    if s.client.pc != WAITING or not Settled(c, s):
        return None
    return emit(s._replace(client=Client(CLOSE)))


@EventPool.action(Clients, event="close")
def Close(c: Constants, s: Vars, p: str) -> object:
    """CloseThreadpool: SetEvent(stop), a manual-reset event, releases every pool thread."""
    if s.client.pc != CLOSE:
        return None
    return emit(Release(s, STOP)._replace(client=Client(JOIN)))


@EventPool.action(Clients, event="joined")
def Joined(c: Constants, s: Vars, p: str) -> object:
    """Every pool thread has exited."""
    if s.client.pc != JOIN or any(me.pc != EXITED for me in s.thread.values()):
        return None
    return emit(s._replace(client=Client(DONE)))


# ============================================================================ INVARIANTS


@EventPool.invariant(reads=("next", "posted", "handed"))
def WorkIndexExact(c: Constants, s: Vars) -> str | None:
    """The work index never skips, repeats, or passes the last posted work."""
    for k, i in enumerate(s.handed):
        if i != k:
            how = f"repeated index {i}" if i < k else f"skipped index {k}"
            return f"the works were handed out as {list(s.handed)}: GetWorkFromPool {how}"
    if s.next > s.posted:
        return f"next = {s.next} but only {s.posted} works were posted: a thread took a work never posted"
    return None


@EventPool.invariant(reads=("runs", "fate"))
def RunsAtMostOnce(c: Constants, s: Vars) -> str | None:
    """A submission's callback starts at most once, and never after it was cancelled."""
    for i, n in s.runs.items():
        if n > 1:
            return f"work {i} ran {n} times"
        if n and s.fate[i] == "cancelled":
            return f"work {i} ran and was reported cancelled"
    return None


@EventPool.invariant(reads=("client", "fate", "posted"))
def SettledWhenWaitReturns(c: Constants, s: Vars) -> str | None:
    """Once WaitForThreadpoolWorkCallbacks returned, every submission ran to its end or was cancelled."""
    if s.client.pc in (POST, SIGNAL, WAITING):
        return None
    open_ = [i for i in range(c.submits) if s.fate[i] is None]
    return f"the wait for callbacks returned with works {open_} neither run nor cancelled" if open_ else None


@EventPool.invariant
def NoLostWakeup(c: Constants, s: Vars) -> str | None:
    """Never work in the list while every thread waits on an unsignalled event and no signal is coming."""
    if s.next >= s.posted or s.events[STOP].signalled or any(Comes(s, t) for t in Threads(c)):
        return None
    return (
        f"works {list(Listed(s))} wait in the list while every pool thread waits on an unsignalled"
        " event and nobody will signal one (only a timeout could save it)"
    )


@EventPool.invariant(reads=("idle", "thread", "next", "posted"))
def IdleFirst(c: Constants, s: Vars) -> str | None:
    """While a thread is idle, no work waits for a busy thread: the list fits the threads coming for it."""
    if not any(s.idle.values()):
        return None
    coming = [t for t, me in s.thread.items() if not s.idle[t] and me.pc not in BUSY | {EXITED}]
    if s.posted - s.next > len(coming):
        idle = [t for t in Threads(c) if s.idle[t]]
        return f"works {list(Listed(s))} outnumber the threads coming for them {coming} while {idle} idle"
    return None


@EventPool.invariant(reads="spurious")
def OneWakePerSignal(c: Constants, s: Vars) -> str | None:
    """An auto-reset event's wait succeeds at most once per SetEvent: a thread never wakes for nothing."""
    if s.spurious is None:
        return None
    return f"{s.spurious} woke from its event more times than the event was set (a busy spin)"


# ============================================================================ FAIRNESS & LIVENESS

# Pool threads and the client are OS threads that keep running: weak fairness for each.
EventPool.fairness(WF(Threads), WF(Clients))


def WorkListed(c: Constants, s: Vars) -> bool:
    return s.next < s.posted


def ListEmpty(c: Constants, s: Vars) -> bool:
    return s.next >= s.posted


def ShutDown(c: Constants, s: Vars) -> bool:
    return s.client.pc == DONE


EventPool.property(
    LeadsTo("WorkIsTaken", WorkListed, ListEmpty, "no work stays in the list for ever (no lost wakeup)")
)
EventPool.property(
    EventuallyAlways(
        "ShutdownTerminates", ShutDown, "the client's wait returns, the pool closes, every thread exits"
    )
)

# ============================================================================ SYMMETRY & DONE


@EventPool.symmetry
def ThreadsAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """Threads differ only by name: the least renaming of threads (and their events) represents all."""
    return least_renaming(Threads(c), lambda to: Renamed(c, s, to))


@EventPool.terminal
def Finished(c: Constants, s: Vars) -> bool:
    """The client is through (wait, close, join) and every thread has exited."""
    return ShutDown(c, s)


# How a person reads a state (counterexamples): spec.event_pool_state.Show.
EventPool.describe(Show)


SPEC = EventPool.spec
