"""Traces of the work-stealing spec in the work-stealing trace format: the projection and the export.

The spec's steps are finer than the trace's events (one shared load, store or CAS each), so a
behaviour is projected, not copied: each step that commits an operation becomes the event an
implementation logs at that point (``Take``/``TakeLast``/``TakeEmpty`` -> take, ``Steal``/
``StealEmpty`` -> steal, ``PopInjector`` -> steal from the injector, ``Grow`` -> resize, ``Push``
(the bottom store) -> push, ``Run`` -> run, the step that sets a task's ``done`` -> done,
``Resume`` -> join of each subtask, ``Park``/``Unpark``, ``Submit``); every other step vanishes.
The table is in docs/work-stealing-trace.md, "Traces of the spec".

Every exported trace is a complete behaviour (a terminal state: every task done, every
worker parked) and is validated with ``--complete`` semantics before any file is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from model_checks.conformance.export import ExportError, covering_behaviours, write_all
from model_checks.explorer.counterexample import Step
from spec.language import Transition
from spec.work_stealing import SPEC, Constants

Event = dict[str, Any]
DESIGN = "work-stealing"
TAKE_RESULTS = {"success": "ok", "empty": "empty"}
STEAL_RESULTS = {"success": "ok", "empty": "empty", "abort": "abort"}


def header(c: Constants) -> Event:
    config = {"workers": c.workers, "capacity": c.capacity, "pool": "stealing"}
    return {"trace": "lanecheck", "version": 1, "design": DESIGN, "config": config}


def project(c: Constants, transitions: Iterable[Transition | Step]) -> list[Event]:
    """The trace events of a behaviour of the spec (numbered from seq 1)."""
    index = {name: i for i, name in enumerate(c.worker_names())}
    events: list[Event] = []
    finished: set[str] = set()

    def ev(thread: str, event: str, **fields: Any) -> None:
        events.append({"seq": len(events) + 1, "thread": thread, "event": event, **fields})

    for t in transitions:
        # A spec Transition, or an explorer counterexample's Step (its action is a name).
        name = t.action if isinstance(t.action, str) else t.action.name
        p = str(t.process)
        f: dict[str, Any] = dict(t.fields or {})
        w = index.get(p)
        if name == "Grow":
            ev(p, "resize", worker=w, capacity=c.size(t.state.worker[p].gen))
        elif t.fields is None:
            pass  # an internal step (a variant may label one and log nothing)
        elif name == "Submit":
            ev(p, "submit", task=f["task"], result="ok")
        elif name == "PopInjector":
            ev(p, "steal", worker=w, victim="injector", task=f.get("task"), result=TAKE_RESULTS[f["result"]])
        elif t.event == "take":
            result = "lost" if f.get("lost_race") else TAKE_RESULTS[f["result"]]
            ev(p, "take", worker=w, task=f.get("task"), result=result)
        elif t.event == "steal":
            victim = index[f["victim"]]
            ev(p, "steal", worker=w, victim=victim, task=f.get("task"), result=STEAL_RESULTS[f["result"]])
        elif t.event == "push":
            ev(p, "push", worker=w, task=f["task"], size=len(t.state.deque[p]))
        elif t.event == "run":
            ev(p, "run", worker=w, task=f["task"])
        elif t.event == "park":
            ev(p, "park", worker=w)
        elif t.event == "unpark":
            ev(p, "unpark", worker=w)
        # A task completes in its Run (no subtasks), at its last push's notify (no join) or in
        # Resume (join): whichever step set its ``done``.
        for task, is_done in t.state.done.items():
            if is_done and task not in finished:
                finished.add(task)
                if name == "Resume":
                    for kid in c.children(task):
                        ev(p, "join", task=kid)
                ev(p, "done", worker=w, task=task, outcome="ok")
    return events


def lines(c: Constants, events: Iterable[Event]) -> list[str]:
    import json

    return [json.dumps(header(c))] + [json.dumps(e) for e in events]


def traces(c: Constants) -> list[list[str]]:
    """The covering behaviours of ``c`` as trace lines, each validated as a complete behaviour."""
    from model_checks.conformance.reader import parse_line
    from model_checks.designs.work_stealing.trace import FORMAT

    out = []
    for n, behaviour in enumerate(covering_behaviours(SPEC, c), start=1):
        trace = lines(c, project(c, behaviour))
        verdict = FORMAT.validate(parse_line(trace[0], 1), iter(trace[1:]), engine="fast", complete=True)
        if verdict.code != 0:  # never expected: the spec's own behaviours
            raise ExportError(
                f"{DESIGN}: generated trace {n} does not validate ({verdict.message}); nothing written"
            )
        out.append(trace)
    return out


def export(directory: Path, c: Constants, name: str = DESIGN, *, replace: bool = False) -> list[Path]:
    """Write the covering behaviours of ``c`` as ``<name>-NNN.jsonl`` (all or none; see ``write_all``)."""
    texts = {f"{name}-{n:03d}.jsonl": "\n".join(t) + "\n" for n, t in enumerate(traces(c), start=1)}
    return write_all(directory, texts, stale=f"{name}-*.jsonl" if replace else None)
