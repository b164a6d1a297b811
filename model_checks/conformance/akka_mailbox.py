"""Trace conformance for the akka-mailbox design: search the spec's states constrained by a trace.

Like ``spec_engine`` does for work-lane, the validator keeps the *set* of spec
states some behaviour could be in after each event, closed under the spec's
internal actions (status reads, queue reads, refused CASes), and matches each
event against the labelled actions of the process its thread is bound to; the
event's fields must equal the spec's.

Binding: a thread that logs ``send`` is a producer whose script is its sends,
in order (``p:<thread>``); a thread that logs ``run_begin`` is a worker
(``w:<thread>``); a thread that logs ``suspend``/``resume``/``close`` is a
supervisor whose script is those operations (``s:<thread>``). A thread with two
roles (``main`` sending, then closing at shutdown) gets one process per role,
which lets the spec interleave that thread's own steps a little more freely than
the thread did (lenient, never stricter). ``schedule`` and ``execute`` may come
from any role of the thread. The number of mailboxes is the largest index seen.

``complete=True`` judges a trace of a finished run: it must end where the spec
may stop — every script done, every thread idle, the executor queue empty and
every message processed or dead-lettered. Otherwise the trace is judged as a
prefix (accepted if some behaviour of the spec begins with it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec import akka_mailbox as am
from spec.language import Action, Emitted, Spec

Event = Mapping[str, Any]


@dataclass(frozen=True)
class TraceConstants(am.Constants):
    """The spec's constants with the processes and their scripts read from a trace."""

    sends: Mapping[str, tuple[tuple[int, Any], ...]] = field(default_factory=dict)
    ops: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    worker_threads: tuple[str, ...] = ()

    def producer_names(self) -> tuple[str, ...]:
        return tuple(f"p:{t}" for t in self.sends)

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w:{t}" for t in self.worker_threads)

    def supervisor_names(self) -> tuple[str, ...]:
        return tuple(f"s:{t}" for t in self.ops)

    def send_of(self, producer: str, k: int) -> tuple[int, Any] | None:
        script = self.sends[producer[2:]]
        return script[k] if k < len(script) else None

    def op_of(self, supervisor: str, k: int) -> tuple[str, int] | None:
        script = self.ops[supervisor[2:]]
        return script[k] if k < len(script) else None


class TraceRejected(Exception):
    """No behaviour of the spec produces this trace: ``seq`` names the first event none allows."""

    def __init__(self, seq: int | None, message: str) -> None:
        super().__init__(message)
        self.seq = seq
        self.message = message


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
    "dead_letter": ("s",),
}

_MISSING = object()


def constants_of(config: Mapping[str, Any], events: Sequence[Event]) -> TraceConstants:
    sends: dict[str, list[tuple[int, Any]]] = {}
    ops: dict[str, list[tuple[str, int]]] = {}
    workers: list[str] = []
    top = 0
    for ev in events:
        kind, thread = ev["event"], str(ev["thread"])
        if kind not in ROLE_OF_EVENT:
            raise TraceRejected(ev.get("seq"), f"seq {ev.get('seq')}: unknown event {kind!r}")
        top = max(top, int(ev["mailbox"]) + 1)
        if kind == "send":
            sends.setdefault(thread, []).append((int(ev["mailbox"]), ev["item"]))
        elif kind in ("suspend", "resume", "close"):
            ops.setdefault(thread, []).append((kind, int(ev["mailbox"])))
        elif kind == "run_begin" and thread not in workers:
            workers.append(thread)
    return TraceConstants(
        mailboxes=max(top, 1),
        workers=max(len(workers), 1),
        throughput=int(config["throughput"]),
        sends={t: tuple(s) for t, s in sends.items()},
        ops={t: tuple(o) for t, o in ops.items()},
        worker_threads=tuple(workers) or ("w0",),
    )


