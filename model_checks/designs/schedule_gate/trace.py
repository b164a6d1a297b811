"""Trace conformance for the schedule-gate design: the streaming search over ``spec/schedule_gate.py``.

Binding (docs/schedule-gate.md, "Validating a trace"):

* a thread that logs ``permit_acquire`` or ``admit_begin`` is a producer
  (process ``p:<thread>``); its script is learned as it goes: the k-th post is
  announced by the first event of that post, and later events of the post must
  agree with it (the spec's actions read it back);
* a thread that logs ``take`` is a worker (``w:<thread>``); at most
  ``config.workers`` threads may;
* ``token_enqueue`` and ``permit_release`` may come from either role of the
  thread (a handler that posts runs on a worker thread);
* ``stop_end`` (the scheduler stopped: quiescent, every permit back) ends the
  run: some behaviour must be able to stop right there (``Done``).

Actors are named 0, 1, 2, ... in the order the trace names them (``search_binding.UnitNames``):
a state holds the actors the trace has named, whatever their numbers. Words say the trace's.

Memory is the live state set plus, per thread, the posts that some live state
has announced and not yet finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeVar

from model_checks.conformance.header_config import HeaderConfig
from model_checks.conformance.search import FunctionPcs, Miss, NoMatch, TraceSearch
from model_checks.conformance.search_binding import UnitNames, add_process, forget_read
from model_checks.conformance.search_words import least_queued, misses_logged, pending_phrases
from model_checks.conformance.streamed import Event, is_bool, is_count, is_item, one_of
from model_checks.conformance.trace_processes import TraceProcesses
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import (
    cannot_stop,
    could_be,
    show_event,
    shown_states,
)
from model_checks.designs.schedule_gate.trace_search import (
    DEFERRED,
    ENABLED_AT,
    P_IDLE_UNANNOUNCED,
    UNIT_FIELD,
    WORKER_ACTOR,
    announced_pc,
    drained_actor,
    local_pc,
)
from spec import schedule_gate as sg
from spec.language import Function

DESIGN = "schedule-gate"
HEADER = HeaderConfig(
    index="actor",
    units="actors",
    indexed=("workers",),
    sizes=("permits", "mailbox_capacity", "max_per_drain"),
)
CONFIG_KEYS = HEADER.keys
# An actor the trace has not named yet: Idle, with an empty mailbox, in every state.
UNNAMED_ACTOR = {"gate": sg.IDLE_GATE, "mailbox": (), "published": 0, "processed": 0}


@dataclass(frozen=True, eq=False)
class GateTraceConstants(TraceProcesses, sg.Constants):
    """The spec's constants bound to one trace: processes and scripts grow as the trace shows them."""

    posts: dict[str, dict[int, tuple[int, Any]]] = field(default_factory=dict)

    def post_of(self, producer: str, k: int) -> tuple[int, Any] | None:
        """The k-th post of ``producer`` if the trace has shown it; None: (so far) no more posts."""
        return self.posts[producer].get(k)


PRODUCER_EVENTS = frozenset({"permit_acquire", "admit_begin", "publish", "admit_end"})
MOVES_PRODUCER = PRODUCER_EVENTS | {"token_enqueue", "permit_release"}  # may settle a post
WORKER_EVENTS = frozenset({"take", "drain_begin", "process", "drain_end"})
STARTS_POST = frozenset({"permit_acquire", "admit_begin"})
RULE_OF_EVENT = {
    "permit_acquire": 1,
    "permit_release": 1,
    "admit_begin": 2,
    "admit_end": 2,
    "publish": 3,
    "token_enqueue": 4,
    "take": 4,
    "drain_begin": 5,
    "process": 5,
    "drain_end": 5,
}
HINT = {
    "permit_acquire": "a permit is taken only while one is free and the actor looks Idle, "
    "and refused only while none is free and the actor is Idle",
    "permit_release": "a permit goes back only from a thread told release_permit, or as a surplus "
    "after its CAS from Idle lost to another producer",
    "admit_begin": "admit_begin with a permit needs the thread's own permit_acquire and an Idle gate; "
    "a join (permit: false) needs a runnable actor",
    "publish": "a producer publishes only between its admit_begin and admit_end",
    "admit_end": "admit_end follows the producer's publish",
    "token_enqueue": "a token is enqueued only by the thread an enqueue_ready_token directive told to",
    "take": "a worker takes the oldest token of the ready queue, and only when it is not draining",
    "drain_begin": "drain_begin follows the same thread's take, on a Scheduled gate",
    "process": "events are processed inside a drain of that actor, in publish order, within max_per_drain",
    "drain_end": "drain_end ends a drain of this thread once the mailbox was found empty or the budget spent",
}


