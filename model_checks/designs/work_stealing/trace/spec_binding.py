"""What a work-stealing trace's events are to ``spec/work_stealing_open.py``: each event as the spec
step's fields and the process that takes it, the program counters the search keys its internal
steps by, the growth of every state when a task or an array is revealed, and the rule a step no
behaviour takes breaks (``spec_search.StealingSearch`` uses them; docs/work-stealing-trace.md,
"The spec engine")."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, NamedTuple

from model_checks.conformance.search import NoMatch
from model_checks.conformance.streamed import Event, FieldCheck, one_of
from model_checks.conformance.wording import show_event
from model_checks.designs import internal_at
from model_checks.designs.work_stealing.trace.fields import (
    MODES,
    OUTCOMES,
    STEAL_RESULTS,
    STOP_RESULTS,
    SUBMIT_RESULTS,
    TAKE_RESULTS,
    is_task,
)
from spec import work_stealing_open as wo
from spec.language import Function
from spec.work_stealing_state import Vars

CLIENT = "client"  # the spec's client: every thread that is not a worker, and every stop event
WORKER_EVENTS = frozenset({"push", "resize", "take", "steal", "park", "run", "done"})
SPEC_RESULT = {"ok": "success", "empty": "empty", "abort": "abort"}

# The program counters at which each internal step can fire (its first guard): the search tries
# a step only there: the spec's ``at=``, and the client's (the spec declares no program counter
# for it; ``local_pc`` reads its pc). Tests check the table against the spec.
ENABLED_AT = internal_at(wo.OPEN)
ENABLED_AT.update(
    NotifyAfterSubmit=frozenset({"notify"}),
    NotifyNobodyAfterSubmit=frozenset({"notify"}),
    RaiseFlag=frozenset({wo.DISCARD}),
    NothingQueued=frozenset({wo.FLAGGED}),
    Shutdown=frozenset({wo.DRAIN, wo.DISCARDING}),
)

# Every internal step is deferred (``search.TraceSearch``): taken only when an event needs it.
# Each moves right past every step of another process but those named (checked on the spec's
# reachable states by ``conformance.movers``: tests/work_stealing/test_spec_deferred.py).
DEFERRED: dict[str, frozenset[str]] = {
    "Admit": frozenset({"RaiseFlag"}),
    "GiveUp": frozenset(),
    "Keep": frozenset(),
    "NothingQueued": frozenset(),
    "NotifyAfterPush": frozenset({"NotifyNobodyAfterSubmit", "RecheckFindsWork", "Unpark"}),
    "NotifyAfterSubmit": frozenset({"NotifyNobody", "RecheckFindsWork", "Settle", "Unpark"}),
    "NotifyNobody": frozenset({"QuietRound", "Register"}),
    "NotifyNobodyAfterSubmit": frozenset({"QuietRound", "Register"}),
    "PassInjector": frozenset(),
    "ProgramPush": frozenset({"Steal"}),
    "PushBegin": frozenset({"Steal"}),
    "PushWrite": frozenset(),
    "QuietRound": frozenset(
        {"DiscardHeld", "NotifyAfterPush", "NotifyAfterSubmit", "Push", "Settle", "Shutdown", "Submit"}
    ),
    "RaiseFlag": frozenset({"SeesDiscarding"}),
    "RecheckFindsNothing": frozenset(
        {"DiscardHeld", "NotifyAfterPush", "NotifyAfterSubmit", "Push", "Settle", "Shutdown", "Submit"}
    ),
    "RecheckFindsWork": frozenset(
        {
            "DiscardInjector",
            "DiscardQueued",
            "NotifyNobody",
            "NotifyNobodyAfterSubmit",
            "PopInjector",
            "PopInjectorFirst",
            "Steal",
            "TakeBegin",
        }
    ),
    "Register": frozenset({"DiscardHeld", "NotifyAfterPush", "NotifyAfterSubmit", "Settle", "Shutdown"}),
    "Resume": frozenset(),
    "SeesDiscarding": frozenset(),
    "Settle": frozenset(
        {"NotifyNobodyAfterSubmit", "RecheckFindsWork", "Register", "Resume", "Shutdown", "StopEnd", "Unpark"}
    ),
    "Shutdown": frozenset({"QuietRound", "RecheckFindsWork", "Register", "Unpark"}),
    "SkipInjector": frozenset(),
    "StealBegin": frozenset({"TakeLast"}),
    "StealFirst": frozenset(),
    "StealRead": frozenset(),
    "StealSeesWork": frozenset({"TakeBegin"}),
    "TakeBegin": frozenset({"DiscardHeld", "QuietRound", "RecheckFindsNothing", "Settle", "StealEmpty"}),
    "TakeContended": frozenset({"Steal"}),
    "Wait": frozenset({"DiscardHeld", "Settle"}),
}

# The pcs each deferred action leaves its process at (checked like ``DEFERRED``). With the spec's
# ``at=`` on its logged actions the search sees which of a worker's internal steps can lead to the
# pc its event fires from, so an event pulls in no step that cannot come before it.
MOVES_TO: dict[str, frozenset[Hashable]] = {
    "Admit": frozenset({wo.ADMITTED}),
    "GiveUp": frozenset({wo.SLEEPY}),
    "Keep": frozenset({wo.FIND}),
    "NothingQueued": frozenset({wo.DISCARDING}),
    "NotifyAfterPush": frozenset({wo.BODY}),
    "NotifyAfterSubmit": frozenset({"submit"}),  # the client's pc after Submit
    "NotifyNobody": frozenset({wo.BODY}),
    "NotifyNobodyAfterSubmit": frozenset({"submit"}),
    "PassInjector": frozenset({wo.STEAL}),
    "ProgramPush": frozenset({wo.GROW, wo.WRITE}),
    "PushBegin": frozenset({wo.GROW, wo.WRITE}),
    "PushWrite": frozenset({wo.PUBLISH}),
    "QuietRound": frozenset({wo.PARKING}),
    "RaiseFlag": frozenset({wo.FLAGGED}),
    "RecheckFindsNothing": frozenset({wo.PARKING}),
    "RecheckFindsWork": frozenset({wo.FIND}),
    "Register": frozenset({wo.RECHECK}),
    "Resume": frozenset({wo.BODY}),
    "SeesDiscarding": frozenset({wo.DISCARDS}),
    "Settle": frozenset({wo.FIND}),
    "Shutdown": frozenset({wo.DRAIN, wo.DISCARDING}),
    "SkipInjector": frozenset({wo.FIND}),
    "StealBegin": frozenset({wo.STEAL_BOTTOM}),
    "StealFirst": frozenset({wo.STEAL}),
    "StealRead": frozenset({wo.STEAL_CAS}),
    "StealSeesWork": frozenset({wo.STEAL_READ}),
    "TakeBegin": frozenset({wo.TAKE}),
    "TakeContended": frozenset({wo.TAKE_LAST}),
    "Wait": frozenset({wo.FIND}),
}

# The steps of deque programs (``OpenConstants.deques``): in a pool's trace they are enabled nowhere;
# and a pool's free order of looks, enabled nowhere in deque programs.
PROGRAM_STEPS = frozenset({"ProgramPush", "StealFirst", "SkipInjector", "Keep"})
POOL_STEPS = frozenset({"PassInjector", "QuietRound"})


def enabled_at(deques: bool) -> dict[str, frozenset[Hashable]]:
    """``ENABLED_AT`` for a trace of deque programs or (``deques`` false) of a pool."""
    off = POOL_STEPS if deques else PROGRAM_STEPS
    return {name: frozenset() if name in off else pcs for name, pcs in ENABLED_AT.items()}


def local_pc(s: Vars, process: Hashable) -> Hashable:
    return s.client[0] if process == CLIENT else s.worker[process].pc  # type: ignore[index]


def spec_event(ev: Event) -> dict[str, Any]:
    """The fields the spec's step logs for this (well-formed) event, under the spec's event name."""
    kind = ev["event"]
    if kind == "take":
        result = ev["result"]
        if result == "ok":
            return {"event": "take", "task": ev["task"], "result": "success"}
        return {"event": "take", "result": "empty", "lost_race": result == "lost"}
    if kind == "steal":
        victim, result = ev["victim"], ev["result"]
        out: dict[str, Any] = {"event": "steal", "result": SPEC_RESULT[result]}
        if victim == "injector":
            out["event"] = "pop"  # the injector is a locked queue: WorkStealing's PopInjector
        else:
            out["victim"] = f"w{victim}"
        if result == "ok":
            out["task"] = ev["task"]
        return out
    if kind == "push":
        return {"event": "push", "task": ev["task"], "size": ev["size"]}
    if kind == "resize":
        return {"event": "resize", "capacity": ev["capacity"]}
    if kind in ("run", "done", "submit"):
        return {"event": kind, "task": ev["task"]}
    if kind in ("stop_begin", "stop_end"):
        return {"event": kind, "mode": ev["mode"]}
    if kind == "discard":
        return {"event": "discard", "tasks": ev["tasks"]}
    return {"event": kind}  # park, unpark


def process(ev: Event, workers: frozenset[str]) -> str:
    """The spec process that takes the event: a worker's own steps are its; ``unpark`` is the woken
    worker's (the reference logs it on the waker's thread); a discard is a worker's when a worker
    logs it (a task it held), else the client's, as every submit and stop event."""
    kind = ev["event"]
    if kind in WORKER_EVENTS or kind == "unpark":
        return f"w{ev['worker']}"
    if kind == "discard" and ev["thread"] in workers:
        return str(ev["thread"])
    return CLIENT


