"""Seeded bugs in the work-stealing spec: each must be caught, with a shortest counterexample.

These are the bugs real Chase-Lev ports ship: the last-element race without its
CAS, a steal that reads its slot after claiming it (crossbeam-deque's 2021
advisory), a resize that loses an element, a slot index masked with the wrong
capacity, the owner's missing store-load fence (only visible under TSO), a
park without the re-check (the pool's lost wakeup), a join that blocks instead
of helping. ``expect`` and ``length`` are what the explorer must report; the
tests assert both and that a depth bound of ``length - 1`` finds nothing.

``STEAL_FROM_SELF`` is not a mutant: a worker stealing from its own deque is
one thread, which cannot race itself (its loads see its own store buffer), so
the variant holds; the tests check that it does.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant, by_name
from spec import work_stealing as ws
from spec.language import Action, emit, variant
from spec.work_stealing import (
    BOTTOM,
    FIND,
    JOINING,
    RUN,
    SLOT,
    SPEC,
    STEAL_BOTTOM,
    STEAL_CAS,
    STEAL_READ,
    TOP,
    Constants,
    Local,
    PushingAt,
    StealingAt,
    Vars,
    Workers,
    at,
    goto,
)

# --- take-without-cas: the owner takes the last element with plain loads and stores ---------


def TakeLastWithoutCas(c: Constants, s: Vars, w: str) -> object:
    """BUG: t = b: one element left — the owner takes it without racing the thieves' CAS."""
    taking = ws.TakeLoadsTop(s, w)
    if taking is None or taking.t != taking.b:
        return None
    x = taking.mem.load(w, SLOT(c, w, taking.gen, taking.b))
    s = goto(s, w, Local(RUN, x, stack=taking.me.stack), mem=taking.mem)
    return emit(ws.Committed(s, w, x, "bottom"), task=x, result="success")


TAKE_WITHOUT_CAS = variant(
    SPEC,
    "take-without-cas",
    replace_actions={"TakeContended": Action("TakeLastWithoutCas", TakeLastWithoutCas, (Workers,), "take")},
)

# --- steal-reads-after-cas: the thief claims index t, then reads the slot --------------------


STOLE_INDEX = "stole-index"


def StealClaimFirst(c: Constants, s: Vars, w: str) -> object:
    """BUG: the thief goes to its CAS without reading the element first."""
    me = at(s, w, STEAL_READ)
    return None if me is None else goto(s, w, me._replace(pc=STEAL_CAS))


def StealClaim(c: Constants, s: Vars, w: str) -> object:
    """BUG: CAS(v.top, t, t + 1) claims index t before its element is read."""
    claim = ws.StealCas(s, w)
    if claim is None:
        return None
    (me, _, _), mem, won = claim
    return goto(s, w, me._replace(pc=STOLE_INDEX), mem=mem) if won else ws.StealAborts(s, w, claim)


def StealReadLate(c: Constants, s: Vars, w: str) -> object:
    """BUG: x := v.buffer[t] after the CAS: the owner may have reused the slot by now."""
    stealing = StealingAt(s, w, STOLE_INDEX)
    if stealing is None:
        return None
    me, v, t = stealing
    x = s.mem.load(w, SLOT(c, v, s.mem.load(w, ws.BUFFER(v)), t))
    s = goto(s, w, Local(RUN, x, stack=me.stack))
    return emit(ws.Committed(s, v, x, "top"), victim=v, task=x, result="success")


STEAL_READS_AFTER_CAS = variant(
    SPEC,
    "steal-reads-after-cas",
    replace_actions={
        "StealRead": StealClaimFirst,
        "Steal": Action("StealClaim", StealClaim, (Workers,), "steal"),
    },
    add_actions=[Action("StealReadLate", StealReadLate, (Workers,), "steal")],
)

# --- resize-drops-newest: the copy stops one element short -----------------------------------


def GrowShort(c: Constants, s: Vars, w: str) -> object:
    """BUG: the new array gets [t, b - 1): the newest element is not copied."""
    me = at(s, w, ws.GROW)
    if me is None:
        return None
    assert me.gen is not None and me.b is not None
    new = me.gen + 1
    if new >= c.generations():
        return None
    copied = ws.CopyInto(c, s, w, me._replace(b=me.b - 1), new)
    mem = s.mem.publish(copied).store(w, ws.BUFFER(w), new)
    return goto(s, w, me._replace(pc=ws.WRITE, gen=new), mem=mem)


RESIZE_DROPS = variant(SPEC, "resize-drops-newest", replace_actions={"Grow": GrowShort})

# --- stale-mask: the push masks the index with the first array's capacity --------------------