MEMO_LIMIT = 256  # entries of each of ``GateChecker``'s memos (then it starts over): memory stays flat

K = TypeVar("K")
V = TypeVar("V")


def _remember(memo: dict[K, V], key: K, value: V) -> None:
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value


PRODUCERS_PART = 0  # the producers' pcs are the search's first part (``pc_parts``)


class GateChecker:
    """The streaming judge of one schedule-gate trace (a ``streamed.Checker``)."""

    def __init__(self, config: dict[str, Any], *, deferred: dict[str, frozenset[str]] | None = None) -> None:
        """``deferred``: the internal actions the search defers (default ``DEFERRED``; ``{}``: every
        one taken at once, the cross-check of tests/gate/test_deferred_drains.py)."""
        # Actors join as the trace names them (``_grow``): an actor never named stays Idle with an
        # empty mailbox in every behaviour, so the header's count (up to 65,536) costs nothing.
        self.c = HEADER.constants(GateTraceConstants, config)
        self.units = UnitNames(UNIT_FIELD, "actors", UNNAMED_ACTOR)
        # A behaviour is Init and Next steps: invariants are what the explorer proves of them, not
        # constraints on them (unlike work-lane's ready queue), so the search does not check them.
        self.search = TraceSearch(
            sg.SPEC,
            self.c,
            sg.Init(self.c),
            check_invariants=False,
            local=self.local,
            enabled_at=ENABLED_AT,
            # The producers' pcs and the workers', each read off its own function (the search
            # remembers each part by its function): ``announced_pc``, whose idle producers' pcs
            # read which posts are announced (``_forget_pcs`` whenever the posts change); a
            # worker's unit (``drained_actor``) read with its pc.
            pc_parts=[
                (attrgetter("producer"), FunctionPcs(refined=[sg.P_IDLE], refine=self._idle_pc)),
                (attrgetter("worker"), FunctionPcs(unit=WORKER_ACTOR)),
            ],
            deferred=DEFERRED if deferred is None else deferred,
            unit=drained_actor,
            unit_field=UNIT_FIELD,
        )
        self.complete = False
        # Per producer, the actors whose gate was Idle at some moment since its last event
        # (``was_idle``): its load of the gate (``SeeIdle``) may have happened at any such moment,
        # before the trace shows which actor the post is for. Gate phases change only by logged
        # CASes, each about the event's actor, so that is an actor Idle in some state held right
        # after the producer's last event (kept as those states' gate functions, read only when
        # asked), or one that an event about it since then left Idle in some state held (the last
        # event that did, by number).
        self._events = 0  # events stepped
        self._last_seen: dict[str, tuple[int, tuple[Function[int, sg.Gate], ...] | None]] = {}
        self._idle_at: dict[int, int] = {}  # actor -> the last event about it that left it Idle
        self._names: dict[str, tuple[str, str]] = {}  # thread -> its producer's and worker's names
        # (event kind, thread) -> the processes it may be, once its thread's roles are bound
        # (``_processes``; forgotten whenever a process joins)
        self._procs: dict[tuple[str, str], list[str]] = {}

    # -- the search's view of program counters -----------------------------------------------------

    def local(self, s: sg.Vars, process: Any) -> str:
        """The search's ``local``: ``announced_pc`` under the constants bound now."""
        return announced_pc(self.c, s, process)

    def _idle_pc(self, p: str, local: tuple[str, int, bool]) -> str:
        """An idle producer's ``announced_pc``: whether the trace has shown its next post."""
        return sg.P_IDLE if local[1] in self.c.posts[p] else P_IDLE_UNANNOUNCED

    def _forget_pcs(self) -> None:
        """The posts changed: the producers' pcs computed so far may be stale."""
        self.search.forget_pcs(PRODUCERS_PART)

    def was_idle(self, p: str, actor: int) -> bool:
        """Whether ``actor``'s gate was Idle at some moment since producer ``p``'s last event."""
        seen, gates = self._last_seen[p]
        if self._idle_at.get(actor, -1) > seen:
            return True
        # None: no event of ``p`` yet, and every gate starts Idle (an actor named later has
        # joined Idle, at an event after ``p``'s: above).
        return gates is None or any(g[actor].phase == sg.IDLE for g in gates)

    def idle_since(self, p: str) -> set[int]:
        """The actors ``was_idle`` names for ``p`` (for tests and people)."""
        return {self.units.traced(a) for a in range(self.c.actors) if self.was_idle(p, a)}

    # -- binding ---------------------------------------------------------------------------------

    def _grow(self, ev: Event) -> Event:
        """``ev`` with its actor in the spec's numbers: an actor named for the first time joins every
        state, Idle with an empty mailbox (and was always Idle)."""
        actors = self.c.actors
        self.c, named = self.units.spec_event(self.search, self.c, ev)
        for a in range(actors, self.c.actors):
            self._idle_at[a] = self._events  # Idle now, after every producer's last event
        return named

    def _add(self, role: str, name: str) -> None:
        c = self.c
        self._procs.clear()
        if role == "p":
            c.producers.append(name)
            c.posts[name] = {}
            self._last_seen[name] = (self._events, None)  # every gate starts Idle
            add_process(self.search, c, "producer", name, (sg.P_IDLE, 0, False))
        else:
            c.bound_workers.append(name)
            add_process(self.search, c, "worker", name, (sg.W_IDLE, None, 0, False))

    def _processes(self, ev: Event, p: str, w: str) -> list[str]:
        kind, thread = ev["event"], ev["thread"]
        c = self.c
        if kind in STARTS_POST and p not in c.posts:
            self._add("p", p)
        if kind == "take" and w not in c.bound_workers:
            if len(c.bound_workers) >= c.workers:
                raise Rejected(
                    5,
                    f"{thread} take of actor {ev['actor']}: a worker thread beyond config.workers ="
                    f" {c.workers} (workers so far: {', '.join(n[2:] for n in c.bound_workers)})",
                )
            self._add("w", w)
        procs = []
        if kind not in WORKER_EVENTS and p in c.posts:
            procs.append(p)
        if kind not in PRODUCER_EVENTS and w in c.bound_workers:
            procs.append(w)
        return procs

    def _announce(self, ev: Event, p: str) -> None:
        """The first event of a post tells the producer's next script entry.

        For a ``permit_acquire`` the post's ``SeeIdle`` happened earlier, possibly when the
        gate was Idle but is not now: states where the producer is still idle are given that
        step now if the actor was Idle at some moment since the producer's last event.
        """
        posts = self.c.posts[p]
        actor = ev["actor"]
        # The live states, not their closure: the deferred steps (a worker's) leave every producer
        # and every gate as they are, so both give the same producers' pcs and posts.
        live = self.search.live
        announced = False
        for s in live:
            pc, k, _ = s.producer[p]
            if pc == sg.P_IDLE and k not in posts:
                posts[k] = (actor, ev["item"])
                self._forget_pcs()
                announced = True
        extra = set()
        if ev["event"] == "permit_acquire" and self.was_idle(p, actor):
            for s in live:
                pc, k, _ = s.producer[p]
                if pc == sg.P_IDLE and posts.get(k, (None,))[0] == actor:
                    extra.add(s._replace(producer=s.producer.except_(p, (sg.P_SAW_IDLE, k, False))))
        # A post announced may enable the producer's load of the gate: the states held are closed
        # again under the constants of now, so that what a rejection shows is the same whichever
        # internal steps the search defers.
        if announced or extra:
            self.search.states = self.search.closure(live | extra)

    def _track_idle(self, p: str, actor: int) -> None:
        # The deferred steps change no gate: the live states tell (mostly one is held).
        live = self.search.live
        gates = (next(iter(live)).gate,) if len(live) == 1 else tuple([s.gate for s in live])
        if p in self._last_seen:
            self._last_seen[p] = (self._events, gates)
        for g in gates:
            if g[actor].phase == sg.IDLE:
                self._idle_at[actor] = self._events
                break

    # -- the Checker protocol -------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        if self.complete:
            raise Rejected(7, f"{thread} logs {kind} after stop_end: the scheduler had stopped")
        if kind == "stop_end":
            self._stop(ev)
            return
        self._events += 1
        named = self._grow(ev)
        actor = named["actor"]
        names = self._names.get(thread)
        if names is None:
            names = (f"p:{thread}", f"w:{thread}")
            _remember(self._names, thread, names)
        p, w = names
        procs = self._procs.get((kind, thread))
        if procs is None:
            procs = self._processes(ev, p, w)
            _remember(self._procs, (kind, thread), procs)
        if kind in STARTS_POST:
            self._announce(named, p)
        try:
            self.search.step(named, procs)
        except NoMatch as none:
            raise Rejected(*self._why(ev, named, procs, none)) from None
        self._track_idle(p, actor)
        # ``forget_read`` keeps a script of one entry: only a longer one can shrink.
        posts = self.c.posts.get(p) if kind in MOVES_PRODUCER else None
        if posts is not None and len(posts) > 1:
            held = len(posts)
            forget_read(posts, self.search.live, lambda s: s.producer[p][1])
            if len(posts) != held:
                self._forget_pcs()

    def _stop(self, ev: Event) -> None:
        done = {s for s in self.search.states if sg.Done(self.c, s)}
        if not done:
            _, phrases = self.pending()
            raise Rejected(
                7,
                f"{ev['thread']} logs stop_end, but the scheduler cannot be quiescent here: "
                + ("; ".join(phrases) or "a step is still owed"),
            )
        self.search.states = done
        self.complete = True

    def finish(self, complete: bool) -> None:
        if complete and not self.complete and not any(sg.Done(self.c, s) for s in self.search.states):
            raise cannot_stop(7, self.pending()[1])

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        s = least_queued(self.search.states, lambda s: s.mailbox.values())
        c = self.c
        traced = self.units.traced
        events = {
            str(traced(a)): list(s.mailbox[a])
            for a in self.units.in_trace_order(s.mailbox.domain())
            if s.mailbox[a]
        }
        owed: dict[str, str] = {}
        for p, (pc, _, _) in s.producer.items():
            if pc != sg.P_IDLE:
                owed[p[2:]] = pc
        for w, (wpc, actor, _, _) in s.worker.items():
            if wpc != sg.W_IDLE:
                owed[w[2:]] = f"{wpc} actor {traced(actor)}"
        phrases = pending_phrases("events published and not yet processed", "actor", events, owed)
        if s.free != c.permits:
            phrases.append(f"{c.permits - s.free} of {c.permits} permits out of the pool")
        if s.ready:
            phrases.append(f"ready tokens {[traced(a) for a in s.ready]}")
        return {"events": events, "threads": dict(sorted(owed.items())), "free_permits": s.free}, phrases

    def describe(self) -> list[dict[str, Any]]:
        return shown_states(lambda s: sg.Show(self.c, self._traced_state(s)), self.search.states)

    # -- words for a rejection -------------------------------------------------------------------

    def _traced_state(self, s: sg.Vars) -> sg.Vars:
        """``s`` with every actor in the trace's numbers: what its words show."""
        per_actor = ("gate", "mailbox", "published", "processed")
        return self.units.traced_state(s, per_actor, ("ready",), {"worker": WORKER_ACTOR})

    def _gate_word(self, m: Miss) -> str:
        """The gate word of the state a near miss comes from, for the actor it logs (given in the
        trace's numbers: ``UnitNames.traced_miss``)."""
        actor = m.fields.get("actor")
        named = self.units.spec_unit(actor) if type(actor) is int else None
        return f"gate {m.state.gate[named].show()}" if named is not None else ""

    def _why(self, ev: Event, named: Event, procs: list[str], none: NoMatch) -> tuple[int, str]:
        """Why no behaviour takes ``ev`` (``named``: the same event in the spec's actor numbers)."""
        kind, thread = ev["event"], ev["thread"]
        head = show_event(ev)
        states = none.states
        owing = self._owing(states, procs)
        if owing is not None and kind not in ("token_enqueue", "permit_release"):
            return 6, f"{head} — {thread} {owing} and must do that before any other event of its own"
        if not procs:
            role = "take" if kind in WORKER_EVENTS else "permit_acquire or admit_begin"
            hint = HINT.get(kind, "no behaviour takes this step")
            return RULE_OF_EVENT.get(kind, 2), f"{head} — {hint}, and {thread} has logged no {role} before"
        misses = [self.units.traced_miss(m) for m in none.misses if m.differing]
        if misses:
            return RULE_OF_EVENT.get(kind, 2), f"{head} — {misses_logged(misses, self._gate_word)}"
        words = sorted({s.gate[named["actor"]].show() for s in states}) if "actor" in ev else []
        gate = could_be(f"gate of actor {ev['actor']}", words)
        return RULE_OF_EVENT.get(kind, 2), f"{head} — {HINT.get(kind, 'no behaviour takes this step')}{gate}"

    def _owing(self, states: list[sg.Vars], procs: list[str]) -> str | None:
        """What the thread owes in every possible state, if it owes something in all of them."""
        said: set[str] = set()
        for s in states:
            what = None
            for p in procs:
                if p in s.producer.domain():
                    pc, k, _ = s.producer[p]
                    post = self.c.post_of(p, k)
                    posted = "?" if post is None else self.units.traced(post[0])
                    if pc in (sg.P_OWES_TOKEN, sg.P_OWES_RELEASE):
                        what = f"owes {_owed(pc)} of actor {posted}"
                    elif pc == sg.P_CAS_LOST:
                        what = f"owes a permit_release (surplus) of actor {posted}"
                if p in s.worker.domain():
                    wpc, actor, _, _ = s.worker[p]
                    if wpc in (sg.W_OWES_TOKEN, sg.W_OWES_RELEASE):
                        what = f"owes {_owed(wpc)} of actor {self.units.traced(actor)}"
            if what is None:
                return None
            said.add(what)
        return " / ".join(sorted(said)) if said else None