# -- growing the states as the trace reveals tasks and arrays ----------------------------------


def _grown(f: Function[Any, Any], keys: list[Any], value: Any) -> Function[Any, Any]:
    return Function((*f.domain(), *keys), (*f.values(), *([value] * len(keys))))


def with_task(task: Any) -> Any:
    """A state extension: ``task`` has not run and is not done (every behaviour so far agrees)."""

    def extend(s: Vars) -> Vars:
        return s._replace(ran=_grown(s.ran, [task], 0), done=_grown(s.done, [task], False))

    return extend


def with_generation(c: wo.OpenConstants, gen: int) -> Any:
    """A state extension: array ``gen`` of every worker, its slots empty (nobody can reach it yet)."""
    locs = [("slot", w, gen, i) for w in c.worker_names() for i in range(c.size(gen))]

    def extend(s: Vars) -> Vars:
        return s._replace(mem=s.mem._replace(cells=_grown(s.mem.cells, locs, None)))

    return extend


# -- words ----------------------------------------------------------------------------------------

show = show_event


def why_no_step(ev: Event, none: NoMatch, stopped: bool) -> tuple[int, str]:
    """The rule (as the fast model numbers it) of an event no behaviour of the spec takes, and why."""
    kind = ev["event"]
    rule = {"resize": 6, "run": 4, "done": 4, "park": 7, "unpark": 7, "submit": 8 if stopped else 1}.get(
        kind, 3
    )
    if kind in ("stop_begin", "discard", "stop_end"):
        rule = 8
    if kind == "steal" and ev["victim"] == ev["worker"]:
        rule = 5
    elif kind == "steal" and ev["victim"] == "injector" and ev["result"] == "ok":
        rule = 2
    if not none.misses:
        where = sorted({str(local_pc(s, process(ev, frozenset()))) for s in none.states})
        if kind == "push" and wo.GROW in where:
            # The push finds its buffer full: its grow (a logged resize) comes first (rule 6, as the
            # fast model numbers a push that wraps its buffer; the third outside review's T4 traces).
            return 6, f"{show(ev)} — the worker's buffer is full: a resize comes before this push"
        return rule, f"{show(ev)} — no step of the spec logs {kind} here (it could be at: {', '.join(where)})"
    # One suggestion per step the spec could take here: its fields together (result and task).
    differing = sorted(
        {
            " with ".join(
                in_trace_words(k, m.fields[k]) for k in sorted(m.differing, key=lambda k: k != "result")
            )
            for m in none.misses
        }
    )
    if kind == "push" and all(m.differing == ("size",) for m in none.misses):
        rule = 6
    return rule, f"{show(ev)} — the spec's step here logs " + "; or ".join(differing)


