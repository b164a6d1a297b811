"""The spec's producers and workers bound to a trace's threads, for a streaming checker's constants.

Mixed in *before* a spec's ``Constants`` (``class TraceConstants(TraceProcesses, Constants)``),
it answers ``producer_names`` and ``worker_names`` with the processes bound so far instead of the
spec's script: each joins as its thread first shows the role (``search_binding.add_process``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False, kw_only=True)
class TraceProcesses:
    producers: list[str] = field(default_factory=list)
    bound_workers: list[str] = field(default_factory=list)

    def producer_names(self) -> tuple[str, ...]:
        return tuple(self.producers)

    def worker_names(self) -> tuple[str, ...]:
        return tuple(self.bound_workers)


__all__ = ["TraceProcesses"]