def PushWriteStaleMask(c: Constants, s: Vars, w: str) -> object:
    """BUG: a[b mod capacity] := x, the mask of the first array, not of the current one."""
    pushing = PushingAt(c, s, w, ws.WRITE)
    if pushing is None:
        return None
    me, kid, b, gen = pushing
    where = ("slot", w, gen, b % c.capacity)
    return goto(s, w, me._replace(pc=ws.PUBLISH), mem=s.mem.store(w, where, kid))


STALE_MASK = variant(SPEC, "stale-mask", replace_actions={"PushWrite": PushWriteStaleMask})

# --- missing-fence: take loads top with its bottom store still in the store buffer -----------


def TakeUnfenced(c: Constants, s: Vars, w: str) -> object:
    """BUG: t := top with no fence: the load may pass the bottom store still in the buffer; t < b."""
    return ws.Take(c, s, w, fenced=False)


def TakeEmptyUnfenced(c: Constants, s: Vars, w: str) -> object:
    """BUG: t := top with no fence; t > b: empty."""
    return ws.TakeEmpty(c, s, w, fenced=False)


def TakeContendedUnfenced(c: Constants, s: Vars, w: str) -> object:
    """BUG: t := top with no fence; t = b: race for the last element by CAS."""
    return ws.TakeContended(c, s, w, fenced=False)


MISSING_FENCE = variant(
    SPEC,
    "missing-fence",
    replace_actions={
        "Take": TakeUnfenced,
        "TakeEmpty": TakeEmptyUnfenced,
        "TakeContended": TakeContendedUnfenced,
    },
)

# --- park-without-recheck: register and sleep in one step -----------------------------------


def ParkWithoutRecheck(c: Constants, s: Vars, w: str) -> object:
    """BUG: nothing found a moment ago — register and sleep, without looking again."""
    me = at(s, w, ws.SLEEPY)
    if me is None:
        return None
    return emit(
        goto(s, w, me._replace(pc=ws.ASLEEP), mem=s.mem.fence(w), sleeping=s.sleeping.except_(w, True))
    )


PARK_WITHOUT_RECHECK = variant(
    SPEC,
    "park-without-recheck",
    replace_actions={"Register": Action("ParkWithoutRecheck", ParkWithoutRecheck, (Workers,), "park")},
)

# --- join-never-helps: a task waiting for its subtasks blocks its worker ---------------------


def _blocking(original: object) -> object:
    fn = original

    def action(c: Constants, s: Vars, w: str, *rest: object) -> object:
        me = at(s, w, ws.NOTIFY)
        result = fn(c, s, w, *rest)  # type: ignore[operator]
        if result is None or me is None or me.k + 1 < len(c.children(me.task)):
            return result
        # The last subtask is pushed: instead of helping, the worker waits for them all.
        after = result.state
        return emit(goto(after, w, me._replace(pc=JOINING, b=None, t=None, gen=None)), **result.fields)

    action.__name__ = getattr(original, "__name__", "action") + "ThenBlock"
    action.__doc__ = "BUG: after the last push, the worker blocks in join instead of helping."
    return action


def JoinBlocked(c: Constants, s: Vars, w: str) -> object:
    """BUG: the blocked worker resumes only when every subtask is done — by someone else."""
    me = at(s, w, JOINING)
    if me is None or me.task is None or not all(s.done[k] for k in c.children(me.task)):
        return None
    return emit(ws.Complete(c, goto(s, w, Local(FIND, stack=me.stack)), me.task), task=me.task)


JOIN_NEVER_HELPS = variant(
    SPEC,
    "join-never-helps",
    replace_actions={
        "NotifyAfterPush": _blocking(ws.NotifyAfterPush),  # type: ignore[dict-item]
        "NotifyNobody": _blocking(ws.NotifyNobody),  # type: ignore[dict-item]
    },
    add_actions=[Action("JoinBlocked", JoinBlocked, (Workers,), "join")],
)

# --- bottom-before-slot: the push publishes bottom, then writes the slot ---------------------


def PushPublishFirst(c: Constants, s: Vars, w: str) -> object:
    """BUG: bottom := b + 1 before a[b] := x: a thief can read the slot before it is written."""
    pushing = PushingAt(c, s, w, ws.WRITE)
    if pushing is None:
        return None
    me, kid, b, _ = pushing
    s = goto(
        s,
        w,
        me._replace(pc=ws.PUBLISH),
        mem=s.mem.store(w, BOTTOM(w), b + 1),
        deque=s.deque.except_(w, (*s.deque[w], kid)),
    )
    return emit(s, task=kid)


def PushWriteLast(c: Constants, s: Vars, w: str) -> object:
    """BUG: ... and only then a[b] := x."""
    pushing = PushingAt(c, s, w, ws.PUBLISH)
    if pushing is None:
        return None
    me, kid, b, gen = pushing
    mem = s.mem.store(w, SLOT(c, w, gen, b), kid)
    return goto(s, w, me._replace(pc=ws.NOTIFY, b=None, t=None, gen=None), mem=mem)


