"""The akka-mailbox spec's options for the streaming search (``search.TraceSearch``): where its
internal actions can be enabled, which of them are deferred, and what each step is about.

Every internal step of the spec is one read (of a mailbox's status word or queue) or a write of
one mailbox, by one process about the mailbox its program counter names: a step about another
mailbox moves past it. The unlogged tails of independent threads (a worker's re-registration
after ``run_end``, a sender's re-check after its append) then need not multiply the live set
(docs/conformance.md, "Why some Akka interleavings cost 10-50x more"): each is deferred until an
event about its mailbox needs it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from model_checks.designs import internal_at
from spec import akka_mailbox as am
from spec.language import Action, Emitted, Spec

APPEND_EVENT = "append"


def WithoutAppendEvents(spec: Spec) -> Spec:
    """``spec`` (the design or a mutant) as a trace without ``append`` events sees it: every step
    that logs ``append`` internal, with the same guard and effect. The trace format before
    ``append`` existed, which ports may still write (docs/akka-mailbox.md, *Trace events*)."""

    def unlogged(action: Action) -> Action:
        logged = action.fn

        def step(c: am.Constants, s: am.Vars, *args: object) -> object:
            r = logged(c, s, *args)
            return r.state if type(r) is Emitted else r

        step.__name__ = action.name
        return replace(action, fn=step, event=None)

    actions = tuple(unlogged(a) if a.event == APPEND_EVENT else a for a in spec.actions)
    return replace(spec, actions=actions)


SPEC_WITHOUT_APPEND_EVENTS = WithoutAppendEvents(am.SPEC)

# The program counters at which each internal action of the spec can be enabled: its ``at=`` (its
# first guard); the search calls an action only there. tests/akka checks this against the spec.
# ``Enqueue`` is internal only in the format without ``append`` (``WithoutAppendEvents``).
ENABLED_AT = internal_at(SPEC_WITHOUT_APPEND_EVENTS)

# Every internal action is deferred: each moves right past every step of another process but those
# named here *about the same mailbox* (``unit``; checked on the spec's reachable states by
# ``conformance.movers``: tests/akka/test_deferred_units.py).
DEFERRED: dict[str, frozenset[str]] = {
    "SendSeesUnscheduled": frozenset({"Close", "SetAsScheduled", "Suspend"}),
    "SendSeesScheduled": frozenset({"Close", "Resume", "SetAsIdle"}),
    "SendSeesClosed": frozenset(),
    "SenderCleanUpEmpty": frozenset({"Enqueue"}),
    "RegisterSeesOpen": frozenset({"Close", "Suspend"}),
    "RegisterSeesBlocked": frozenset({"Resume"}),
    "RegisterSeesMessages": frozenset({"CleanUp", "Process", "SenderCleanUp"}),
    "RegisterSeesEmpty": frozenset({"Enqueue"}),
    "AlreadyScheduled": frozenset({"SetAsIdle"}),
    "RunSeesOpen": frozenset({"Close"}),
    "RunSeesClosed": frozenset(),
    "ShouldProcessYes": frozenset({"Close", "Suspend"}),
    "ShouldProcessNo": frozenset({"Resume"}),
    "DequeueEmpty": frozenset({"Enqueue"}),
    "CleanUpEmpty": frozenset({"Enqueue"}),
}
# Without ``append`` events the append is internal too (``WithoutAppendEvents``), and deferred the
# same way: it does not move past another append to its mailbox (the two orders make two queues),
# nor past the steps that read what it wrote (a message processed, moved by cleanUp, or seen by a
# registration). Until an event about its mailbox needs it, a sender's append is one pending step,
# not one more order of the appends held in every state (7 concurrent senders: 73 s before).
DEFERRED_WITHOUT_APPEND_EVENTS: dict[str, frozenset[str]] = {
    **DEFERRED,
    "Enqueue": frozenset(
        {"CleanUp", "Enqueue", "Process", "RegisterSeesMessages", "SendToClosed", "SenderCleanUp"}
    ),
}
# The pcs each internal action leaves its process at (checked on every reachable state like
# ``DEFERRED``: tests/akka/test_deferred_units.py). With them the search sees which of a process's
# deferred steps can lead to one an event does not move past: a sender owing its re-check after an
# append can reach no queue read, so a ``process`` no longer expands every such sender (each may
# or may not have re-checked: 2^senders states, pruned back to one, at every message).
MOVES_TO: dict[str, frozenset[str]] = {
    "SendSeesUnscheduled": frozenset({am.R_CAS}),
    "SendSeesScheduled": frozenset({am.IDLE}),
    "SendSeesClosed": frozenset({am.P_CLEANUP}),
    "SenderCleanUpEmpty": frozenset({am.IDLE}),
    "RegisterSeesOpen": frozenset({am.R_CAS, am.R_QUEUE}),
    "RegisterSeesBlocked": frozenset({am.IDLE}),
    "RegisterSeesMessages": frozenset({am.R_CAS}),
    "RegisterSeesEmpty": frozenset({am.IDLE}),
    "AlreadyScheduled": frozenset({am.IDLE}),
    "RunSeesOpen": frozenset({am.W_SHOULD}),
    "RunSeesClosed": frozenset({am.W_SET_IDLE}),
    "ShouldProcessYes": frozenset({am.W_DEQUEUE}),
    "ShouldProcessNo": frozenset({am.W_SET_IDLE}),
    "DequeueEmpty": frozenset({am.W_SET_IDLE}),
    "CleanUpEmpty": frozenset({am.IDLE}),
}
MOVES_TO_WITHOUT_APPEND_EVENTS: dict[str, frozenset[str]] = {**MOVES_TO, "Enqueue": frozenset({am.P_RECHECK})}
UNIT_FIELD = "mailbox"  # every event names the mailbox it is about
# Per kind of process (its function in the state), the item of its local tuple naming its mailbox
# (``am.Local``'s): what ``mailbox_of`` reads, read by the search with the pcs.
MAILBOX_ITEM: dict[str, int] = {"producer": 2, "worker": 1, "supervisor": 2}


def local_pc(s: am.Vars, process: Any) -> str:
    """A process's program counter (the search's ``local``)."""
    return am.Local(s, process)[0]


def mailbox_of(s: am.Vars, process: Any) -> Hashable:
    """The mailbox a process's step is about (the search's ``unit``; None when idle)."""
    return am.Local(s, process)[1]


__all__ = [
    "APPEND_EVENT",
    "DEFERRED",
    "DEFERRED_WITHOUT_APPEND_EVENTS",
    "ENABLED_AT",
    "MAILBOX_ITEM",
    "MOVES_TO",
    "MOVES_TO_WITHOUT_APPEND_EVENTS",
    "SPEC_WITHOUT_APPEND_EVENTS",
    "UNIT_FIELD",
    "WithoutAppendEvents",
    "local_pc",
    "mailbox_of",
]