class DiscardContext(NamedTuple):
    """What the words of a refused ``discard`` read: the tasks introduced, discarded, run so far,
    and the Stop (None before one, its mode, or "ended")."""

    known: frozenset[Any]
    discarded: frozenset[Any]
    ran: frozenset[Any]
    stop: str | None


def why_not_discarded(ev: Event, task: Any, at: DiscardContext) -> str:
    """Why no behaviour drops ``task`` (None: an empty list) where the trace's ``discard`` lists it."""
    what = "no tasks" if task is None else repr(task)
    if task is not None and task not in at.known:
        why = "which was never introduced (no submit ok or push names it)"
    elif at.stop is None:
        why = "but no stop began: only stop(discard) drops tasks"
    elif at.stop == "drain":
        why = "but stop(drain) began: only stop(discard) drops tasks"
    elif at.stop == "ended":
        why = "but the stop already ended"
    elif task in at.discarded:
        why = "which was discarded before (each task at most once)"
    elif task in at.ran:
        why = "which already ran (only a task that has not run is discarded)"
    else:
        why = "which is neither in the injector nor held by the worker that took it: nothing drops it here"
    return f"{show(ev)} — discard lists {what}, {why}"


TRACE_RESULT = {v: k for k, v in SPEC_RESULT.items()}


