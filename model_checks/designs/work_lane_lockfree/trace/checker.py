"""The streaming judge of one work-lane-lockfree trace: ``spec/work_lane_lockfree.py`` searched.

Binding (docs/trace-format.md, "Trace format v2"):

* a thread that logs ``post`` or ``push`` is a producer (process ``p:<thread>``); its script is
  learned post by post: before the trace shows its next post, ``post_of`` answers *some post to
  a valid lane* (``UNKNOWN_POST``), which is all the unlogged ``Admit`` reads, so a post may
  have been admitted any time after the thread's previous event (before a Stop call, too);
* a thread that logs ``take`` is a worker (``w:<thread>``); at most ``config.workers`` threads;
* ``cas`` and ``submit`` go to either role of the thread (a callback may post);
* a Stop call takes effect (``StopCall``) before anyone logs it, so two anonymous stoppers
  ``?drain`` and ``?discard`` may make it; the thread that logs ``stop_begin`` owns it, and its
  ``reset``/``discard``/``stop_end`` must come from that thread. Each ``stop_rejected
  stop_in_progress`` is a Stop call of its own.

Trace events are translated to the spec's labels first: ``push`` capacity_exceeded is the
spec's ``post`` of ``PushFull``; ``cas`` ``from``/``to`` are its ``expect``/``new`` (words
capitalised); ``reset`` is its ``discard``. Lanes are named 0, 1, 2, ... in the order the trace
names them (``search_binding.UnitNames``), so the states hold only the lanes it named; words say
the trace's numbers. Memory is the live state set plus, per producer,
the posts some live state has not yet made.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.item_ids import ITEM_EVENTS, ItemIds
from model_checks.conformance.lane_roles import Producers, add_stopper, role_pc, traced_lanes
from model_checks.conformance.search import Miss, NoMatch, TraceSearch
from model_checks.conformance.search_binding import UnitNames, add_process
from model_checks.conformance.search_words import least_queued, pending_phrases
from model_checks.conformance.streamed import Event
from model_checks.conformance.trace_processes import TraceProcesses
from model_checks.conformance.verdict import Malformed, Rejected
from model_checks.conformance.wording import cannot_stop, could_be, show_event, shown_states
from model_checks.designs import internal_at
from model_checks.designs.work_lane_lockfree.trace.header import HEADER
from model_checks.designs.work_lane_lockfree.trace.rules import HINT, RULE_OF_EVENT
from spec import work_lane_lockfree as wlf
from spec.language import Function

UNKNOWN_LANE = -1  # never a lane: only Admit reads a post before the trace shows it
UNKNOWN_POST: tuple[int | None, Any] = (UNKNOWN_LANE, None)
ANON = {"drain": "?drain", "discard": "?discard"}
WORD = {"idle": wlf.IDLE, "scheduled": wlf.SCHEDULED, "draining": wlf.DRAINING}
TRACE_WORD = {v: k for k, v in WORD.items()}
OPTIONAL = ("saw", "invoked", "submit")  # logged by a port when it knows them; checked when present
# A lane the trace has not named yet: Idle and empty, nothing ever accepted, in every state.
UNNAMED_LANE = {"queue": (), "status": wlf.IDLE, "accepted": 0, "invoked": 0, "discarded": 0}

# The program counters at which each internal action can be enabled: its ``at=`` in the spec.
ENABLED_AT = internal_at(wlf.SPEC)

# Every internal action is deferred (``search.TraceSearch``): taken only when an event needs it.
# Each moves right past every action of another process but those named (checked on the spec's
# reachable states by ``conformance.movers``: tests/conformance/test_deferred_steps.py). Without
# this, whether each producer has passed its unlogged Admit multiplies the live set (2^producers).
DEFERRED: dict[str, frozenset[str]] = {
    "Admit": frozenset({"StopCall"}),
    "StopCall": frozenset({"PostRefused", "StopWhileStopping"}),
    "GiveUpDrain": frozenset({"DiscardLane", "StopEndDiscard"}),
    "StopWhenStopped": frozenset(),
}
# The pcs each deferred action leaves its process at (checked like ``DEFERRED``). With the spec's
# ``at=`` on its logged actions the search sees that a worker's GiveUpDrain cannot come before
# its own drain_begin, so a drain_begin no longer pulls in every Stop call and, behind those,
# every producer's Admit.
MOVES_TO: dict[str, frozenset[Hashable]] = {
    "Admit": frozenset({wlf.P_ADMITTED}),
    "StopCall": frozenset({wlf.S_ACTIVE}),
    "GiveUpDrain": frozenset({wlf.W_IDLE}),
    "StopWhenStopped": frozenset({"done"}),
}
# Fields logged actions always emit with one value (checked like ``DEFERRED``): a post that
# returned ok is no PostRefused, so it pulls in no Stop call (which PostRefused would follow).
EMITS: dict[str, dict[str, Any]] = {"PostRefused": {"result": "invalid_state"}}


@dataclass(frozen=True, eq=False)
class LockFreeTraceConstants(TraceProcesses, wlf.Constants):
    """The spec's constants bound to one trace: processes and scripts grow as the trace shows them."""

    stoppers: list[str] = field(default_factory=lambda: list(ANON.values()))
    posts: dict[str, dict[int, tuple[int | None, Any]]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=lambda: {v: k for k, v in ANON.items()})
    # Set when the run is over (``finish(complete=True)``): a post not shown was never made.
    closed: list[bool] = field(default_factory=lambda: [False])

    def stopper_names(self) -> tuple[str, ...]:
        return tuple(self.stoppers)

    def post_of(self, producer: str, k: int) -> tuple[int | None, Any] | None:
        found = self.posts[producer].get(k)
        if found is None and not self.closed[0]:
            return UNKNOWN_POST
        return found

    def mode_of(self, stopper: str) -> str:
        return self.modes[stopper]


