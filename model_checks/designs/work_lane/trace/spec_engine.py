"""The generic engine: the streaming search of the spec's own actions (``conformance.search``),
constrained by the trace, with the threads bound as ``binding`` says.

After each event the search holds the set of spec states some behaviour could be in. The steps
the trace does not log are deferred (``DEFERRED``): a producer's ``Admit``, a worker's ``Pop``,
``PopEmpty`` and ``GiveUpDrain``, a Stop call taking effect. Each is taken only when an event
needs it, so whether every producer has passed its stop-state check, or every drainer its next
pop, does not multiply the states held. It streams: producers join at their first post and their
scripts are learned as the posts come, so memory is the live state set, not the trace. It is the
reference the fast path is tested against. Lanes are named 0, 1, 2, ... in the order the trace
names them (``search_binding.UnitNames``): the states hold the lanes the trace named, whatever their
numbers, and words say the trace's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from operator import attrgetter
from typing import Any

from model_checks.conformance.lane_roles import Producers, add_stopper, role_pc, traced_lanes
from model_checks.conformance.search import FunctionPcs, NoMatch, TraceSearch
from model_checks.conformance.search_binding import UnitNames, add_process
from model_checks.conformance.search_words import least_queued
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import shown_states
from model_checks.designs import internal_at
from model_checks.designs.work_lane.trace.binding import (
    ANON,
    TraceConstants,
    WithinPool,
    drained_lane,
    plain,
)
from model_checks.designs.work_lane.trace.discards import not_held, take_out
from model_checks.designs.work_lane.trace.explain import explain
from model_checks.designs.work_lane.trace.parse import HEADER, Config, Event
from model_checks.designs.work_lane.trace.sim_state import in_a_drain, show_items, stop_phrase
from spec import work_lane as wl

# A lane the trace has not named yet: Idle and empty, nothing ever accepted, in every state.
UNNAMED_LANE = {"queue": (), "status": wl.IDLE, "accepted": 0, "invoked": 0, "discarded": 0}

# The program counters at which each internal action can be enabled: its ``at=`` in the spec.
ENABLED_AT = internal_at(wl.SPEC)

# Every internal action is deferred (``search.TraceSearch``): taken only when an event needs it.
# Each moves right past every action of another process but those named (checked on the spec's
# reachable states by ``conformance.movers``: tests/conformance/test_work_lane_deferred.py). A pop
# does not move past an accepted post to its lane (``drained_lane``: per lane): with the lane full,
# the post needs the room the pop made; an empty pop cannot follow a post that filled the lane.
# A give-up does not move past another worker's take: the binding holds the pool to ``workers``
# busy threads (``WithinPool``), and a thread beyond the first ``workers`` may take only once one
# of them has given its work item up (the movers check, on the spec's fixed workers, cannot see
# that: a review found the take refused, tests/conformance/test_discards.py).
DEFERRED: dict[str, frozenset[str]] = {
    "Admit": frozenset({"StopCall"}),
    "StopCall": frozenset({"PostRefused", "StopWhileStopping"}),
    "StopWhenStopped": frozenset(),
    "GiveUpDrain": frozenset({"DiscardLane", "StopEndDiscard", "Take"}),
    "Pop": frozenset({"PostAccepted"}),
    "PopEmpty": frozenset({"PostAccepted"}),
}
# The pcs each deferred action leaves its process at (checked like ``DEFERRED``). With the spec's
# ``at=`` on its logged actions the search sees, e.g., that a worker's pops cannot lead to its
# ``take``, so a take pulls in no other worker's pops.
MOVES_TO: dict[str, frozenset[Hashable]] = {
    "Admit": frozenset({wl.P_ADMITTED}),
    "StopCall": frozenset({wl.S_ACTIVE}),
    "StopWhenStopped": frozenset({"done"}),
    "GiveUpDrain": frozenset({wl.W_IDLE}),
    "Pop": frozenset({wl.W_DRAIN}),
    "PopEmpty": frozenset({wl.W_DECIDE}),
}
# Fields logged actions always emit with one value (checked like ``DEFERRED``): a post that
# returned ok is no PostRefused, so it pulls in no Stop call (which PostRefused would follow).
EMITS: dict[str, dict[str, Any]] = {"PostRefused": {"result": "invalid_state"}}


def pc_parts() -> list[tuple[Callable[[wl.Vars], Any], FunctionPcs]]:
    """Each state's pcs in three parts, read in compiled code (new readers for each search):
    producers and workers hold their pc first in their local tuple, a stopper's value is its pc.
    With them the units ``drained_lane`` gives: a drainer's lane (item 1 of its tuple), no unit
    for anyone else. The producers' part changes at every post (a script position), their pcs far
    less often."""
    return [
        (attrgetter("producer"), FunctionPcs(unit_at=(), by_pcs=True)),
        (attrgetter("worker"), FunctionPcs(unit=1, unit_at={wl.W_DRAIN})),
        (attrgetter("stopper"), FunctionPcs(index=None, unit_at=())),
    ]


# The producers: bound at their first post, their scripts learned post by post (``lane_roles``).
PRODUCERS = Producers(wl.P_IDLE, wl.P_ADMITTED, wl.CLOSING)


def _may_discard(s: wl.Vars, stop: str) -> bool:
    """Stop call ``stop`` may log a discard in ``s``: ``DiscardLane``'s guard but for the queue (a
    worker that took a work item gives it up first, a deferred step)."""
    return wl.StopAt(s, stop, "discard") and all(w[0] in (wl.W_IDLE, wl.W_TOOK) for w in s.worker.values())


class SpecEngine:
    name = "spec"

    def __init__(self, config: Config, *, deferred: Mapping[str, frozenset[str]] = DEFERRED) -> None:
        """``deferred``: the internal actions the search defers (``{}``: every one taken at once,
        the cross-check of tests/conformance/test_work_lane_deferred.py)."""
        # Lanes join as the trace names them: a lane never named stays Idle and empty in every
        # behaviour, so the header's count (up to 65,536) costs nothing.
        self.c = HEADER.constants(TraceConstants, config.as_dict(), callback_stop=True)
        self.units = UnitNames("lane", "lanes", UNNAMED_LANE)
        self.search = TraceSearch(
            wl.SPEC,
            self.c,
            wl.Init(self.c),
            local=role_pc,
            enabled_at=ENABLED_AT,
            pc_parts=pc_parts(),
            deferred=deferred,
            unit=drained_lane,
            unit_field="lane",
            moves_to=MOVES_TO,
            emits=EMITS,
        )
        # Every behaviour of the spec satisfies its invariants, but two bound a step the trace
        # shows: the ready queue's capacity (a header may give ready_capacity < lanes) and the
        # pool's size (threads beyond it may take, but no more than ``workers`` at once).
        self.search.invariants = [wl.ReadyQueueBounded, WithinPool]
        self.stop_of: dict[str, str] = {}  # thread -> the anonymous Stop call its stop_begin owns
        self.draining: set[str] = set()  # threads between their drain_begin and drain_end
        self.owner: dict[str, str] = {}  # that Stop call -> "<thread>@<seq>", its name in words
        # lane (the spec's number) -> the items its DiscardLane dropped that no discard has listed yet
        self.unlisted: dict[int, list[Any]] = {}

    @property
    def states(self) -> set[wl.Vars]:
        """The states some behaviour could be in, in the trace's words (``_shown``)."""
        return {self._shown(s) for s in self.search.states}

    def _shown(self, s: wl.Vars) -> wl.Vars:
        """``s`` in the trace's words: its processes as ``binding.plain`` names them, its lanes by
        the trace's numbers."""
        shown: wl.Vars = traced_lanes(plain(s, self.owner), self.units)
        return shown

    # -- binding ---------------------------------------------------------------------------------

    def _processes(self, ev: Event) -> list[str]:
        """The processes that may take the event (binding a thread's role the first time it shows)."""
        kind, thread = ev["event"], ev["thread"]
        c = self.c
        p, w = f"p:{thread}", f"w:{thread}"
        if kind == "post":
            if p not in c.posts:
                PRODUCERS.add(self.search, c, p, ev["lane"])
            return [p]
        if kind == "take" and w not in c.bound_workers:
            c.bound_workers.append(w)
            add_process(self.search, c, "worker", w, (wl.W_IDLE, None, 0, None))
        if kind == "submit":
            return [q for q in (p, w) if q in c.posts or q in c.bound_workers]
        if kind == "stop_rejected" and ev["reason"] == "stop_in_progress":
            name = f"s:{thread}@{ev['seq']}"
            add_stopper(self.search, c, name, ev["mode"], wl.S_IDLE)
            return [name]
        if kind == "stop_begin":
            return [ANON[ev["mode"]]]
        if kind in ("discard", "stop_end"):
            return [self.stop_of[thread]] if thread in self.stop_of else []
        return [w] if w in c.bound_workers else []

    # -- one event -------------------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        # A thread's own events say whether it is inside one of its drains: a Stop it begins there
        # would wait for itself (the spec's stoppers are other processes; the fast engine agrees)
        if kind == "drain_begin":
            self.draining.add(thread)
        elif kind == "drain_end":
            self.draining.discard(thread)
        elif kind == "stop_begin" and thread in self.draining:
            raise Rejected(7, in_a_drain(ev))
        self.c, named = self.units.spec_event(self.search, self.c, ev)
        procs = self._processes(ev)
        if kind == "post":
            PRODUCERS.announce(self.search, self.c, procs[0], named)
        if kind == "stop_end" and self.unlisted and procs:
            lane = self.units.in_trace_order(self.unlisted)[0]
            raise Rejected(
                7,
                f"stop_end {ev['mode']} while lane {self.units.traced(lane)} still holds"
                f" {show_items(self.unlisted[lane])}: every accepted item must have been run or"
                " discarded first",
            )
        if kind == "discard":
            self._discard(ev, named, procs)
        else:
            self._step(ev, named, procs)
        if kind == "stop_begin":
            self.stop_of[thread] = procs[0]
            self.owner[procs[0]] = f"{thread}@{ev['seq']}"
        elif kind == "stop_end":
            self.owner.pop(self.stop_of.pop(thread, ""), None)
        if kind in ("post", "submit"):
            PRODUCERS.forget(self.search, self.c, thread)

    def _step(self, ev: Event, named: Event, procs: list[str]) -> None:
        """The search takes ``named`` (``ev`` in the spec's lane numbers); a refusal says ``ev``."""
        try:
            self.search.step(named, procs)
        except NoMatch as none:
            shown = sorted({self._shown(s) for s in none.states}, key=repr)
            raise Rejected(*explain(ev, shown, self.c)) from None

    def _discard(self, ev: Event, named: Event, procs: list[str]) -> None:
        """Rule 7 lets a lane's items be listed over several discards, in any order (``discards``).

        The spec drops a lane's whole queue in one ``DiscardLane``: it is taken at the lane's
        first discard that lists anything, and the items it dropped that this discard does not
        list are kept here until a later discard lists them. Taking it early changes no other
        verdict: once Stop(discard) has dropped a queue with no drain in flight, no drain begins
        and no post is accepted, so no later event reads that lane's queue.
        """
        lane, items = named["lane"], ev["items"]
        stop = procs[0] if procs else None
        unlisted = self.unlisted.get(lane)
        if unlisted is not None and stop is not None:
            rest = take_out(unlisted, items)
            if rest is None:
                raise Rejected(7, not_held(ev["lane"], items, unlisted))
            self._still_unlisted(lane, rest)
            return
        may = [s for s in self.search.live if _may_discard(s, stop)] if stop is not None else []
        if not items:
            if not may:
                self._step(ev, named, procs)  # refused, in the words of the step the spec lacks
            return
        by_queue: dict[tuple[Any, ...], set[wl.Vars]] = {}
        for s in may:
            by_queue.setdefault(tuple(i for _, i in s.queue[lane]), set()).add(s)
        held = [q for q in by_queue if take_out(q, items) is not None]
        if not held:
            if not by_queue:
                self._step(ev, named, procs)  # no behaviour may discard here: refused in the spec's words
            raise Rejected(7, not_held(ev["lane"], items, list(min(by_queue, key=repr))))
        queue = min(held, key=repr)  # with no drain in flight every behaviour holds one queue
        self.search.states = by_queue[queue]
        self._step(ev, {**named, "items": list(queue)}, procs)
        self._still_unlisted(lane, take_out(queue, items) or [])

    def _still_unlisted(self, lane: int, rest: list[Any]) -> None:
        if rest:
            self.unlisted[lane] = rest
        else:
            self.unlisted.pop(lane, None)

    # -- words -----------------------------------------------------------------------------------

    def _held(self) -> set[wl.Vars]:
        """The states the search holds, in the trace's words: not closed under the deferred steps,
        a closure that doubles with each producer that may have been admitted for a next post it
        has not logged (6 x 2^N states after N producers, 12,288 after 12: the second review's F3).
        What a prefix leaves owed reads the same in both: a deferred pop moves an item from the
        lane to its worker's hand (both counted), an admission or a Stop call owes no item."""
        return {self._shown(s) for s in self.search.live}

    def describe(self) -> list[dict[str, Any]]:
        return shown_states(lambda s: wl.Show(self.c, s), self._held())

    def pending(self) -> dict[str, Any]:
        held = self._held()
        s = least_queued(held, lambda s: s.queue.values())
        traced = self.units.traced
        # ``s`` is in the trace's lane numbers; ``unlisted`` in the spec's.
        queued = {lane: [i for _, i in queue] for lane, queue in s.queue.items() if queue}
        for _, lane, _, hand in s.worker.values():  # popped for a post's room, not invoked yet
            if hand is not None and lane is not None:
                queued[lane] = [hand[1], *queued.get(lane, ())]
        queued.update({traced(lane): list(held) for lane, held in self.unlisted.items()})
        items = {str(lane): queued[lane] for lane in sorted(queued)}
        owed = {p: lane for p, (pc, _, lane) in s.producer.items() if pc == wl.P_OWES}
        owed.update({w: lane for w, (pc, lane, _, _) in s.worker.items() if pc == wl.W_OWES})
        out: dict[str, Any] = {"items": items, "submissions": dict(sorted(owed.items()))}
        for thread, stop in sorted(self.stop_of.items()):  # a stop_begin logged, its stop_end not
            out["stop"] = stop_phrase(self.c.mode_of(stop), thread)
        if "stop" not in out and all(st.phase in (wl.CLOSING, wl.STOPPING) for st in held):
            out["stop"] = stop_phrase(None, None)  # a Stop took effect (a refusal said so), unlogged
        return out
