"""Words for the akka-mailbox checker's refusals (``trace.AkkaChecker``): which rule of the format
an event breaks, and why no behaviour of the spec takes it, in the trace's own mailbox numbers."""

from __future__ import annotations

from collections.abc import Iterable

from model_checks.conformance.search import Miss, NoMatch
from model_checks.conformance.search_binding import UnitNames
from model_checks.conformance.search_words import misses_logged
from model_checks.conformance.streamed import Event
from model_checks.conformance.wording import show_event
from spec import akka_mailbox as am

# The rules of the akka-mailbox format (docs/akka-mailbox.md, "Rules a validator enforces").
AKKA_RULES: dict[int, str] = {
    1: "one reservation: schedule only on an open, unscheduled word; each schedule followed by its execute",
    2: "the executor is FIFO: run_begins in execute order",
    3: "one runner: process/run_end on the thread of the run_begin; at most max(throughput, 1) "
    "processes per run; `processed` is their count",
    4: "FIFO per mailbox, nothing twice, nothing invented (and with config.logs_append, each ok send's"
    " append once, by its sender before its next event, before the message is processed)",
    5: "closed is absorbing: one close per mailbox, no send ok after close, and a logged `status` word"
    " is the spec's",
    6: "a complete trace ends with every ok message processed or dead-lettered (else a lost wakeup,"
    " or a message left in a closed mailbox)",
    7: "a trace is judged as a prefix of some behaviour of the spec",
}

RULE_OF_EVENT = {
    "send": 5,
    "schedule": 1,
    "execute": 1,
    "run_begin": 2,
    "process": 4,
    "run_end": 3,
    "suspend": 5,
    "resume": 5,
    "close": 5,
    "dead_letter": 6,
    "append": 4,
}
HINT = {
    "schedule": "setAsScheduled succeeds only on an open, unscheduled word",
    "execute": "execute follows the same thread's schedule",
    "process": "a message is processed only inside a run, in send order, within max(throughput, 1)",
    "send": "a send to a closed mailbox is a dead letter",
    "run_begin": "a run begins only with the oldest mailbox the executor queue holds",
    "run_end": "setAsIdle ends a run that began on this thread",
    "dead_letter": "cleanUp follows the supervisor's close, or a sender's read of Closed after its"
    " append, and moves what is queued",
    "append": "an append follows its sender's send ok, once, before that sender's next event",
}


def status_word(units: UnitNames, m: Miss) -> str:
    """The status word of the state a near miss comes from, for the mailbox it logs (given in
    the trace's numbers: ``UnitNames.traced_miss``)."""
    mb = m.fields.get("mailbox")
    named = units.spec_unit(mb) if type(mb) is int else None
    return am.ShowWord(m.state.status[named]) if named is not None else ""


def appends_owed(
    c: am.Constants, units: UnitNames, states: Iterable[am.Vars], thread: str | None = None
) -> str:
    """The sends (of ``thread``, or of any) whose append every state still owes, worded; empty
    when some state owes none. Only for a trace that logs ``append``."""
    owed: set[str] | None = None
    for s in states:
        here = {
            f"{p[2:]}'s send of {send[1]!r} to mailbox {units.traced(mb)}"
            for p, (pc, k, mb) in s.producer.items()
            if pc == am.P_APPEND
            and (thread is None or p == f"p:{thread}")
            and (send := c.send_of(p, k)) is not None
        }
        owed = here if owed is None else owed & here
        if not owed:
            return ""
    return ", ".join(sorted(owed or ()))


def append_words(
    c: am.Constants, units: UnitNames, ev: Event, procs: list[str], states: list[am.Vars]
) -> str | None:
    """Why an event is refused when an ``append`` is missing, repeated or misplaced. Only for a
    trace that logs ``append``: otherwise an append not yet taken is one the search may still place."""
    kind, thread = ev["event"], ev["thread"]
    owed = appends_owed(c, units, states, thread)
    if owed and kind != "append":
        return f"{thread} logs {kind} before the append of {owed} (an ok send's append comes first)"
    item = ev.get("item")
    if kind == "process" and any(
        pc == am.P_APPEND and (send := c.send_of(p, k)) is not None and send[1] == item
        for s in states
        for p, (pc, k, _) in s.producer.items()
    ):
        return f"{item!r} is processed before its append"
    if kind == "append" and not any(s.producer[p][0] == am.P_APPEND for s in states for p in procs):
        return (
            f"{thread} owes no append here: {HINT['append']}"
            f" (a second append of a message, or one before its send)"
        )
    return None


# A sender's pcs from its send ok to the end of its registration: it owes a step of its own (the
# append is one only where the trace does not log it: else ``append_words`` says it first).
REGISTERING = frozenset({am.P_APPEND, am.P_RECHECK, am.R_CAS, am.R_EXECUTE})


def registration_owed(units: UnitNames, ev: Event, procs: list[str], states: Iterable[am.Vars]) -> str | None:
    """The words of a sender's next send while, in every state, its last send still owes its
    registration (its re-read after the append found the word Open: schedule and execute follow
    before its next event). Not a closed mailbox: the third outside review's T12."""
    if ev["event"] != "send":
        return None
    mailboxes: set[int] = set()
    for s in states:
        for p in procs:
            pc, mb = am.Local(s, p)
            if pc not in REGISTERING or mb is None:
                return None
            mailboxes.add(mb)
    if not mailboxes:
        return None
    shown = ", ".join(str(units.traced(mb)) for mb in sorted(mailboxes))
    return (
        f"{ev['thread']} logs another send while its last send, to mailbox {shown}, still owes its "
        "registration: its read after the append finds the word Open and unscheduled, so it logs "
        "schedule (setAsScheduled) and execute before any other event of its own (else a lost wakeup)"
    )


def why(
    c: am.Constants,
    units: UnitNames,
    logs_append: bool,
    ev: Event,
    named: Event,
    procs: list[str],
    none: NoMatch,
) -> tuple[int, str]:
    """Why no behaviour takes ``ev`` (``named``: the same event in the spec's mailbox numbers)."""
    kind = ev["event"]
    head = show_event(ev)
    rule = RULE_OF_EVENT.get(kind, 1)
    if not procs:
        if kind == "append":
            return rule, f"{head} — {ev['thread']} has logged no send: {HINT['append']}"
        return rule, f"{head} — {ev['thread']} has not acted in a role that logs {kind}"
    about_append = append_words(c, units, ev, procs, none.states) if logs_append else None
    if about_append is not None:
        return 4, f"{head} — {about_append}"
    misses = [units.traced_miss(m) for m in none.misses if m.differing]
    if misses:
        if kind == "run_end" and all(m.differing == ("status",) for m in misses):
            rule = 5
        return rule, f"{head} — {misses_logged(misses, lambda m: status_word(units, m), 'status word ')}"
    owed = registration_owed(units, ev, procs, none.states)
    if owed is not None:
        return 1, f"{head} — {owed}"  # rule 1: the schedule and its execute are what is missing
    mb = named["mailbox"]
    words = sorted({am.ShowWord(s.status[mb]) for s in none.states})
    hint = HINT.get(kind, "no behaviour of the spec takes this step here")
    return rule, f"{head} — {hint} (status word could be: {', '.join(words) or '-'})"