def _owed(pc: str) -> str:
    return "a token_enqueue" if pc.endswith("token") else "a permit_release"


def _make(config: dict[str, Any]) -> GateChecker:
    return GateChecker(config)


# The rules of the schedule-gate format (docs/schedule-gate.md, "What a validator enforces").
GATE_RULES: dict[int, str] = {
    1: "permits: granted only while one is free and the actor is Idle, refused only when none is; "
    "released only when owed (a release_permit directive or a surplus after a lost CAS)",
    2: "admission: admit_begin with a permit only on an Idle gate, a join only on a runnable one; "
    "admit_end's directive is the gate table's for the replayed word",
    3: "publish: only between the producer's admit_begin and admit_end; ok only below mailbox_capacity, "
    "full only when full",
    4: "ready tokens: enqueued only by the thread a directive told to, taken in FIFO order, one per actor",
    5: "drains: drain_begin by the token's taker on a Scheduled gate; process in publish order within "
    "max_per_drain; drain_end's directive is the gate table's and `processed` the count",
    6: "a thread told to enqueue a token or release a permit does so before any other event of its own",
    7: "stop_end only when quiescent: every published event processed, every permit back, nothing owed",
    8: "a trace is judged as a prefix of some behaviour of the spec",
}


_ACTOR = ("actor", is_count)