BOTTOM_BEFORE_SLOT = variant(
    SPEC,
    "bottom-before-slot",
    replace_actions={
        "PushWrite": Action("PushPublishFirst", PushPublishFirst, (Workers,), "push"),
        "Push": Action("PushWriteLast", PushWriteLast, (Workers,), None),
    },
)

# --- steal-without-cas: the thief claims index t with a plain store --------------------------


def StealByStore(c: Constants, s: Vars, w: str) -> object:
    """BUG: top := t + 1 with a plain store, as if no one else could move top meanwhile."""
    stealing = StealingAt(s, w, STEAL_CAS)
    if stealing is None:
        return None
    me, v, t = stealing
    s = goto(s, w, Local(RUN, me.task, stack=me.stack), mem=s.mem.store(w, TOP(v), t + 1))
    return emit(ws.Committed(s, v, me.task, "top"), victim=v, task=me.task, result="success")


STEAL_WITHOUT_CAS = variant(SPEC, "steal-without-cas", replace_actions={"Steal": StealByStore})

# --- steal-newest: a thief that steals at the bottom (the linearizability check's own bug) ----


def StealReadBottom(c: Constants, s: Vars, w: str) -> object:
    """BUG: the thief reads the slot of index b - 1 (the newest element) and claims it by top."""
    me = at(s, w, STEAL_READ)
    if me is None:
        return None
    v = me.victim
    assert v is not None
    b = s.mem.load(w, BOTTOM(v))
    x = s.mem.load(w, SLOT(c, v, s.mem.load(w, ws.BUFFER(v)), b - 1))
    return goto(s, w, me._replace(pc=STEAL_CAS, task=x))


STEAL_NEWEST = variant(SPEC, "steal-newest", replace_actions={"StealRead": StealReadBottom})

# --- not a bug here: stealing from one's own deque -------------------------------------------


def StealBeginAnyVictim(c: Constants, s: Vars, w: str, v: str) -> object:
    """steal(v): t := v.top — from any worker, itself included."""
    me = at(s, w, ws.STEAL)
    if me is None:
        return None
    return goto(s, w, me._replace(pc=STEAL_BOTTOM, victim=v, t=s.mem.load(w, TOP(v))))


STEAL_FROM_SELF = variant(SPEC, "steal-from-self", replace_actions={"StealBegin": StealBeginAnyVictim})

JOIN_DEADLOCK = {
    "join": True,
    "tasks": (("a", ("b",)), ("b", ()), ("d", ("e",)), ("e", ())),
    "roots": ("a", "d"),
}

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "take-without-cas",
        "the owner takes the last element without the CAS on top",
        TAKE_WITHOUT_CAS,
        expect="DequeLinearizable",
        length=26,
    ),
    SpecMutant(
        "steal-reads-after-cas",
        "a steal that reads its slot after the CAS that claims it",
        STEAL_READS_AFTER_CAS,
        expect="DequeLinearizable",
        length=20,
    ),
    SpecMutant(
        "resize-drops-newest",
        "a resize that copies [top, bottom - 1): the newest element is lost",
        RESIZE_DROPS,
        expect="DequeLinearizable",
        length=19,
    ),
    SpecMutant(
        "stale-mask",
        "a push that masks the index with the first array's capacity after a resize",
        STALE_MASK,
        expect="DequeLinearizable",
        length=16,
    ),
    SpecMutant(
        "missing-fence",
        "take without the fence between its bottom store and its top load (TSO only)",
        MISSING_FENCE,
        expect="DequeLinearizable",
        length=31,
    ),
    SpecMutant(
        "park-without-recheck",
        "a worker that registers and sleeps without re-checking the queues",
        PARK_WITHOUT_RECHECK,
        expect="NoLostWakeup",
        length=14,
    ),
    SpecMutant(
        "join-never-helps",
        "a join that blocks its worker instead of running other tasks",
        JOIN_NEVER_HELPS,
        expect="Deadlock",
        length=20,
        overrides=JOIN_DEADLOCK,
    ),
    SpecMutant(
        "bottom-before-slot",
        "a push that publishes bottom before it writes the slot",
        BOTTOM_BEFORE_SLOT,
        expect="DequeLinearizable",
        length=16,
    ),
    SpecMutant(
        "steal-without-cas",
        "a steal that claims its index with a plain store to top",
        STEAL_WITHOUT_CAS,
        expect="DequeLinearizable",
        length=27,
    ),
    SpecMutant(
        "steal-newest",
        "a thief that takes the newest element instead of the oldest",
        STEAL_NEWEST,
        expect="DequeLinearizable",
        length=21,
    ),
)
