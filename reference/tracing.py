"""Trace events of the work-lane design (docs: /work/shared/design/trace-format.md).

The scheduler calls ``tracer.emit(thread, event, fields)`` at each step's
linearisation point, usually while holding the lock that makes the step
atomic. The tracers here therefore never block: they append to a list, which
is atomic in CPython, so the order of the list is the order in which the steps
took effect and ``seq`` is simply the position in it.

With no tracer the scheduler skips every emit behind one ``is not None`` test,
so tracing costs nothing when it is off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

TRACE_NAME = "lanecheck"
TRACE_VERSION = 1
DESIGN = "work-lane"

Fields = dict[str, Any]
# Makes a trace's header line from the scheduler's ``config``: ``header`` below for work-lane
# traces, e.g. ``reference.work_lane_lockfree.trace_header`` for that design's version 2.
HeaderFn = Callable[[Mapping[str, int]], Fields]


def default_label(item: object) -> object:
    """An item's (or event's) name in trace events: ints and strings as they are, anything else by
    ``repr`` (the default ``item_label`` of every reference scheduler)."""
    kind = type(item)
    if kind is int or kind is str:
        return item
    return repr(item)


@runtime_checkable
class Tracer(Protocol):
    """Receives the events of one scheduler, in linearisation order."""

    def begin(self, config: Mapping[str, int]) -> None:
        """Called once, before any event, with the header's ``config``."""
        ...

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        """Record one event; must not block and must not call back into the scheduler."""
        ...


class NullTracer:
    """Accepts and drops every event: measures the cost of tracing itself."""

    def begin(self, config: Mapping[str, int]) -> None:
        return None

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        return None


def header(config: Mapping[str, int]) -> Fields:
    """The header object of a work-lane trace."""
    return {"trace": TRACE_NAME, "version": TRACE_VERSION, "design": DESIGN, "config": dict(config)}


def _dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class RecordingTracer:
    """Keeps every event in memory; ``events()`` numbers them from ``seq`` 1. ``make_header``
    builds the header line (default: a work-lane version 1 trace's)."""

    def __init__(self, make_header: HeaderFn | None = None) -> None:
        self.config: dict[str, int] | None = None
        self._make_header: HeaderFn = header if make_header is None else make_header
        self._raw: list[tuple[str, str, Fields]] = []

    def begin(self, config: Mapping[str, int]) -> None:
        self.config = dict(config)

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        # list.append is atomic, so concurrent emitters need no lock of ours.
        self._raw.append((thread, event, fields))

    def __len__(self) -> int:
        return len(self._raw)

    def header(self) -> Fields:
        if self.config is None:
            raise RuntimeError("the tracer was never attached to a scheduler")
        return self._make_header(self.config)

    def events(self, start: int = 0) -> list[Fields]:
        """The events from index ``start`` on, each ``{"seq", "thread", "event", **fields}``."""
        raw = self._raw[start:]
        return [
            {"seq": start + i + 1, "thread": thread, "event": event, **fields}
            for i, (thread, event, fields) in enumerate(raw)
        ]

    def records(self, start: int = 0) -> list[tuple[str, str, Fields]]:
        """The events from index ``start`` on as recorded: ``(thread, event, fields)``, unnumbered.
        For a reader that looks at a few events after every step, without building their dicts."""
        return self._raw[start:]

    def lines(self) -> Iterator[str]:
        """The whole trace as JSON Lines (without newlines)."""
        yield _dumps(self.header())
        for record in self.events():
            yield _dumps(record)

    def write_jsonl(self, target: str | Path | IO[str]) -> None:
        """Write the whole trace to a path or an open text stream."""
        if isinstance(target, str | Path):
            with open(target, "w", encoding="utf-8") as stream:
                self.write_jsonl(stream)
            return
        for line in self.lines():
            target.write(line + "\n")


class JsonlTracer:
    """Writes the trace to a JSON Lines file: the header, then one event per line.

    Events are buffered in memory and written by ``flush()`` and ``close()``
    (and on leaving a ``with`` block), so the scheduler's threads never wait for
    the disk; written events are dropped from memory. Call ``flush`` from one
    thread at a time. ``make_header`` builds the header line, as for ``RecordingTracer``.
    """

    def __init__(self, target: str | Path | IO[str], make_header: HeaderFn | None = None) -> None:
        self._make_header: HeaderFn = header if make_header is None else make_header
        if isinstance(target, str | Path):
            self._stream: IO[str] = open(target, "w", encoding="utf-8")  # noqa: SIM115
            self._owns_stream = True
        else:
            self._stream = target
            self._owns_stream = False
        self.config: dict[str, int] | None = None
        self._pending: list[tuple[str, str, Fields]] = []
        self._written = 0

    def begin(self, config: Mapping[str, int]) -> None:
        if self.config is not None:
            raise RuntimeError("a JsonlTracer records exactly one scheduler")
        self.config = dict(config)
        self._stream.write(_dumps(self._make_header(self.config)) + "\n")

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        self._pending.append((thread, event, fields))

    def flush(self) -> None:
        # Emitters may append while we write: take a prefix, then delete exactly
        # that prefix; both steps are atomic and later appends land after it.
        count = len(self._pending)
        batch = self._pending[:count]
        del self._pending[:count]
        write = self._stream.write
        for seq, (thread, event, fields) in enumerate(batch, start=self._written + 1):
            write(_dumps({"seq": seq, "thread": thread, "event": event, **fields}) + "\n")
        self._written += count
        self._stream.flush()

    def close(self) -> None:
        self.flush()
        if self._owns_stream:
            self._stream.close()

    def __enter__(self) -> JsonlTracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
