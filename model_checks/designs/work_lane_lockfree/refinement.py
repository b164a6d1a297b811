"""Does the lock-free Work Lane show what the lock-based one shows? Its behaviours, projected to
v1 events, compared with the lock-based spec's on one configuration — exhaustively.

**The projection** (what a port that traced only v1 events would log, placed where it is
right to place them): a successful ``push`` is the v1 ``post`` (result ``ok``; it is where the
item becomes visible to a drainer), with ``submit`` true when that producer's CAS then won;
the drainer's ``Draining -> Idle`` CAS is the v1 ``drain_end``, with outcome ``resubmit`` when
its re-check then saw items and its CAS won, else ``idle``. The other per-atomic-step events
(the producers' and the re-check's CAS, ``recheck``, ``pop``, ``submit_refused``) are not v1
events and are dropped. Workers are renamed by first appearance in both specs.

**The comparison**: every complete behaviour of both specs is enumerated (``behaviours.py``;
nothing is sampled, so on the configuration it is exhaustive, and it says nothing about
larger ones). Two levels:

1. *What a user sees* — ``post`` (lane, item, result), ``invoke``, ``discard``, ``stop_*``:
   the two sets must be equal.
2. *Every v1 event* — each lock-free trace the lock-based spec does not allow is replayed on
   the lock-based spec to its first disallowed event, which must be one of the documented
   differences (``DIFFERENCES``); any other is returned as ``unexplained``, a counterexample.
   Only the first divergence of a trace is classified.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from model_checks.designs.work_lane_lockfree.behaviours import Event, Trace, accepts, behaviours, canonical
from spec import work_lane, work_lane_lockfree
from spec.language import Spec
from spec.work_lane_state import Constants

# The v1 events are the lock-based spec's: every event one of its actions logs.
V1 = frozenset(a.event for a in work_lane.SPEC.actions if a.event)
USER_VISIBLE = frozenset({"post", "invoke", "discard", "stop_begin", "stop_rejected", "stop_end"})
# The lock-free events the projection needs: v1 ones, plus the steps that decide a post's
# ``submit`` and a drain's outcome.
LOCK_FREE_KEPT = V1 | {"push", "cas", "recheck"}

DIFFERENCES: dict[str, str] = {
    "late-reservation": (
        "a post reserves a lane that was not Idle when the item was pushed: the producer's CAS won"
        " after the drainer let the lane go (the drainer may already have run the item: empty drain)"
    ),
    "reservation-by-later-push": (
        "a post to an Idle lane does not reserve it: a producer that pushed later won the CAS first"
        " and reserved the lane for both items"
    ),
    "early-release": (
        "a drain ends Idle while an item pushed before the release waits for its producer's CAS,"
        " which then takes the reservation"
    ),
    "resubmit-for-later-items": (
        "a drain ends with resubmit on a lane that was empty at the release: the re-check saw items"
        " pushed after it"
    ),
    "refused-submission": (
        "after Stop(discard) the stopped pool refuses a worker's owed resubmission; the lane's items"
        " stay queued and the reset reports them discarded"
    ),
    "empty-drain": "a drain runs nothing: its items were run by the drain before it",
}


def _fields(event: Event) -> dict[str, Hashable]:
    return dict(event[2])


def _next_own(trace: Trace, i: int, n: int = 1) -> list[Event]:
    thread = trace[i][0]
    return [e for e in trace[i + 1 :] if e[0] == thread][:n]


def to_v1(trace: Trace) -> Trace:
    """The projection above, of one complete lock-free behaviour."""
    out: list[Event] = []
    for i, (thread, name, fields) in enumerate(trace):
        f = dict(fields)
        if name == "push":
            (cas,) = _next_own(trace, i)
            assert cas[1] == "cas", f"{thread} pushed and did not CAS next: {cas}"
            won = _fields(cas)["ok"]
            post = {"lane": f["lane"], "item": f["item"], "result": "ok", "submit": won}
            out.append((thread, "post", tuple(sorted(post.items()))))
        elif name == "cas" and f["expect"] == work_lane.DRAINING:
            after = _next_own(trace, i, 2)
            resubmit = (
                len(after) == 2
                and after[0][1] == "recheck"
                and _fields(after[0])["empty"] is False
                and _fields(after[1])["ok"] is True
            )
            end = {"lane": f["lane"], "outcome": "resubmit" if resubmit else "idle", "invoked": f["invoked"]}
            out.append((thread, "drain_end", tuple(sorted(end.items()))))
        elif name in V1:
            out.append((thread, name, fields))
    return tuple(out)


def user_visible(trace: Trace) -> Trace:
    """What a user of the scheduler sees: posts with their results (not who submits), callbacks, Stop."""
    out = []
    for thread, name, fields in trace:
        if name not in USER_VISIBLE:
            continue
        if name == "post":
            fields = tuple((k, v) for k, v in fields if k != "submit")
        out.append((thread, name, fields))
    return tuple(out)


@dataclass
class V1View:
    """What the v1 events so far say about each lane: its status, its items, who owes a submission."""

    status: dict[int, str] = field(default_factory=dict)
    held: dict[int, list[Hashable]] = field(default_factory=dict)
    owes: set[str] = field(default_factory=set)
    mode: str | None = None

    def apply(self, event: Event) -> None:
        thread, name, _ = event
        f = _fields(event)
        lane = f.get("lane")
        if name == "post" and f["result"] == "ok":
            assert isinstance(lane, int)
            self.held.setdefault(lane, []).append(f["item"])
            if f["submit"]:
                self.status[lane] = work_lane.SCHEDULED
                self.owes.add(thread)
        elif name == "drain_begin":
            assert isinstance(lane, int)
            self.status[lane] = work_lane.DRAINING
        elif name == "drain_end":
            assert isinstance(lane, int)
            resubmit = f["outcome"] == "resubmit"
            self.status[lane] = work_lane.SCHEDULED if resubmit else work_lane.IDLE
            if resubmit:
                self.owes.add(thread)
        elif name == "submit":
            self.owes.discard(thread)
        elif name == "invoke":
            assert isinstance(lane, int)
            self.held[lane].remove(f["item"])
        elif name == "discard":
            assert isinstance(lane, int)
            items = f["items"]
            assert isinstance(items, tuple)
            for item in items:
                self.held[lane].remove(item)
        elif name == "stop_begin":
            self.mode = str(f["mode"])

    def classify(self, event: Event) -> str:
        """Which documented difference the first event the lock-based spec disallows is."""
        name = event[1]
        f = _fields(event)
        lane = f.get("lane")
        status = self.status.get(lane, work_lane.IDLE) if isinstance(lane, int) else None
        held = bool(self.held.get(lane)) if isinstance(lane, int) else False
        if name == "post" and f.get("result") == "ok":
            if f["submit"] and status != work_lane.IDLE:
                return "late-reservation"
            if not f["submit"] and status == work_lane.IDLE:
                return "reservation-by-later-push"
        if name == "drain_end" and f["invoked"] == 0:
            return "empty-drain"
        if name == "drain_end" and f["outcome"] == "idle" and held:
            return "early-release"
        if name == "drain_end" and f["outcome"] == "resubmit" and not held:
            return "resubmit-for-later-items"
        workers_owe = any(t.startswith("w") for t in self.owes)
        if name in ("discard", "stop_end") and self.mode == "discard" and workers_owe:
            return "refused-submission"
        return "unexplained"


def first_difference(constants: Constants, trace: Trace) -> tuple[str, int] | None:
    """None when the lock-based spec allows the v1 trace, else (the difference, the index of the
    first event it disallows)."""
    at = accepts(work_lane.SPEC, constants, trace)
    if at is None:
        return None
    view = V1View()
    for event in trace[:at]:
        view.apply(event)
    if at == len(trace):
        return "unexplained", at
    return view.classify(trace[at]), at


def missing_kind(trace: Trace) -> str:
    """Why a lock-based v1 trace has no lock-free behaviour: the lock-based pool accepts a
    worker's submission after Stop(discard) has begun, which the stopped lock-free pool refuses."""
    stopping = False
    for thread, name, fields in trace:
        if name == "stop_begin" and dict(fields)["mode"] == "discard":
            stopping = True
        elif name == "submit" and stopping and thread.startswith("w"):
            return "submission-after-discard"
    return "unexplained"


