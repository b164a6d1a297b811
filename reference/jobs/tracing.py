"""Trace events of a job store, one JSON Lines file per process, merged by a global ``seq``.

Each store step that changes jobs (``claim``, ``admit``, ``deny``, ``start``, ``finish``, ``fail``,
``retry``, ``lease_expire``, ``enqueue``, ``refuse``, ``discard``) is one event. Its ``seq`` is
allocated by the store in the same transaction as the step, so across processes the seq order is
the order in which the steps took effect. The events are written after the transaction commits, so
a file holds only steps that happened; a process killed between commit and write leaves a gap in
the seq numbers, which ``merge`` reports.

Why one file per process rather than one shared file: each file gets its own header (the process
name and the budgets it saw), nothing depends on ``O_APPEND`` atomicity across processes, and a
file is complete up to its last line. ``merge`` joins them into one trace ordered by ``seq``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

DESIGN = "admission"
"""The registered design (model_checks.designs.admission) whose trace format a merged trace is."""
VERSION = 1

Event = dict[str, Any]


def _dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=False)


@runtime_checkable
class Tracer(Protocol):
    """Receives committed events, each already numbered ``seq`` by the store."""

    def write(self, events: Sequence[Event]) -> None: ...


class RecordingTracer:
    """Keeps the events in memory (tests, the in-memory store)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def write(self, events: Sequence[Event]) -> None:
        self.events.extend(events)


def header(process: str, config: dict[str, Any]) -> Event:
    return {"trace": "lanecheck", "version": VERSION, "design": DESIGN, "process": process, "config": config}


class JsonlTraceFile:
    """This process's trace file: the header at open, then one line per event, appended per batch.

    A batch is one ``os.write`` of whole lines, so a reader never sees half a transaction's events.
    """

    def __init__(self, path: str | Path, process: str, config: dict[str, Any]) -> None:
        self.path = Path(path)
        self.process = process
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        os.write(self._fd, (_dumps(header(process, config)) + "\n").encode())

    def write(self, events: Sequence[Event]) -> None:
        if events:
            os.write(self._fd, "".join(_dumps(e) + "\n" for e in events).encode())

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JsonlTraceFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def read(path: Path) -> tuple[Event, list[Event]]:
    """One process's file: its header and its events; ``ValueError`` naming the file and line."""
    events: list[Event] = []
    head: Event | None = None
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as problem:
                raise ValueError(f"{path}:{number}: not JSON ({problem.msg})") from None
            if not isinstance(doc, dict):
                raise ValueError(f"{path}:{number}: not a JSON object")
            if number == 1:
                if doc.get("design") != DESIGN:
                    raise ValueError(f"{path}:1: not a {DESIGN} trace header")
                head = doc
            elif not isinstance(doc.get("seq"), int) or not isinstance(doc.get("event"), str):
                raise ValueError(f"{path}:{number}: an event needs an int seq and a str event")
            else:
                events.append(doc)
    if head is None:
        raise ValueError(f"{path}: empty, no header")
    return head, events


def merge(paths: Iterable[Path]) -> tuple[list[Event], list[Event]]:
    """The headers and all events ordered by ``seq``; ``ValueError`` on a duplicate or missing seq.

    The seqs must run on without a gap from the first one: every process that used the store while
    it was traced must have traced too."""
    headers: list[Event] = []
    events: list[Event] = []
    for path in sorted(paths):
        head, more = read(path)
        headers.append(head)
        events.extend(more)
    events.sort(key=lambda e: int(e["seq"]))
    first = events[0]["seq"] if events else 1
    for expected, event in enumerate(events, start=first):
        if event["seq"] != expected:
            problem = "duplicate" if event["seq"] < expected else "missing"
            raise ValueError(f"seq {expected}: {problem} (got {event['seq']}): the traces do not join up")
    return headers, events