def in_trace_words(field: str, value: Any) -> str:
    """A spec step's field as the trace format writes it (``spec_event`` the other way): a port's
    author reads the suggestion as a field to log (the third outside review, T10)."""
    if field == "lost_race":  # the spec's take that comes back without a task
        return "result = 'lost'" if value else "result = 'empty' (no race was lost: not lost)"
    if field == "result":
        return f"result = {TRACE_RESULT.get(value, value)!r}"
    if field == "victim" and isinstance(value, str) and value.startswith("w"):
        return f"victim = {value[1:]}"
    return f"{field} = {value!r}"


def _task_or_null(v: Any) -> bool:
    return v is None or is_task(v)


def _worker(v: Any) -> bool:
    return type(v) is int and v >= 0


def _victim(v: Any) -> bool:
    return v == "injector" or _worker(v)


def _tasks(v: Any) -> bool:
    return type(v) is list and all(is_task(x) for x in v)


def _count(v: Any) -> bool:
    return type(v) is int and v >= 1


def _words(values: frozenset[str]) -> FieldCheck:
    return one_of(*sorted(values))


# Each event's fields, one by one (``fields.checks`` judges their combination and the bounds).
FIELDS: dict[str, tuple[tuple[str, FieldCheck], ...]] = {
    "submit": (("task", _task_or_null), ("result", _words(SUBMIT_RESULTS))),
    "push": (("worker", _worker), ("task", is_task), ("size", _count)),
    "resize": (("worker", _worker), ("capacity", _count)),
    "take": (("worker", _worker), ("task", _task_or_null), ("result", _words(TAKE_RESULTS))),
    "steal": (
        ("worker", _worker),
        ("victim", _victim),
        ("task", _task_or_null),
        ("result", _words(STEAL_RESULTS)),
    ),
    "park": (("worker", _worker),),
    "unpark": (("worker", _worker),),
    "run": (("worker", _worker), ("task", is_task)),
    "done": (("worker", _worker), ("task", is_task), ("outcome", _words(OUTCOMES))),
    "join": (("task", is_task),),
    "stop_begin": (("mode", _words(MODES)),),
    "discard": (("tasks", _tasks),),
    "stop_end": (("mode", _words(MODES)), ("result", _words(STOP_RESULTS))),
}