class AkkaMailboxValidator:
    def __init__(self, config: Mapping[str, Any], events: Sequence[Event], spec: Spec = am.SPEC) -> None:
        self.c = constants_of(config, events)
        self.events = events
        assert spec.init_fn is not None
        self.internal = [a for a in spec.actions if a.event is None]
        self.labelled: dict[str, list[Action]] = {}
        for a in spec.actions:
            if a.event is not None:
                self.labelled.setdefault(a.event, []).append(a)
        self.invariants = [inv.fn for inv in spec.invariants]
        self.states: set[am.Vars] = self.closure(set(spec.init_fn(self.c)))

    def processes(self, action: Action) -> tuple[Hashable, ...]:
        return tuple(action.domains[0](self.c))

    def closure(self, states: set[am.Vars]) -> set[am.Vars]:
        seen = set(states)
        frontier = list(states)
        c = self.c
        while frontier:
            s = frontier.pop()
            for action in self.internal:
                for p in self.processes(action):
                    nxt = action.fn(c, s, p)
                    if nxt is not None and nxt not in seen:
                        seen.add(nxt)
                        frontier.append(nxt)
        return seen

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], str(ev["thread"])
        procs = {f"{role}:{thread}" for role in ROLE_OF_EVENT[kind]}
        out: set[am.Vars] = set()
        c = self.c
        for s in self.states:
            for action in self.labelled.get(kind, ()):
                fn: Callable[..., Any] = action.fn
                for p in self.processes(action):
                    if p not in procs:
                        continue
                    r = fn(c, s, p)
                    if type(r) is not Emitted:
                        continue
                    if any(ev.get(k, _MISSING) != v for k, v in r.fields.items()):
                        continue
                    if any(inv(c, r.state) is not None for inv in self.invariants):
                        continue
                    out.add(r.state)
        if not out:
            raise TraceRejected(ev.get("seq"), f"seq {ev.get('seq')}: {_show(ev)} — {self._why(ev)}")
        self.states = self.closure(out)

    def _why(self, ev: Event) -> str:
        kind = ev["event"]
        mb = ev.get("mailbox")
        words = sorted({am.ShowWord(s.status[mb]) for s in self.states}) if mb is not None else []
        hint = {
            "schedule": "setAsScheduled succeeds only on an open, unscheduled word",
            "process": "a message is processed only inside a run, in send order, within max(throughput, 1)",
            "send": "a send to a closed mailbox is a dead letter",
            "run_begin": "a run begins only with a mailbox the executor queue holds",
            "run_end": "setAsIdle ends a run that began on this thread",
        }.get(kind, "no behaviour of the spec takes this step here")
        return f"{hint} (status word could be: {', '.join(words) or '-'})"

    def finish(self, complete: bool) -> None:
        if not complete:
            return
        c = self.c
        if not any(am.Done(c, s) and am.AllSettled(c, s) for s in self.states):
            left = min(self.states, key=lambda s: sum(len(q) for q in s.queue.values()))
            items = {mb: [i for _, i in left.queue[mb]] for mb in am.Mailboxes(c) if left.queue[mb]}
            raise TraceRejected(
                None,
                "the trace ends where the spec cannot stop: "
                + (
                    f"messages {items} are never processed (lost wakeup)" if items else "a step is still owed"
                ),
            )


def validate(config: Mapping[str, Any], events: Sequence[Event], *, complete: bool = False) -> None:
    """Raise ``TraceRejected`` unless some behaviour of the akka-mailbox spec produces ``events``."""
    v = AkkaMailboxValidator(config, events)
    for ev in events:
        v.step(ev)
    v.finish(complete)


def _show(ev: Event) -> str:
    fields = {k: v for k, v in ev.items() if k not in ("seq", "thread", "event")}
    return f"{ev['thread']} {ev['event']} {fields}"


def rows(quick: bool) -> Any:
    """Rows of ``lanecheck verify`` for this design's reference: harness runs and trace conformance.

    A provider in the sense of ``model_checks.verify`` (``rows(quick) -> Iterator[VerifyRow]``).
    """
    import time

    from model_checks.harness import Options, check
    from model_checks.mutants.akka_mailbox_reference import REFERENCE_MUTANTS, program
    from model_checks.verify import VerifyRow
    from reference.akka_mailbox import Dispatcher

    started = time.perf_counter()
    scenario = am.Constants(
        mailboxes=2,
        workers=1,
        throughput=1,
        script=((0, 0, 1),),
        supervise=((("suspend", 0), ("resume", 0)),),
    )
    result = check(program(scenario, Dispatcher), Options(preemption_bound=1 if quick else 2, time_limit=120))
    yield VerifyRow(
        "harness",
        "akka-mailbox reference",
        "no failure",
        "no failure" if result.failure is None else result.failure.kind,
        result.summary(),
        time.perf_counter() - started,
    )
    for m in REFERENCE_MUTANTS.values():
        started = time.perf_counter()
        r = check(program(m.constants, m.build), Options(time_limit=60))
        kind = r.failure.kind if r.failure is not None else "no failure"
        yield VerifyRow(
            "harness-mutant",
            f"akka-mailbox reference {m.name}",
            m.expect,
            kind,
            r.summary(),
            time.perf_counter() - started,
        )
        if r.failure is None or m.name == "idle-store":  # idle-store's trace shows nothing yet
            continue
        events = [e for e in r.failure.trace_events if isinstance(e, dict)]
        try:
            validate({"throughput": m.constants.throughput}, events, complete=r.failure.kind == "lost_wakeup")
            actual, detail = "allowed", f"{len(events)} events"
        except TraceRejected as exc:
            actual, detail = "rejected", exc.message
        yield VerifyRow(
            "conformance",
            f"akka-mailbox trace of reference {m.name}",
            "rejected",
            actual,
            detail,
            time.perf_counter() - started,
        )
