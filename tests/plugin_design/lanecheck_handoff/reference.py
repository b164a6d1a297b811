"""The handoff, as production code on lanecheck's runtime seam (real ``threading`` by default).

With a tracer it logs each ``put`` and ``take`` while it holds the lock that makes the step
atomic, so the trace's order is the order the steps took effect (docs/adding-a-design.md, the
trace binding).
"""

from __future__ import annotations

from typing import Any

from reference.runtime import DEFAULT_RUNTIME, Runtime
from reference.tracing import Tracer


class Handoff:
    """A one-slot box: ``put`` waits while it is full, ``take`` waits while it is empty."""

    def __init__(
        self, runtime: Runtime = DEFAULT_RUNTIME, tracer: Tracer | None = None, items: int = 0
    ) -> None:
        self._rt = runtime
        self._changed = runtime.condition(runtime.lock("handoff.lock"), "handoff.changed")
        self._box: list[Any] = []
        self._tracer = tracer
        if tracer is not None:
            tracer.begin({"items": items})  # the header's config

    def put(self, item: Any) -> None:
        with self._changed:
            while self._box:
                self._changed.wait()
            self._box.append(item)
            if self._tracer is not None:
                self._tracer.emit(self._rt.thread_name(), "put", {"item": item})
            self._changed.notify_all()

    def take(self) -> Any:
        with self._changed:
            while not self._box:
                self._wait_empty()
            item = self._box.pop()
            if self._tracer is not None:
                self._tracer.emit(self._rt.thread_name(), "take", {"item": item})
            self._changed.notify_all()
            return item

    def _wait_empty(self) -> None:
        self._changed.wait()
