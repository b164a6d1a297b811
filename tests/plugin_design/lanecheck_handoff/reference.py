"""The handoff, as production code on lanecheck's runtime seam (real ``threading`` by default)."""

from __future__ import annotations

from typing import Any

from reference.runtime import DEFAULT_RUNTIME, Runtime


class Handoff:
    """A one-slot box: ``put`` waits while it is full, ``take`` waits while it is empty."""

    def __init__(self, runtime: Runtime = DEFAULT_RUNTIME) -> None:
        self._changed = runtime.condition(runtime.lock("handoff.lock"), "handoff.changed")
        self._box: list[Any] = []

    def put(self, item: Any) -> None:
        with self._changed:
            while self._box:
                self._changed.wait()
            self._box.append(item)
            self._changed.notify_all()

    def take(self) -> Any:
        with self._changed:
            while not self._box:
                self._wait_empty()
            item = self._box.pop()
            self._changed.notify_all()
            return item

    def _wait_empty(self) -> None:
        self._changed.wait()