# The producers: bound at their first post, their scripts learned post by post (``lane_roles``).
PRODUCERS = Producers(wlf.P_IDLE, wlf.P_ADMITTED, wlf.CLOSING)


def pc_key(s: wlf.Vars) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Every process's ``role_pc`` at once (the search's ``pc_key``): producers, workers, stoppers."""
    return (
        tuple([v[0] for v in s.producer.values()]),
        tuple([v[0] for v in s.worker.values()]),
        s.stopper.values(),
    )


class LastPcKey:
    """``pc_key``, remembering its last answer by the identity of the three functions it reads:
    the search asks for the key of the same state several times in a row (its closure, then the
    next event's look at the states held), and a successor shares most functions with its parent."""

    def __init__(self) -> None:
        self._last: tuple[
            object, object, object, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
        ] = (
            None,
            None,
            None,
            ((), (), ()),
        )

    def __call__(self, s: wlf.Vars) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        producer, worker, stopper = s.producer, s.worker, s.stopper
        last = self._last
        if producer is last[0] and worker is last[1] and stopper is last[2]:
            return last[3]
        key = pc_key(s)
        self._last = (producer, worker, stopper, key)
        return key


def spec_event(ev: Event) -> Event:
    """The event as the spec's action labels it (see the module docstring)."""
    kind = ev["event"]
    if kind == "push" and ev["result"] == "capacity_exceeded":
        return {**ev, "event": "post"}
    if kind == "cas":
        out = {**ev, "expect": WORD[ev["from"]], "new": WORD[ev["to"]]}
        if "saw" in ev:
            out["saw"] = WORD[ev["saw"]]
        return out
    if kind == "reset":
        return {**ev, "event": "discard"}
    return ev


class LockFreeChecker:
    """The streaming judge of one work-lane-lockfree trace (a ``streamed.Checker``)."""

    def __init__(self, config: dict[str, Any], *, deferred: Mapping[str, frozenset[str]] = DEFERRED) -> None:
        """``deferred``: the internal actions the search defers (``{}``: every one taken at once,
        the cross-check of tests/conformance/test_deferred_steps.py)."""
        # Lanes join as the trace names them: a lane never named stays Idle and empty in every
        # behaviour, so the header's count (up to 65,536) costs nothing.
        self.c = HEADER.constants(LockFreeTraceConstants, config, callback_stop=True)
        self.lanes = int(config["lanes"])
        self.ids = ItemIds()  # the item ids in flight (conformance.item_ids)
        self.units = UnitNames("lane", "lanes", UNNAMED_LANE)
        self.search = TraceSearch(
            wlf.SPEC,
            self.c,
            wlf.Init(self.c),
            optional=OPTIONAL,
            local=role_pc,
            enabled_at=ENABLED_AT,
            pc_key=LastPcKey(),
            deferred=deferred,
            moves_to=MOVES_TO,
            emits=EMITS,
        )
        # Every behaviour of the spec satisfies its invariants but one that bounds a step: the ready
        # queue's capacity (a header may give ready_capacity < lanes). Only that one constrains.
        self.search.invariants = [wlf.ReadyQueueBounded]
        self.complete = False
        self.stop_of: dict[str, str] = {}  # thread -> the stopper whose stop_begin it logged

    # -- binding ---------------------------------------------------------------------------------

    def _add_worker(self, ev: Event, name: str) -> None:
        c = self.c
        if len(c.bound_workers) >= c.workers:
            shown = ", ".join(n[2:] for n in c.bound_workers)
            raise Rejected(
                3,
                f"{ev['thread']} take of lane {ev['lane']}: a worker thread beyond config.workers = "
                f"{c.workers} (workers so far: {shown})",
            )
        c.bound_workers.append(name)
        add_process(self.search, c, "worker", name, (wlf.W_IDLE, None, 0, None))

    def _processes(self, ev: Event) -> list[str]:
        kind, thread = ev["event"], ev["thread"]
        c = self.c
        p, w = f"p:{thread}", f"w:{thread}"
        if kind in ("post", "push"):
            if p not in c.posts:
                PRODUCERS.add(self.search, c, p, ev["lane"])
            return [p]
        if kind == "take" and w not in c.bound_workers:
            self._add_worker(ev, w)
        if kind in ("cas", "submit"):
            return [q for q in (p, w) if q in c.posts or q in c.bound_workers]
        if kind == "stop_rejected" and ev["reason"] == "stop_in_progress":
            name = f"s:{thread}@{ev['seq']}"
            add_stopper(self.search, c, name, ev["mode"], wlf.S_IDLE)
            return [name]
        if kind == "stop_begin":
            return [ANON[ev["mode"]]]
        if kind in ("reset", "discard", "stop_end"):
            return [self.stop_of[thread]] if thread in self.stop_of else []
        return [w] if w in c.bound_workers else []

    # -- the Checker protocol -------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        kind = ev["event"]
        if kind == "post":
            self._check_post(ev)
        if kind in ITEM_EVENTS:
            self.ids.see(ev)  # rule 4: an item id is unique per trace (none accepted twice in flight)
        if kind == "stop_end" and ev["result"] == "failed":
            raise Rejected(
                7,
                f"stop_end {ev['mode']} reports that the scheduler failed (its own code raised): "
                "no behaviour of the spec fails",
            )
        self.c, named = self.units.spec_event(self.search, self.c, ev)
        procs = self._processes(ev)
        if kind in ("post", "push"):
            PRODUCERS.announce(self.search, self.c, procs[0], named)
        if kind == "reset" and not ev["items"]:
            self._empty_reset(ev, named["lane"], procs)
            return
        try:
            self.search.step(spec_event(named), procs)
        except NoMatch as none:
            raise Rejected(*self._why(ev, named, procs, none)) from None
        if kind == "stop_begin":
            self.stop_of[ev["thread"]] = procs[0]
        elif kind == "stop_end":
            self.stop_of.pop(ev["thread"], None)
            self.complete = True
        if kind in ("post", "push", "cas", "submit"):
            PRODUCERS.forget(self.search, self.c, ev["thread"])

    def _check_post(self, ev: Event) -> None:
        line = ev["seq"] + 1  # seq continuity is checked before a step: line N holds seq N - 1
        if "lane" not in ev:
            raise Malformed(line, f"line {line}: a post needs `lane` (null for an invalid handle)")
        lane = ev["lane"]
        if lane is not None and (type(lane) is not int or lane < 0):
            raise Malformed(line, f"line {line}: lane: {lane!r} is not a lane index or null")
        if lane is not None and lane >= self.lanes:
            raise Malformed(line, f"line {line}: lane: {lane} is not below config.lanes = {self.lanes}")
        if (lane is None) != (ev["result"] == "invalid_argument"):
            raise Malformed(
                line, f"line {line}: a post has `lane: null` exactly when its result is invalid_argument"
            )

    def _empty_reset(self, ev: Event, lane: int, procs: list[str]) -> None:
        """A reset that destroyed nothing: allowed where the Stop(discard) could reset that lane
        empty (``lane``: the spec's number of the event's)."""
        keep = {
            s
            for s in self.search.states
            for t in procs
            if wlf.StopAt(s, t, "discard") and wlf.WorkersIdle(s) and not s.queue[lane]
        }
        if not keep:
            raise Rejected(7, f"{show_event(ev)} — {HINT['reset']}{self._lane_words(lane)}")
        self.search.states = keep

    def finish(self, complete: bool) -> None:
        if not complete or self.complete:
            return
        states = self.search.states  # before the run closes: a post not shown may be in flight
        self.c.closed[0] = True
        if not any(_done(self.c, s) for s in states):
            raise cannot_stop(7, self.pending()[1])

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        s = least_queued(self.search.states, lambda s: s.queue.values())
        s = traced_lanes(s, self.units)
        items = {str(lane): [i for _, i in q] for lane, q in s.queue.items() if q}
        owed: dict[str, str] = {}
        for p, (pc, _, lane) in s.producer.items():
            if pc == wlf.P_OWES:
                owed[p[2:]] = f"submit of lane {lane}"
            elif pc == wlf.P_PUSHED:
                owed[p[2:]] = f"cas of lane {lane}"
        for w, (pc, lane, _, _) in s.worker.items():
            if pc != wlf.W_IDLE:
                owed[w[2:]] = f"{pc} lane {lane}"
        phrases = pending_phrases("items accepted and not yet invoked", "lane", items, owed)
        # Only a Stop every behaviour has begun: some behaviours take an unlogged Stop call early.
        modes = {t.mode for t in self.search.states if t.phase in (wlf.CLOSING, wlf.STOPPING)}
        if len(modes) == 1 and all(t.phase in (wlf.CLOSING, wlf.STOPPING) for t in self.search.states):
            phrases.append(f"a Stop({modes.pop()}) in progress")
        return {"items": items, "threads": dict(sorted(owed.items()))}, phrases

    def describe(self) -> list[dict[str, Any]]:
        return shown_states(lambda s: wlf.Show(self.c, traced_lanes(s, self.units)), self.search.states)

    # -- words for a rejection -------------------------------------------------------------------

    def _why(self, ev: Event, named: Event, procs: list[str], none: NoMatch) -> tuple[int, str]:
        """Why no behaviour takes ``ev`` (``named``: the same event in the spec's lane numbers)."""
        kind, thread = ev["event"], ev["thread"]
        head = show_event(ev)
        # (a CAS Draining -> Idle is the drain's release, rule 3; the others, reservations, rule 2)
        rule = 3 if kind == "cas" and ev.get("from") == "draining" else RULE_OF_EVENT.get(kind, 2)
        owing = _owing(none.states, procs)
        if owing is not None and kind not in ("submit", "submit_refused"):
            lane = self.units.traced(owing)
            return 2, f"{head} — {thread} owes the submission of lane {lane} and must log it first"
        if kind == "stop_end":
            dropped = self._dropped(none.states, ev["mode"])
            if dropped:
                fate = "an invoke" if ev["mode"] == "drain" else "an invoke or a reset"
                return 7, (
                    f"{head} — the Stop drops accepted items: {dropped} never invoked; "
                    f"Stop({ev['mode']}) owes each {fate} before stop_end"
                )
        if kind == "push" and all(s.phase != wlf.RUNNING for s in none.states):
            return 7, (
                f"{head} — a push after Stop took effect: the post was admitted after admission "
                "closed (it must be refused invalid_state), or Stop began while it was in flight"
            )
        if not procs:
            role = {
                "cas": "push or take",
                "submit": "push or take",
                "reset": "stop_begin",
                "discard": "stop_begin",
                "stop_end": "stop_begin",
            }.get(kind, "take")
            return rule, f"{head} — {HINT.get(kind, '')}, and {thread} has logged no {role} before"
        # A push capacity_exceeded is the spec's ``post`` (``spec_event``): its refused post
        # (invalid_state) is no push the trace could log instead (the second review, F8).
        misses = [
            self.units.traced_miss(m)
            for m in none.misses
            if m.differing and not (kind == "push" and m.fields.get("result") == "invalid_state")
        ]
        if misses:
            return rule, f"{head} — {_differ(misses)}"
        unit = named.get("lane")
        words = self._lane_words(unit) if type(unit) is int else ""
        return rule, f"{head} — {HINT.get(kind, 'no behaviour takes this step')}{words}"

    def _lane_words(self, lane: int) -> str:
        """What lane ``lane`` (the spec's number) could hold, under its trace number."""
        seen = sorted(
            {
                f"{TRACE_WORD[s.status[lane]]} holding {[i for _, i in s.queue[lane]]}"
                for s in self.search.states
                if lane in s.queue.domain()
            }
        )
        return could_be(f"lane {self.units.traced(lane)}", seen, "; ")

    @staticmethod
    def _dropped(states: list[wlf.Vars], mode: str) -> str:
        """The accepted items still queued or in a worker's hand in every state where this Stop could end."""
        said = set()
        for s in states:
            if s.phase != wlf.STOPPING or s.mode != mode:
                continue
            left = [repr(i) for _, q in s.queue.items() for _, i in q]
            left += [repr(hand[1]) for _, _, _, hand in s.worker.values() if hand is not None]
            if not left:
                return ""
            said.add(", ".join(left))
        return " / ".join(sorted(said))


def _owing(states: list[wlf.Vars], procs: list[str]) -> int | None:
    """The lane whose submission the thread owes in every possible state, if it owes one in all."""
    lanes: set[int] = set()
    for s in states:
        owed = None
        for q in procs:
            if q in s.producer.domain() and s.producer[q][0] == wlf.P_OWES:
                owed = s.producer[q][2]
            if q in s.worker.domain() and s.worker[q][0] == wlf.W_OWES:
                owed = s.worker[q][1]
        if owed is None:
            return None
        lanes.add(owed)
    return min(lanes) if len(lanes) == 1 else None


_TRACE_NAME = {"expect": "from", "new": "to"}


def _differ(misses: list[Miss]) -> str:
    """The spec's own values for the fields that differ (in the trace's words)."""
    parts = set()
    for m in misses:
        for k in m.differing:
            v = m.fields[k]
            shown = TRACE_WORD.get(v, v) if isinstance(v, str) else v
            parts.add(f"{_TRACE_NAME.get(k, k)} = {shown!r}")
    return "the spec's step here logs " + "; or ".join(sorted(parts))


def _done(c: wlf.Constants, s: wlf.Vars) -> bool:
    """The spec's terminal predicate (``Done``)."""
    # The anonymous stoppers stand for Stop calls that may never be made.
    anon = set(ANON.values())
    stopper = Function(
        s.stopper.domain(), [v if k not in anon or v != wlf.S_IDLE else "done" for k, v in s.stopper.items()]
    )
    done = wlf.SPEC.terminal_fn
    return done is not None and bool(done(c, s._replace(stopper=stopper)))