FORMAT = HEADER.format(
    DESIGN,
    __package__,
    {
        "permit_acquire": (_ACTOR, ("item", is_item), ("granted", is_bool)),
        "admit_begin": (_ACTOR, ("item", is_item), ("permit", is_bool)),
        "publish": (_ACTOR, ("item", is_item), ("result", one_of("ok", "full"))),
        "admit_end": (
            _ACTOR,
            ("item", is_item),
            ("directive", one_of(sg.NO_ACTION, sg.ENQUEUE, sg.RELEASE)),
            ("deferred", is_bool),
        ),
        "token_enqueue": (_ACTOR,),
        "take": (_ACTOR,),
        "drain_begin": (_ACTOR,),
        "process": (_ACTOR, ("item", is_item)),
        "drain_end": (
            _ACTOR,
            ("directive", one_of(sg.ENQUEUE, sg.DEFERRED, sg.RELEASE)),
            ("processed", is_count),
        ),
        "permit_release": (_ACTOR, ("reason", one_of("idle", "surplus"))),
        "stop_end": (),
    },
    make=_make,
    rules=GATE_RULES,
    completion="stop_end",
)

__all__ = [
    "DESIGN",
    "ENABLED_AT",
    "FORMAT",
    "P_IDLE_UNANNOUNCED",
    "GateChecker",
    "GateTraceConstants",
    "announced_pc",
    "local_pc",
]
