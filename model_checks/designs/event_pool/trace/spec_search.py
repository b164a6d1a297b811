"""Event-pool traces judged by the streaming search of ``spec/event_pool.py``'s own actions: the
cross-check of the hand-written ``FORMAT`` (``Design.spec_trace_format``).

The same lines as ``FORMAT`` reads (its header limits, its schema, its check of each event's fields),
judged by ``conformance.search.TraceSearch``: the set of spec states some behaviour could be in,
closed under the internal steps (a pool thread's wait after its ``wait`` is logged, ``TimeOut`` —
the waits may time out —, a SetEvent after its ``signal`` is logged, and the stopper's unlogged
``CallbacksDone`` and ``Close``). The binding
(docs/event-pool.md, "The trace"):

* a pool thread's ``wake`` / ``take`` / ``run`` / ``done`` is the spec's labelled step of that thread;
  its ``wait`` is logged just before the wait, so it only says the wait is to come: the wait itself
  (the spec's ``WaitForWork``, which may block) is internal, and a SetEvent logged after the
  ``wait`` may still come first;
* every other thread, and a pool thread inside a callback, is a client: the spec's one client
  lifted to many. Each poster has its own program counter (post, or owes the ``signal`` of the
  thread its post picked), swapped into the state for its step; ``post`` / ``signal`` are the
  spec's ``Post`` / ``PostAllBusy`` / ``Signal``, a ``signal`` its log only: the SetEvent comes
  later, before the poster's next event (``late_signals``). A refused post is no step of the spec
  (the work stays with the caller);
* ``cancel items`` is the spec's ``WaitForCallbacks(cancel)`` over the named work object's listed
  submissions (the trace does not say which works are whose: the listed works are interchangeable
  in every state, so the named ones are put first); its wait for callbacks is not logged;
* ``stop_begin`` is the stopper's ``WaitForCallbacks`` with admission closed (``submits`` =
  works posted), cancelling the whole list in discard mode — the ``discard`` event it then owes
  lists exactly those works; ``stop_end`` is ``Joined`` (after the unlogged ``CallbacksDone`` and
  ``Close``); a failed stop is no behaviour of the spec;
* the spec's constants are bound to the trace: ``raises`` is learned from each ``done``, and the
  pool threads are those the trace has named, in that order, and one stand-in for the others
  (``named``: the search's size follows the trace, not the header's ``threads``).

Work indices: the spec numbers the works in its list; the trace numbers accepted posts. The binding
keeps the map for the works not yet settled and renumbers the spec's states to drop the settled
head of the array, so a state holds only the live works (``spec_works``). The spec as bound, the
events' fields and the words of a refused step are ``spec_binding``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeGuard

from model_checks.conformance.reader import MAX_INDEXED, clip
from model_checks.conformance.search import NoMatch, TraceSearch
from model_checks.conformance.streamed import DesignFormat, Event
from model_checks.conformance.verdict import Malformed, Rejected, plain
from model_checks.designs.event_pool.trace.fields import CHECKS, problem
from model_checks.designs.event_pool.trace.late_signals import (
    LateLimit,
    LogSignal,
    PoolState,
    as_poster,
    made_by,
    setter_of,
)
from model_checks.designs.event_pool.trace.named import first, is_pool_thread, naming, shown, with_thread
from model_checks.designs.event_pool.trace.rules import RULES
from model_checks.designs.event_pool.trace.spec_binding import (
    CLIENT,
    DEFERRED,
    ENABLED_AT,
    FIELDS,
    OPEN,
    POOL_EVENTS,
    POSTING,
    SPEC,
    STOP_EVENTS,
    SetterPcs,
    Unknown,
    init_states,
    local_pc,
    locked,
    pc_parts,
    show,
    thread_unit,
    why_no_step,
)
from model_checks.designs.event_pool.trace.spec_works import Renumbering, settled_head
from model_checks.designs.event_pool.trace.stop import other_stopper
from model_checks.designs.event_pool.trace.validate import DESIGN
from spec import event_pool as ep
from spec.language import Emitted

# The spec's event of each client step the binding takes itself (``cancel`` for a stop_begin too).
CLIENT_EVENT = {"post": "post", "signal": "signal"}


class PoolSearch:
    """The streaming judge of one event-pool trace (a ``streamed.Checker``)."""

    def __init__(self, config: dict[str, Any], *, deferred: Mapping[str, frozenset[str]] = DEFERRED) -> None:
        """``deferred``: the internal steps the search defers (``{}``: every one taken at once, the
        cross-check of tests/event_pool/test_spec_deferred.py)."""
        # The threads the trace names and a spare for the others (``named``): the search's size
        # follows the trace, not the header's count.
        self.c = first(int(config["threads"]), submits=OPEN, timeouts=True)
        self.setters = SetterPcs(self.c.thread_names())
        start = init_states(dataclasses.replace(self.c, submits=1))  # runs/fate: one slot, for work 0
        self.search = TraceSearch(
            SPEC,
            self.c,
            start,
            check_invariants=False,
            local=local_pc,
            pc_parts=pc_parts(self.c.thread_names(), self.setters),
            enabled_at=ENABLED_AT,
            deferred=deferred,
            unit=thread_unit,
            unit_field="to",
        )
        self.complete = False
        self.locals: dict[str, ep.Client] = {}  # poster -> its program counter (the stopper's: the state's)
        self.accepted = 0  # posts ok so far: the next one is numbered this
        self.spec_of: dict[int, int] = {}  # trace item -> spec index, for the works not yet dropped
        self.stopper: str | None = None
        self.stop_mode: str | None = None
        self.owed_discard: list[int] | None = None  # the works stop(discard) took out, to be logged
        self.late: set[str] = set()  # the posters that logged a signal and may not have made its SetEvent

    # -- the Checker protocol -------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        if not CHECKS[kind](ev):
            line = ev["seq"] + 1  # seq continuity is checked first: line N holds seq N - 1
            raise Malformed(line, f"line {line}: {problem(ev)}")
        for named in (thread, ev.get("to")):
            if self._pool_thread(named) and named not in self.c.names:
                self._name(named)
        if thread in self.late:
            self._made(thread)
        owed = self.locals.get(thread)
        if owed is not None and owed.pc == ep.SIGNAL and kind != "signal":
            raise Rejected(
                5,
                f"{show(ev)} — {thread}'s post picked {owed.target}: it signals {owed.target} "
                "before any other event of its own",
            )
        if self.owed_discard is not None and (thread == self.stopper or locked(ev)) and kind != "discard":
            # The stopper holds the list lock from its stop_begin to its discard: no event logged
            # under that lock (nor one of its own) comes between them.
            raise Rejected(
                8,
                f"{show(ev)} — stop(discard) took works {self.owed_discard} out of the list and logs "
                "their discard before the list lock is released",
            )
        if kind in POOL_EVENTS:
            self._pool(ev)
        elif self._pool_thread(thread) and (kind in STOP_EVENTS or not self._in_callback(thread)):
            where = "inside" if kind in STOP_EVENTS and self._in_callback(thread) else "outside"
            raise Rejected(
                1,
                f"{show(ev)} — pool thread {thread} logs {kind} {where} a callback: a pool thread posts and "
                "signals only from a callback, and its cancel or stop is refused",
            )
        elif kind == "post":
            self._post(ev)
        elif kind == "signal":
            try:
                self._as_client(ev, [(LogSignal, ())], {"to": ev["to"]})
            except LateLimit as too_many:
                line = ev["seq"] + 1
                raise Malformed(line, f"line {line}: {too_many}, the limit of this engine") from None
            self.late.add(thread)
        elif kind == "cancel":
            self._cancel(ev)
        elif kind == "stop_begin":
            self._stop_begin(ev)
        elif kind == "discard":
            self._discard(ev)
        else:
            self._stop_end(ev)
        self._compact()
        if self.search.observer is not None and kind not in POOL_EVENTS and kind != "stop_end":
            self.search.observer(self.search)

    def finish(self, complete: bool) -> None:
        if not complete or self.complete:
            return
        for poster in sorted(self.late):  # the run is over: every SetEvent logged was made
            self._made(poster)
        if not self.search.reaches(lambda s: ep.Settled(self.c, s)):
            _, phrases = self.pending()
            raise Rejected(
                9,
                "the run ends, but no behaviour of the spec can stop here (a lost wakeup, or works accepted "
                "and never settled): " + ("; ".join(phrases) or "a step is owed"),
            )

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        # The states held, not their closure under the deferred steps (SetEvents owed, waits, time-
        # outs), which grows with each owed signal (6 owed: 10 s, 7: over a minute; the second review,
        # F4): the works listed and taken are the logged events', the same in both.
        s = min(self.search.live, key=repr)
        back = {v: k for k, v in self.spec_of.items()}
        listed = [back.get(i, i) for i in ep.Listed(s)]
        busy = {t: back.get(me.item, me.item) for t, me in s.thread.items() if me.pc in (ep.RUN, ep.CALLBACK)}
        data: dict[str, Any] = {}
        phrases: list[str] = []
        if listed:
            data["listed"] = listed
            phrases.append(f"{len(listed)} works in the list {listed}")
        if busy:
            data["taken or running"] = busy
            phrases.append(f"taken or running: {busy}")
        owes = {x: str(cl.target) for x, cl in self.locals.items() if cl.pc == ep.SIGNAL}
        if owes:
            data["signals owed"] = owes
            phrases.append(f"signals owed: {owes}")
        if self.stop_mode is not None and not self.complete:
            data["stop"] = self.stop_mode
            phrases.append(f"stop({self.stop_mode}) began and has not ended")
        return data, phrases

    def describe(self) -> list[dict[str, Any]]:
        unnamed = self.c.unnamed()
        return [shown(plain(ep.Show(self.c, s)), unnamed) for s in sorted(self.search.live, key=repr)[:8]]

    # -- the threads named -------------------------------------------------------------------------

    def _pool_thread(self, name: Any) -> TypeGuard[str]:
        return is_pool_thread(name, self.c.threads)

    def _order(self, name: str) -> int:
        """Threads in the order the trace named them, the spare last."""
        return self.c.names.index(name)

    def _name(self, thread: str) -> None:
        """The trace names pool ``thread`` first: it joins every state where ``Init`` put it."""
        self.c = naming(self.c, thread)
        self.setters.name(self.c.thread_names())
        self.search.rebind(self.c, with_thread(self.c))

    def _made(self, poster: str) -> None:
        """Keep the behaviours in which ``poster`` has made the SetEvent it logged: its next event
        comes after it (program order)."""
        self.late.discard(poster)
        targets = {t for s in self.search.live for p, t in s.late if p == poster}
        for t in sorted(targets):
            # The SetEvent may have come after the signalled thread's wait or timeout, which the
            # live states may not have taken yet (deferred): take them as that thread's wake would.
            procs = [t, setter_of(t)]
            before, taken = self.search.before({"event": "wake"}, procs)
            self.search.after(made_by(before, poster), taken, procs)

    # -- the pool threads --------------------------------------------------------------------------

    def _pool(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        if not self._pool_thread(thread):
            raise Rejected(
                1,
                f"{show(ev)} — {kind} comes only from a pool thread (t0 .. t{self.c.threads - 1})",
            )
        spec_ev: dict[str, Any] = {"event": kind}
        if kind == "wake":
            spec_ev["result"] = ev["result"]
        elif kind in ("take", "run", "done"):
            spec_ev["item"] = None if ev["item"] is None else self._index(ev["item"])
        if kind == "done":
            spec_ev["raised"] = ev["raised"]
            i = spec_ev["item"]
            # The spec's constant names the raising submissions: the trace tells it at each done.
            self.c = dataclasses.replace(self.c, raises=(i,) if ev["raised"] and type(i) is int else ())
            self.search.c = self.c
        try:
            self.search.step(spec_ev, [thread])
        except NoMatch as none:
            raise Rejected(*why_no_step(ev, none)) from None

    def _index(self, item: int) -> int | Unknown:
        found = self.spec_of.get(item)
        return Unknown(item) if found is None else found

    def _in_callback(self, thread: str) -> bool:
        # A deferred step (a wait, a timeout, the stop) leaves a thread in its callback where it is.
        return any(s.thread[thread].pc == ep.CALLBACK for s in self.search.live)

    # -- the clients -------------------------------------------------------------------------------

    def _as_client(
        self,
        ev: Event,
        candidates: Iterable[tuple[Callable[..., Any], tuple[Hashable, ...]]],
        fields: dict[str, Any],
        *,
        c: ep.Constants | None = None,
        view: Callable[[PoolState], PoolState] = lambda s: s,
        keep: Callable[[PoolState, PoolState], PoolState] | None = None,
    ) -> list[Any]:
        """Step the thread's client program: each live state with its program counter swapped in."""
        thread = ev["thread"]
        constants = self.c if c is None else c
        local = self.locals.get(thread, POSTING)
        pool = self._pool_thread(thread)
        out: set[PoolState] = set()
        locals_: set[ep.Client] = set()
        emitted: list[Any] = []
        cands = list(candidates)
        # The deferred steps this step does not move past, taken first (a signal's: its thread's
        # wait and timeout): the search's ``before`` and ``after``, as its own step does them.
        spec_ev = {"event": CLIENT_EVENT.get(ev["event"], "cancel"), "to": ev.get("to")}
        before, taken = self.search.before(spec_ev, [CLIENT])
        for s in before:
            if pool and s.thread[thread].pc != ep.CALLBACK:
                continue  # a pool thread posts and signals only from inside a callback
            v = view(s._replace(client=local))
            for fn, args in cands:
                r = fn(constants, v, CLIENT, *args)
                if type(r) is not Emitted or any(r.fields.get(k) != want for k, want in fields.items()):
                    continue
                emitted.append(r.fields)
                locals_.add(r.state.client)
                # A signal's SetEvent is owed by this poster, not the spec's one client.
                nxt = as_poster(r.state, CLIENT, thread)
                out.add(keep(s, nxt) if keep is not None else nxt._replace(client=s.client))
        if not out:
            raise Rejected(self._client_rule(ev), f"{show(ev)} — {self._client_words(ev, local)}")
        if keep is None:
            # The poster's next program counter follows from the event (a post's ``to``): one value.
            (self.locals[thread],) = locals_
        self.search.after(out, taken, [CLIENT])
        return emitted

    def _post(self, ev: Event) -> None:
        if ev["result"] != "ok":
            return  # refused: no step of the spec, the work stays with the caller
        posted = next(iter(self.search.live)).posted  # the same in every live state
        # Accepted posts are numbered in order: the next one is the spec's work ``posted``.
        item = posted if ev["item"] == self.accepted else Unknown(ev["item"])
        cands = [(ep.Post, (t,)) for t in self.c.thread_names()] + [(ep.PostAllBusy, ())]
        self._as_client(ev, cands, {"item": item, "to": ev["to"]})
        self.spec_of[self.accepted] = posted
        self.accepted += 1

    def _relabel(self, ev: Event, items: list[int], rule: int) -> list[int]:
        """Put ``items`` (listed works) first in the list: the listed works are interchangeable."""
        s = next(iter(self.search.live))  # deferred steps leave the list as it is
        listed = list(ep.Listed(s))
        back = {v: k for k, v in self.spec_of.items()}
        order = [back[i] for i in listed]
        if len(set(items)) != len(items) or not set(items) <= set(order):
            gone = [i for i in items if i not in order or items.count(i) > 1]
            raise Rejected(
                rule, f"{show(ev)} — names work {gone[0]}, which is not in the list (listed: {order})"
            )
        for spec_i, trace_i in zip(listed, items + [i for i in order if i not in items], strict=True):
            self.spec_of[trace_i] = spec_i
        return listed[: len(items)]

    def _cancel(self, ev: Event) -> None:
        spec_items = self._relabel(ev, ev["items"], 7)
        k = len(spec_items)
        s0 = next(iter(self.search.live))
        c = dataclasses.replace(self.c, cancel=True, submits=s0.next + k)
        # The named work object's submissions are the first k listed: the others are not its own.
        self._as_client(
            ev,
            [(ep.WaitForCallbacks, ())],
            {"items": spec_items},
            c=c,
            view=lambda s: s._replace(posted=s.next + k),
            keep=lambda s, r: r._replace(posted=s.posted, client=s.client),
        )
        self.locals[ev["thread"]] = POSTING  # its wait for callbacks returns, unlogged

    def _stop_begin(self, ev: Event) -> None:
        if self.stop_mode is not None:
            raise Rejected(8, f"{show(ev)} — one stop only: stop({self.stop_mode}) began already")
        mode = ev["mode"]
        s0 = next(iter(self.search.live))
        self.c = dataclasses.replace(self.c, submits=s0.posted, cancel=mode == "discard")
        self.search.c = self.c
        emitted = self._as_client(ev, [(ep.WaitForCallbacks, ())], {}, keep=lambda s, r: r)
        self.stopper, self.stop_mode = ev["thread"], mode
        back = {v: k for k, v in self.spec_of.items()}
        dropped = [back[i] for i in emitted[0]["items"]]
        if dropped:
            self.owed_discard = dropped

    def _discard(self, ev: Event) -> None:
        if self.owed_discard is None or ev["thread"] != self.stopper:
            began = f"stop({self.stop_mode})" if self.stop_mode else "no stop"
            raise Rejected(
                8,
                f"{show(ev)} — {began} began; only stop(discard) drops works, once, "
                "right after its stop_begin",
            )
        if ev["items"] != self.owed_discard:
            raise Rejected(  # rule 8 (stop), as the fast model says it: the two engines name one rule
                8,
                f"{show(ev)} — stop(discard) took out the whole list, works {self.owed_discard}",
            )
        self.owed_discard = None

    def _stop_end(self, ev: Event) -> None:
        if self.stop_mode is None or self.complete or ev["mode"] != self.stop_mode:
            said = "no stop began" if self.stop_mode is None else f"stop({self.stop_mode}) began"
            raise Rejected(8, f"{show(ev)} — {said}{', and ended' if self.complete else ''}")
        if ev["thread"] != self.stopper:
            raise Rejected(8, f"{show(ev)} — " + other_stopper(ev, self.stopper or ""))
        if ev["result"] != "ok":
            raise Rejected(8, f"{show(ev)} — the pool failed: no behaviour of the spec fails")
        try:
            self.search.step({"event": "stop_end"}, [CLIENT])
        except NoMatch:
            _, phrases = self.pending()
            exited = all(all(me.pc == ep.EXITED for me in s.thread.values()) for s in self.search.states)
            if self.c.unnamed():
                phrases.append(f"{self.c.unnamed()} pool threads never named (no wake stop logged)")
            rule = 9 if exited else 8
            raise Rejected(
                rule,
                f"{show(ev)} — the spec's stop returns only once every work settled and every pool thread "
                "exited: " + ("; ".join(phrases) or "a thread has not exited"),
            ) from None
        self.complete = True

    # -- the work array ----------------------------------------------------------------------------

    def _compact(self) -> None:
        """Renumber the live states: drop the settled head of the array, keep one free slot."""
        states = self.search.live  # deferred steps settle no work
        k = min(settled_head(s) for s in states)
        s0 = next(iter(states))
        if k == 0 and len(s0.fate) == s0.posted + 1:
            return
        renumber = Renumbering(k, s0.posted - k + 1)  # every live state has posted the same works
        self.search.states = {renumber.state(s) for s in states}
        if k:
            self.spec_of = {t: i - k for t, i in self.spec_of.items() if i >= k}

    # -- words -------------------------------------------------------------------------------------

    def _client_rule(self, ev: Event) -> int:
        """The rule of ``FORMAT`` a refused client step breaks (``rules.RULES``)."""
        kind = ev["event"]
        if kind != "post":
            return {"signal": 5, "cancel": 7}.get(kind, 8)
        if ev["to"] is not None and not self._pool_thread(ev["to"]):
            return 1
        closed = self.c.submits != OPEN
        return 3 if closed or ev["item"] != self.accepted else 4

    def _client_words(self, ev: Event, local: ep.Client) -> str:
        kind = ev["event"]
        if local.pc == ep.SIGNAL and kind != "signal":
            return f"{ev['thread']} signals {local.target} before any other event of its own"
        if kind == "signal":
            return "a thread signals once, the thread its last post picked" + (
                f" ({local.target})" if local.target else " (no post of it picked one)"
            )
        if kind == "post":
            if ev["to"] is not None and not self._pool_thread(ev["to"]):  # rule 1, as ``_client_rule`` says
                return f"{clip(repr(ev['to']), 80)} is not a pool thread (t0 .. t{self.c.threads - 1})"
            if self.c.submits != OPEN:
                return "admission closed at stop_begin: every later post is refused"
            if ev["item"] != self.accepted:
                return f"accepted posts are numbered in order: this one is work {self.accepted}"
            idle = sorted({t for s in self.search.states for t, i in s.idle.items() if i}, key=self._order)
            return (
                "a post picks an idle thread, none only when no thread is idle "
                f"(idle: {shown(idle, self.c.unnamed()) or 'none'})"
            )
        return "no behaviour of the spec takes this step"


SPEC_FORMAT = DesignFormat(
    design=DESIGN,
    schema_file="trace-schema.json",
    fields=FIELDS,
    index="",  # no event field is bounded by a header count
    bound="threads",
    make=PoolSearch,
    rules=RULES,
    completion="stop_end ok (pass --complete when the run is over)",
    schema_package="model_checks.designs.event_pool",
    header_limits={"threads": MAX_INDEXED},
)

__all__ = ["SPEC", "SPEC_FORMAT", "PoolSearch"]
