"""The generic engine: a search of the spec's own actions, constrained by the trace.

After each event it keeps the *set* of spec states some behaviour could be in
(deduplicated), closed under the spec's internal actions. Each event is matched
against the labelled actions of the process its thread is bound to
(``binding``); fields must be equal. It streams: producers join at their first
post and their scripts are learned as the posts come (``binding.UNKNOWN_POST``
stands for a post not yet seen), so memory is the live state set, not the
trace. It is the reference the fast path is tested against.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Any

from model_checks.conformance.binding import with_entry
from model_checks.conformance.search_binding import forget_read, joined
from model_checks.conformance.search_words import least_queued
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import shown_states
from model_checks.designs.work_lane.trace.binding import ANON, ROLE_OF, TraceConstants, normalize
from model_checks.designs.work_lane.trace.explain import explain
from model_checks.designs.work_lane.trace.parse import HEADER, Config, Event
from spec import work_lane as wl
from spec.language import Action, Emitted, Spec

Bound = tuple[Action, str, list[tuple[Hashable, ...]]]
# A lane the trace has not named yet: Idle and empty, nothing ever accepted, in every state.
UNNAMED_LANE = {"queue": (), "status": wl.IDLE, "accepted": 0, "invoked": 0, "discarded": 0}


class SpecEngine:
    name = "spec"

    def __init__(self, config: Config, spec: Spec = wl.SPEC) -> None:
        posts: dict[str, dict[int, tuple[int | None, Any]]] = {}
        # Lanes join as the trace names them (``_grow``): a lane never named stays Idle and empty
        # in every behaviour, so leaving it out changes no verdict, and the header's count
        # (up to 65,536) costs nothing.
        self.c = HEADER.constants(TraceConstants, config.as_dict(), callback_stop=True, posts=posts)
        assert spec.init_fn is not None
        self.spec = spec
        self.internal: list[Bound] = []
        self.labelled: dict[str, list[Bound]] = {}
        self._bind()
        self.invariants = [inv.fn for inv in spec.invariants]
        self.current_stop: dict[str, str] = {}
        self.states: set[wl.Vars] = self.closure({normalize(s) for s in spec.init_fn(self.c)})

    def _bind(self) -> None:
        """Each action with the values of its extra domains (``Lanes`` for a discard), for ``self.c``."""
        self.internal = []
        self.labelled = {}
        for action in self.spec.actions:
            role = ROLE_OF[action.domains[0]]
            extras: list[tuple[Hashable, ...]] = [()]
            for domain in action.domains[1:]:
                extras = [(*e, v) for e in extras for v in domain(self.c)]
            if action.event is None:
                self.internal.append((action, role, extras))
            else:
                self.labelled.setdefault(action.event, []).append((action, role, extras))

    @staticmethod
    def _domain(s: wl.Vars, role: str) -> tuple[Hashable, ...]:
        f = s.producer if role == "producer" else s.worker if role == "worker" else s.stopper
        return f.domain()

    def closure(self, states: set[wl.Vars]) -> set[wl.Vars]:
        seen = set(states)
        frontier = list(states)
        c = self.c
        while frontier:
            s = frontier.pop()
            for action, role, extras in self.internal:
                fn = action.fn
                for p in self._domain(s, role):
                    for extra in extras:
                        nxt = fn(c, s, p, *extra)
                        if nxt is None:
                            continue
                        nxt = normalize(nxt)
                        if nxt not in seen:
                            seen.add(nxt)
                            frontier.append(nxt)
        return seen

    def _fire(self, s: wl.Vars, ev: Event, role: str, proc: str, out: set[wl.Vars]) -> None:
        c = self.c
        for action, a_role, extras in self.labelled.get(ev["event"], ()):
            if a_role != role or proc not in self._domain(s, role):
                continue
            fn: Callable[..., Any] = action.fn
            for extra in extras:
                r = fn(c, s, proc, *extra)
                if type(r) is not Emitted:
                    continue
                if any(ev.get(k, _MISSING) != v for k, v in r.fields.items()):
                    continue
                nxt = normalize(r.state)
                if any(inv(c, nxt) is not None for inv in self.invariants):
                    continue  # e.g. a submit that overflows the ready queue: the spec rules it out
                out.add(nxt)

    def _learn_post(self, ev: Event) -> None:
        """Bind the posting thread (a producer from its first post) and learn this post of its script."""
        p = ev["thread"]
        posts = self.c.posts
        lane = ev["lane"]
        if p not in posts:
            posts[p] = {}
            fresh = (wl.P_IDLE, 0, None)
            extended = set()
            for s in self.states:
                extended.add(s._replace(producer=with_entry(s.producer, p, fresh)))
                if s.phase == wl.CLOSING and lane is not None:
                    # Its Admit may have come before the (unlogged) Stop call that closed admission.
                    admitted = with_entry(s.producer, p, (wl.P_ADMITTED, 0, None))
                    extended.add(s._replace(producer=admitted))
            self.states = self.closure(extended)
        script = posts[p]
        for s in self.states:
            k = s.producer[p][1]
            if k not in script:
                script[k] = (lane, ev["item"])
        if lane is None:  # Admit needs a lane: a state that admitted this post admitted another one
            self.states = {s for s in self.states if s.producer[p][0] != wl.P_ADMITTED}

    def _grow(self, lane: int) -> None:
        """Lanes up to ``lane`` join every state, Idle and empty."""
        new = tuple(range(self.c.lanes, lane + 1))
        self.c = dataclasses.replace(self.c, lanes=lane + 1)
        self._bind()
        self.states = {joined(s, new, UNNAMED_LANE) for s in self.states}

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        lane = ev.get("lane")
        if type(lane) is int and lane >= self.c.lanes:
            self._grow(lane)
        if kind == "post":
            self._learn_post(ev)
        out: set[wl.Vars] = set()
        for s in self.states:
            if kind == "post":
                self._fire(s, ev, "producer", thread, out)
            elif kind == "submit":
                self._fire(s, ev, "producer", thread, out)
                self._fire(s, ev, "worker", thread, out)
            elif kind == "take":
                if thread not in s.worker.domain() and len(s.worker) < self.c.workers:
                    s = s._replace(worker=with_entry(s.worker, thread, (wl.W_IDLE, None, 0, None)))
                self._fire(s, ev, "worker", thread, out)
            elif kind in ("drain_begin", "invoke", "drain_end") or (
                kind == "stop_rejected" and ev["reason"] == "in_callback"
            ):
                self._fire(s, ev, "worker", thread, out)
            elif kind == "stop_rejected":
                name = f"{thread}@{ev['seq']}"
                self.c.modes[name] = ev["mode"]
                self._fire(s._replace(stopper=with_entry(s.stopper, name, "idle")), ev, "stopper", name, out)
            elif kind == "stop_begin":
                name = f"{thread}@{ev['seq']}"
                self.c.modes[name] = ev["mode"]
                anon = ANON[ev["mode"]]
                if s.stopper.as_dict().get(anon) == "active":
                    taken = with_entry(with_entry(s.stopper, anon, "done"), name, "active")
                    self._fire(s._replace(stopper=taken), ev, "stopper", name, out)
            else:  # discard, stop_end
                name = self.current_stop.get(thread, "")
                self._fire(s, ev, "stopper", name, out)
        if not out:
            rule, message = explain(ev, sorted(self.states, key=repr), self.c)
            raise Rejected(rule, message)
        if kind == "stop_begin":
            self.current_stop[thread] = f"{thread}@{ev['seq']}"
        elif kind == "stop_end":
            self.current_stop.pop(thread, None)
        self.states = self.closure(out)
        if kind == "post":
            forget_read(self.c.posts[thread], self.states, lambda s: s.producer[thread][1])

    def describe(self) -> list[dict[str, Any]]:
        return shown_states(lambda s: wl.Show(self.c, s), self.states)

    def pending(self) -> dict[str, Any]:
        s = least_queued(self.states, lambda s: s.queue.values())
        items = {str(lane): [i for _, i in s.queue[lane]] for lane in wl.Lanes(self.c) if s.queue[lane]}
        owed = {p: lane for p, (pc, _, lane) in s.producer.items() if pc == wl.P_OWES}
        owed.update({w: lane for w, (pc, lane, _, _) in s.worker.items() if pc == wl.W_OWES})
        return {"items": items, "submissions": dict(sorted(owed.items()))}


_MISSING = object()
