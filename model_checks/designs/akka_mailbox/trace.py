"""Trace conformance for the akka-mailbox design: the streaming search over ``spec/akka_mailbox.py``.

Binding: a thread that logs ``send`` is a producer (``p:<thread>``) whose
script is its sends, learned as they come; a thread that logs ``run_begin`` is
a worker (``w:<thread>``; at most ``config.workers`` threads); a thread that
logs ``suspend``/``resume``/``close`` is a supervisor (``s:<thread>``) whose
script is those operations. ``dead_letter`` comes from a supervisor (its cleanUp
after a close) or from a producer (a sender that read Closed after its append).
A thread with two roles (``main`` sending, then closing at shutdown) gets one
process per role, which lets the spec interleave that thread's own steps a
little more freely than the thread did (lenient, never stricter). ``schedule``
and ``execute`` may come from any role of the thread. Mailboxes join as the
events name them (a mailbox nobody has named is in its initial state in every
behaviour). The search names them 0, 1, 2, ... in the order the trace does
(``search_binding.UnitNames``), so a trace's mailbox numbers cost nothing; words say the trace's.

``run_end`` may carry ``status``, the status word its ``setAsIdle`` wrote; when
present it must be the spec's (docs/akka-mailbox.md): this is what shows a
``setAsIdle`` that overwrote a concurrent close.

``append`` (the spec's ``Enqueue``) is logged by a trace whose header says
``config.logs_append: true``, and then for every accepted send, by its sender
before its next event: the search takes the spec as it is. Without the key the
trace is of the format before ``append`` (an older port's): the search takes
``WithoutAppendEvents(SPEC)``, where the append is an internal step placed
wherever the events allow, and an ``append`` event is refused. The header decides
once, so that a trace cannot switch formats midway (a first ``append`` late in a
trace could not say whether the sends before it had theirs).

A trace has no end event of its own: ``complete=True`` (``lanecheck validate
--complete``) says the run is over, and the trace must then end where the spec
may stop — every script done, every thread idle, the executor queue empty and
every message processed or dead-lettered. Otherwise it is judged as a prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from model_checks.conformance.header_config import HeaderConfig
from model_checks.conformance.item_ids import ItemEvents, ItemIds
from model_checks.conformance.search import FunctionPcs, NoMatch, TraceSearch
from model_checks.conformance.search_binding import UnitNames, add_process, forget_read
from model_checks.conformance.search_words import least_queued, pending_phrases
from model_checks.conformance.streamed import Event, is_count, is_item, is_items, one_of
from model_checks.conformance.trace_processes import TraceProcesses
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import show_event, shown_states
from model_checks.designs.akka_mailbox import verify_rows
from model_checks.designs.akka_mailbox.trace_search import (
    DEFERRED,
    DEFERRED_WITHOUT_APPEND_EVENTS,
    ENABLED_AT,
    MAILBOX_ITEM,
    MOVES_TO,
    MOVES_TO_WITHOUT_APPEND_EVENTS,
    SPEC_WITHOUT_APPEND_EVENTS,
    UNIT_FIELD,
    local_pc,
    mailbox_of,
)
from model_checks.designs.akka_mailbox.trace_words import AKKA_RULES, appends_owed, why
from model_checks.designs.akka_mailbox.verify_rows import WHOLE_RUN_FAILURES as WHOLE_RUN_FAILURES
from spec import akka_mailbox as am
from spec.language import Seq

DESIGN = "akka-mailbox"
HEADER = HeaderConfig(index="mailbox", units="mailboxes", indexed=("workers",), sizes=("throughput",))
# A mailbox the trace has not named yet: open and empty, nothing ever sent to it, in every state.
UNNAMED_MAILBOX = {
    "status": am.OPEN,
    "queue": Seq(),
    "sent": 0,
    "processed": 0,
    "last": 0,
    "dead": 0,
    "closed": False,
}


# an ok send accepts an item id, its process or the dead_letter listing it ends it (rule 4's ids)
MAILBOX = ItemEvents(
    frozenset({"send"}),
    frozenset({"process"}),
    frozenset({"dead_letter"}),
    "mailbox",
    "processed or dead-lettered",
)
MAILBOX_ITEM_EVENTS = MAILBOX.all


@dataclass(frozen=True, eq=False)
class TraceConstants(TraceProcesses, am.Constants):
    """The spec's constants bound to one trace: processes, scripts and mailboxes grow as it shows them."""

    supervisors: list[str] = field(default_factory=list)
    sends: dict[str, dict[int, tuple[int, Any]]] = field(default_factory=dict)
    ops: dict[str, dict[int, tuple[str, int]]] = field(default_factory=dict)

    def supervisor_names(self) -> tuple[str, ...]:
        return tuple(self.supervisors)

    def send_of(self, producer: str, k: int) -> tuple[int, Any] | None:
        return self.sends[producer].get(k)

    def op_of(self, supervisor: str, k: int) -> tuple[str, int] | None:
        return self.ops[supervisor].get(k)