@dataclass
class Comparison:
    constants: Constants
    lock_based: int  # distinct v1 traces of the lock-based spec
    lock_free: int  # distinct v1 projections of the lock-free spec's behaviours
    common: int
    missing: Counter[str]  # lock-based traces no lock-free behaviour projects to, by ``missing_kind``
    user_visible_lock_based: int
    user_visible_lock_free: int
    user_visible_equal: bool
    differences: Counter[str]  # first divergence of each extra lock-free trace, by kind
    examples: dict[str, Trace]  # a shortest extra trace of each kind
    seconds: float

    @property
    def explained(self) -> bool:
        unexplained = "unexplained" in self.differences or "unexplained" in self.missing
        return self.user_visible_equal and not unexplained

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.differences.items())) or "none"
        return (
            f"lock-based {self.lock_based:,} v1 traces, lock-free {self.lock_free:,} ({self.common:,} common,"
            f" {sum(self.missing.values()):,} lock-based only: {dict(self.missing)});"
            f" user-visible {self.user_visible_lock_based:,} vs"
            f" {self.user_visible_lock_free:,} ({'equal' if self.user_visible_equal else 'DIFFERENT'});"
            f" extra lock-free traces by first difference: {kinds}"
        )


def compare(
    constants: Constants, time_limit: float | None = 600.0, lock_free: Spec | None = None
) -> Comparison:
    """Enumerate both specs on ``constants`` and compare (see the module doc); exhaustive or an error.

    ``lock_free``: a variant of the lock-free spec to compare instead (a mutant must fail)."""
    started = time.perf_counter()
    locked = {canonical(t) for t in behaviours(work_lane.SPEC, constants, V1, time_limit=time_limit)}
    raw = behaviours(lock_free or work_lane_lockfree.SPEC, constants, LOCK_FREE_KEPT, time_limit=time_limit)
    free = {canonical(to_v1(t)) for t in raw}
    extra = sorted(free - locked, key=lambda t: (len(t), t))
    differences: Counter[str] = Counter()
    examples: dict[str, Trace] = {}
    for trace in extra:
        found = first_difference(constants, trace)
        assert found is not None, "a trace outside the enumerated set was accepted: the enumeration is wrong"
        kind = found[0]
        differences[kind] += 1
        examples.setdefault(kind, trace)
    user_locked = _set(user_visible(t) for t in locked)
    user_free = _set(user_visible(t) for t in free)
    return Comparison(
        constants=constants,
        lock_based=len(locked),
        lock_free=len(free),
        common=len(locked & free),
        missing=Counter(missing_kind(t) for t in locked - free),
        user_visible_lock_based=len(user_locked),
        user_visible_lock_free=len(user_free),
        user_visible_equal=user_locked == user_free,
        differences=differences,
        examples=examples,
        seconds=time.perf_counter() - started,
    )


def _set(traces: Iterable[Trace]) -> set[Trace]:
    return set(traces)
