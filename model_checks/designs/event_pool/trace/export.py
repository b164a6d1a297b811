"""Traces from the spec: ``spec/event_pool.py``'s behaviours in the trace format, for ports to replay.

The spec labels its steps with the trace's own events, save three of its client's steps, which
the reference logs through ``EventPool.stop`` instead (docs/event-pool.md, "The trace"):

| spec step | trace event |
|---|---|
| ``post item to`` | ``post item to result=ok`` |
| ``wait blocked`` | ``wait`` (whether it blocked is not observable) |
| ``wake result`` | ``wake result`` (``WAIT_TIMEOUT`` is ``timeout``) |
| ``cancel items`` | ``cancel items work="w"`` (the spec's one work object) |
| ``waited`` | none (``WaitForThreadpoolWorkCallbacks`` returning is not logged) |
| ``close`` | ``stop_begin mode=drain`` (the pool stops after the wait, so the drain is empty) |
| ``joined`` | ``stop_end mode=drain result=ok`` |

``signal``, ``take``, ``run`` and ``done`` are the same. ``export`` writes the covering
behaviours of ``conformance.export`` (every labelled action with every field combination),
each validated first, all files or none.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from model_checks.conformance.export import covering_behaviours, write_validated
from model_checks.designs.event_pool.trace.validate import DESIGN, validate_lines
from reference.event_pool import header
from spec import event_pool as ep
from spec.win32_events import WAIT_TIMEOUT

Event = dict[str, Any]
WORK = "w"  # the name of the spec's one work object in ``cancel`` events
STOP_BEGIN: Event = {"event": "stop_begin", "mode": "drain"}
STOP_END: Event = {"event": "stop_end", "mode": "drain", "result": "ok"}


def config_of(constants: ep.Constants) -> dict[str, int]:
    """The header's ``config`` for a spec configuration."""
    return {"threads": constants.threads}


def event_of(event: str, fields: dict[str, Any]) -> Event | None:
    """The trace event of one labelled spec step (without seq and thread), or None: not logged."""
    if event == "post":
        return {"event": "post", "item": fields["item"], "to": fields["to"], "result": "ok"}
    if event == "wait":
        return {"event": "wait"}
    if event == "wake":
        result = fields["result"]
        return {"event": "wake", "result": "timeout" if result == WAIT_TIMEOUT else result}
    if event == "cancel":
        return {"event": "cancel", "items": list(fields["items"]), "work": WORK}
    if event == "waited":
        return None
    if event == "close":
        return dict(STOP_BEGIN)
    if event == "joined":
        return dict(STOP_END)
    return {"event": event, **fields}  # signal, take, run, done


class Labelled(Protocol):
    """A step of a behaviour: a ``spec.language.Transition`` or a counterexample's ``Step``."""

    @property
    def process(self) -> Hashable: ...

    @property
    def event(self) -> str | None: ...

    @property
    def fields(self) -> Mapping[str, Any] | None: ...


def project(transitions: Iterable[Labelled]) -> list[Event]:
    """The trace events of a behaviour of the spec (or a counterexample), numbered from seq 1."""
    events: list[Event] = []
    for t in transitions:
        if t.event is None or t.fields is None:
            continue
        ev = event_of(t.event, dict(t.fields))
        if ev is not None:
            events.append({"seq": len(events) + 1, "thread": str(t.process), **ev})
    return events


def trace_lines(constants: ep.Constants, events: Iterable[Event]) -> list[str]:
    return [json.dumps(header(config_of(constants)))] + [json.dumps(e) for e in events]


def covering_traces(constants: ep.Constants) -> list[list[str]]:
    """Complete behaviours covering every labelled step and field combination, as trace lines."""
    return [trace_lines(constants, project(b)) for b in covering_behaviours(ep.SPEC, constants)]


def export(
    directory: Path, constants: ep.Constants, name: str = "event-pool", *, replace: bool = False
) -> list[Path]:
    """Write the covering traces as ``<name>-NNN.jsonl``, each validated as complete first (else
    ``ExportError`` and nothing written); ``replace`` as ``conformance.export.export``."""
    return write_validated(
        directory,
        covering_traces(constants),
        lambda trace: validate_lines(trace, complete=True),
        DESIGN,
        name,
        replace=replace,
    )