class TraceRejected(Exception):
    """No behaviour of the spec produces this trace: ``seq`` names the first event none allows."""

    def __init__(self, seq: int | None, message: str, rule: int | None = None) -> None:
        super().__init__(message)
        self.seq = seq
        self.message = message
        self.rule = rule


ROLE_OF_EVENT: dict[str, tuple[str, ...]] = {
    "send": ("p",),
    "schedule": ("p", "w", "s"),
    "execute": ("p", "w", "s"),
    "run_begin": ("w",),
    "process": ("w",),
    "run_end": ("w",),
    "suspend": ("s",),
    "resume": ("s",),
    "close": ("s",),
    "dead_letter": ("s", "p"),  # a supervisor's cleanUp after its close, or a sender's own
    "append": ("p",),
}
SUPERVISOR_OPS = frozenset({"suspend", "resume", "close"})
# The header key that says a trace logs ``append`` (docs/akka-mailbox.md, *Trace events*).
LOGS_APPEND = "logs_append"
OPTIONAL_FIELDS = ("status",)
PROCS_LIMIT = 256  # entries of ``AkkaChecker``'s memo of an event's processes: memory stays flat


def _waiting(c: am.Constants, s: am.Vars) -> dict[int, list[Any]]:
    """Per mailbox, the messages accepted and not yet settled: queued, or their append still owed
    (without ``append`` events a state where it has not happened yet holds them too; with them,
    a prefix may end between a send and its append)."""
    out: dict[int, list[Any]] = {mb: [item for _, item in s.queue[mb]] for mb in am.Mailboxes(c)}
    for p, (pc, k, mb) in s.producer.items():
        send = c.send_of(p, k)
        if pc == am.P_APPEND and mb is not None and send is not None:
            out[mb].append(send[1])
    return {mb: items for mb, items in out.items() if items}


def _least_waiting(c: am.Constants, states: Iterable[am.Vars]) -> tuple[am.Vars, dict[int, list[Any]]]:
    """The state a pending prefix is described by (``search_words.least_queued``) and its waiting."""
    s = least_queued(states, lambda st: list(_waiting(c, st).values()))
    return s, _waiting(c, s)


class AkkaChecker:
    """The streaming judge of one akka-mailbox trace (a ``streamed.Checker``)."""

    complete = False  # the format has no end event: the caller says so (``finish(complete=True)``)

    def __init__(
        self, config: Mapping[str, Any], *, deferred: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        """``deferred``: the internal actions the search defers (default: ``DEFERRED`` when the trace
        logs ``append``, ``DEFERRED_WITHOUT_APPEND_EVENTS`` when it does not; ``{}``: every one
        taken at once, the cross-check of tests/akka/test_deferred_units.py)."""
        # No ``workers`` (a caller's own config, not a header): any number of worker threads.
        self.workers = int(config.get("workers", 0))
        logs_append = config.get(LOGS_APPEND, False)
        if type(logs_append) is not bool:  # a file's header is held to the schema before this
            raise ValueError(f"config.{LOGS_APPEND} must be true or false, not {logs_append!r}")
        self.logs_append = logs_append
        # (event kind, thread) -> the processes it may be, once its thread's roles are bound
        # (``_processes``; forgotten whenever a process joins)
        self._procs: dict[tuple[str, str], list[str]] = {}
        # thread -> the mailbox it logged schedule of and owes the execute of, next
        self.executes_owed: dict[str, int] = {}
        # mailbox (the trace's number) -> the seq of its close: becomeClosed's CAS succeeds once
        self.closed_at: dict[int, int] = {}
        self.ids = ItemIds(MAILBOX)  # the item ids in flight (conformance.item_ids)
        if deferred is None:
            deferred = DEFERRED if logs_append else DEFERRED_WITHOUT_APPEND_EVENTS
        self.c = TraceConstants(
            mailboxes=0, workers=max(self.workers, 1), throughput=int(config["throughput"])
        )
        self.units = UnitNames(UNIT_FIELD, "mailboxes", UNNAMED_MAILBOX)
        self.search = TraceSearch(
            am.SPEC if logs_append else SPEC_WITHOUT_APPEND_EVENTS,
            self.c,
            am.Init(self.c),
            optional=OPTIONAL_FIELDS,
            check_invariants=False,
            local=local_pc,
            enabled_at=ENABLED_AT,
            # Each kind of process's pcs read off its own function, their steps remembered per
            # function (a step moves one process: the other two parts are met again as they were),
            # each process's mailbox (``mailbox_of``) read with its pc.
            pc_parts=[(attrgetter(f), FunctionPcs(unit=item)) for f, item in MAILBOX_ITEM.items()],
            deferred=deferred,
            unit=mailbox_of,
            unit_field=UNIT_FIELD,
            moves_to=MOVES_TO if logs_append else MOVES_TO_WITHOUT_APPEND_EVENTS,
        )

    # -- binding ---------------------------------------------------------------------------------

    def _add(self, role: str, name: str) -> None:
        c = self.c
        self._procs.clear()
        if role == "p":
            c.producers.append(name)
            c.sends[name] = {}
            add_process(self.search, c, "producer", name, (am.IDLE, 0, None))
        elif role == "w":
            c.bound_workers.append(name)
            add_process(self.search, c, "worker", name, (am.IDLE, None, 0))
        else:
            c.supervisors.append(name)
            c.ops[name] = {}
            add_process(self.search, c, "supervisor", name, (am.IDLE, 0, None))

    def _processes(self, ev: Event) -> list[str]:
        kind, thread = ev["event"], ev["thread"]
        c = self.c
        p, w, s = f"p:{thread}", f"w:{thread}", f"s:{thread}"
        if kind == "send" and p not in c.sends:
            self._add("p", p)
        elif kind in SUPERVISOR_OPS and s not in c.ops:
            self._add("s", s)
        elif kind == "run_begin" and w not in c.bound_workers:
            if self.workers and len(c.bound_workers) >= self.workers:
                raise Rejected(
                    2,
                    f"{thread} run_begin: a worker thread beyond config.workers = {self.workers}"
                    f" (workers so far: {', '.join(n[2:] for n in c.bound_workers)})",
                )
            self._add("w", w)
        c = self.c
        bound = {"p": p in c.sends, "w": w in c.bound_workers, "s": s in c.ops}
        return [f"{role}:{thread}" for role in ROLE_OF_EVENT[kind] if bound[role]]

    def _announce(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        if kind == "send":
            p = f"p:{thread}"
            script: dict[int, Any] = self.c.sends[p]
            entry: Any = (ev["mailbox"], ev["item"])
            local = 0
        elif kind in SUPERVISOR_OPS:
            p = f"s:{thread}"
            script = self.c.ops[p]
            entry = (kind, ev["mailbox"])
            local = 1
        else:
            return
        # The live states, not their closure: a deferred step keeps a process's place in its
        # script but two, which end an entry (``k`` + 1): a cleanUp that finds nothing ends a
        # close, and an append (internal and deferred without ``append`` events) ends a send. So
        # a state that may still reach idle reads the same entry. A state that cannot take this
        # event before its next logged step reads it too, and dies at it.
        for st in self.search.live:
            pc, k, _ = (st.producer if local == 0 else st.supervisor)[p]
            if pc == am.S_CLEANUP or pc == am.P_APPEND:
                k += 1
            if k not in script:
                script[k] = entry

    def _append_first(self, ev: Event) -> None:
        """A thread with a sender's role and another logs nothing between a send and its append.

        The spec binds each role to a process of its own, so another role's step (a close, an
        ``execute``) could otherwise pass the sender's owed append: the states where it is owed
        cannot take this event."""
        thread = ev["thread"]
        p = f"p:{thread}"
        if ev["event"] == "append" or p not in self.c.sends:
            return
        # The live states: no deferred step leaves or enters P_APPEND (the append is logged).
        states = self.search.live
        kept = {s for s in states if s.producer[p][0] != am.P_APPEND}
        if not kept:
            owed = appends_owed(self.c, self.units, self.search.states, thread)
            raise Rejected(
                4,
                f"{show_event(ev)} — {thread} logs {ev['event']} before the append of {owed}"
                " (an ok send's append comes first)",
            )
        if len(kept) != len(states):
            self.search.states = kept

    def _close_once(self, ev: Event) -> None:
        """A mailbox is closed by one ``close``: on a Closed word ``becomeClosed`` logs nothing and
        does no cleanUp (docs/akka-mailbox.md, *Trace events*). The spec's ``Close`` is a supervisor's
        scripted step that never meets a Closed word in a configuration, so the binding holds it."""
        mb = ev["mailbox"]
        first = self.closed_at.get(mb)
        if first is not None:
            raise Rejected(
                5,
                f"{show_event(ev)} — mailbox {mb} was closed at seq {first}: a close of an"
                " already-closed mailbox logs nothing (becomeClosed changes nothing on a Closed word)",
            )
        self.closed_at[mb] = ev.get("seq", 0)

    def _forget(self, thread: str) -> None:
        """Drop script entries no live state can read again (memory stays bounded)."""
        p, s = f"p:{thread}", f"s:{thread}"
        if p in self.c.sends:
            forget_read(self.c.sends[p], self.search.live, lambda st: st.producer[p][1])
        if s in self.c.ops:
            forget_read(self.c.ops[s], self.search.live, lambda st: st.supervisor[s][1])

    # -- the Checker protocol -------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        if ev["event"] == "append" and not self.logs_append:
            raise Rejected(
                4,
                f"{show_event(ev)} — an append event in a trace whose header does not say"
                f" config.{LOGS_APPEND}: true (a trace logs every accepted send's append, or none)",
            )
        thread, kind = ev["thread"], ev["event"]
        if kind == "close":
            self._close_once(ev)
        if kind in MAILBOX_ITEM_EVENTS:
            self.ids.see(ev)  # rule 4: an item id is unique per trace (none accepted twice in flight)
        owed = self.executes_owed.get(thread)
        if owed is not None and (kind != "execute" or ev["mailbox"] != owed):
            # Whatever role the thread logs it in: the spec's roles are processes of their own.
            raise Rejected(
                1,
                f"{show_event(ev)} — {thread} logged schedule of mailbox {owed} and owes its execute "
                "before any other event of its own",
            )
        self.c, named = self.units.spec_event(self.search, self.c, ev)
        key = (ev["event"], ev["thread"])
        procs = self._procs.get(key)
        if procs is None:
            procs = self._processes(ev)
            if len(self._procs) >= PROCS_LIMIT:
                self._procs.clear()
            self._procs[key] = procs
        if self.logs_append and procs != [f"p:{ev['thread']}"]:
            self._append_first(ev)
        self._announce(named)
        try:
            self.search.step(named, procs)
        except NoMatch as none:
            raise Rejected(*why(self.c, self.units, self.logs_append, ev, named, procs, none)) from None
        if kind == "schedule":
            self.executes_owed[thread] = ev["mailbox"]
        elif kind == "execute":
            self.executes_owed.pop(thread, None)
        self._forget(thread)

    def finish(self, complete: bool) -> None:
        if not complete:
            return
        c = self.c
        if not self.search.reaches(lambda s: am.Done(c, s) and am.AllSettled(c, s)):
            owed = appends_owed(c, self.units, self.search.states) if self.logs_append else ""
            if owed:
                raise Rejected(4, f"the trace ends with the append of {owed} never logged")
            s, items = _least_waiting(c, self.search.states)
            raise Rejected(6, "the trace ends where the spec cannot stop: " + self._left(s, items))

    def _left(self, s: am.Vars, items: dict[int, list[Any]]) -> str:
        """Rule 6's two ways a message is left (docs/akka-mailbox.md): in an open mailbox nobody
        will run (a lost wakeup), or in a closed one no cleanUp emptied (the second review, F10)."""
        traced = self.units.traced
        by_fate: dict[bool, list[str]] = {False: [], True: []}
        for mb in self.units.in_trace_order(items):
            by_fate[s.closed[mb]].append(f"mailbox {traced(mb)}: {items[mb]}")
        words = (
            [f"messages never processed (lost wakeup): {'; '.join(by_fate[False])}"] if by_fate[False] else []
        )
        if by_fate[True]:
            words.append(
                "messages left in a closed mailbox, no cleanUp dead-lettered them: "
                + "; ".join(by_fate[True])
            )
        return "; ".join(words) or "a step is still owed"

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        c = self.c
        s, waiting = _least_waiting(c, self.search.states)
        traced = self.units.traced
        queued = {str(traced(mb)): waiting[mb] for mb in self.units.in_trace_order(waiting)}
        busy: dict[str, str] = {}
        for fn in (s.producer, s.worker, s.supervisor):
            for name, local in fn.items():
                if local[0] != am.IDLE:
                    busy[name[2:]] = f"{local[0]} mailbox {traced(am.Local(s, name)[1])}"
        phrases = pending_phrases("messages not yet processed", "mailbox", queued, busy)
        if s.executor:
            phrases.append(f"executor queue {[traced(mb) for mb in s.executor]}")
        return {"messages": queued, "threads": dict(sorted(busy.items()))}, phrases

    def describe(self) -> list[dict[str, Any]]:
        return shown_states(lambda s: am.Show(self.c, self._traced_state(s)), self.search.states)

    def _traced_state(self, s: am.Vars) -> am.Vars:
        """``s`` with every mailbox in the trace's numbers: what its words show."""
        per_mailbox = ("status", "queue", "sent", "processed", "last", "dead", "closed")
        return self.units.traced_state(s, per_mailbox, ("executor",), MAILBOX_ITEM)


def validate(
    config: Mapping[str, Any], events: Sequence[Mapping[str, Any]], *, complete: bool = False
) -> None:
    """Raise ``TraceRejected`` unless some behaviour of the akka-mailbox spec produces ``events``."""
    v = AkkaChecker(config)
    seq: int | None = None
    try:
        for ev in events:
            seq = ev.get("seq")
            v.step(dict(ev))
        seq = None
        v.finish(complete)
    except Rejected as rejected:
        where = f"seq {seq}: " if seq is not None else "at the end of the trace: "
        raise TraceRejected(seq, where + rejected.message, rejected.rule) from None


def without_append_events(
    config: Mapping[str, Any], events: Iterable[Mapping[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The same run as a trace of the format before ``append``: the header key and the ``append``
    events dropped, ``seq`` renumbered (what an older port logs of that interleaving)."""
    kept = [dict(e) for e in events if e["event"] != "append"]
    for seq, e in enumerate(kept, start=1):
        if "seq" in e:
            e["seq"] = seq
    return {k: v for k, v in config.items() if k != LOGS_APPEND}, kept


_MAILBOX = ("mailbox", is_count)

FORMAT = HEADER.format(
    DESIGN,
    __package__,
    {
        "send": (_MAILBOX, ("item", is_item), ("result", one_of("ok", "dead_letter"))),
        "schedule": (_MAILBOX,),
        "execute": (_MAILBOX,),
        "run_begin": (_MAILBOX,),
        "process": (_MAILBOX, ("item", is_item)),
        "run_end": (_MAILBOX, ("processed", is_count)),
        "suspend": (_MAILBOX,),
        "resume": (_MAILBOX,),
        "close": (_MAILBOX,),
        "dead_letter": (_MAILBOX, ("items", is_items)),
        "append": (_MAILBOX, ("item", is_item)),
    },
    make=AkkaChecker,
    rules=AKKA_RULES,
    completion="the end of its run (pass --complete when the run is over)",
    optional={"run_end": (("status", is_count),)},
)


def _refusal(config: dict[str, Any], events: list[dict[str, Any]], complete: bool) -> str | None:
    """None when the validator allows a failing run's trace, else its words (``verify_rows.Judge``)."""
    try:
        validate(config, events, complete=complete)
    except TraceRejected as exc:
        return exc.message
    return None


def rows(quick: bool) -> Iterator[Any]:
    """Rows of ``lanecheck verify`` for this design (``verify_rows.rows``, with this validator)."""
    return verify_rows.rows(quick, _refusal)
