"""Which spec states the real runs reached: each execution's recorded events judged by the design's
streaming search (``streamed.validate_events``) with an observer collecting the fingerprint of every
state the search held after each event of an allowed trace.

Generic: a design qualifies when its trace format is a ``streamed.DesignFormat`` whose checker
judges with a ``TraceSearch``; its trace source must give event dicts and the scheduler's trace
config must be reachable from the source (below). Anything else is named, never guessed.

A fingerprint is the state's hash, as the explorer's seen-set keys states: equal within one
process. The validator's states count against the explorer's only when the validator bound the very
constants the explorer ran under; a design's binding usually names processes by the trace's threads
(its own constants class), and then only the count is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.search import TraceSearch
from model_checks.conformance.streamed import DesignFormat, NotObservable, validate_events


@dataclass
class StateCollector:
    """An observer for ``TraceSearch``: every state's fingerprint, and the constants they were under."""

    fingerprints: set[int] = field(default_factory=set)
    constants: dict[int, Any] = field(default_factory=dict)  # id -> the constants object (kept alive)

    def __call__(self, search: TraceSearch) -> None:
        self.fingerprints.update(map(hash, search.states))
        c = search.c
        if id(c) not in self.constants:
            self.constants[id(c)] = c

    def merge(self, other: StateCollector) -> None:
        self.fingerprints |= other.fingerprints
        self.constants.update(other.constants)

    def same_constants(self, explorer: Any) -> bool:
        """Did the search judge every trace under exactly the explorer's constants (type and value)?"""
        return bool(self.constants) and all(
            type(c) is type(explorer) and c == explorer for c in self.constants.values()
        )

    def constants_kinds(self) -> list[str]:
        return sorted({type(c).__name__ for c in self.constants.values()})


@dataclass
class StateRuns:
    """The state coverage of one design's real runs, or why there is none."""

    collected: StateCollector = field(default_factory=StateCollector)
    traces: int = 0  # executions whose events were judged
    rejected: int = 0  # of those, not allowed (their states are left out)
    unusable: dict[str, str] = field(default_factory=dict)  # scenario -> why its runs gave no states
    why_not: str | None = None  # the design has no state coverage at all


def observable_format(fmt: object) -> DesignFormat | None:
    """``fmt`` when it is a format judged by the streaming search, else None."""
    return fmt if isinstance(fmt, DesignFormat) else None


def trace_config(source: Callable[[], object]) -> Mapping[str, Any] | None:
    """The scheduler's trace config behind a trace source: the ``config`` of the tracer the source
    reads (a ``RecordingTracer`` its closure holds, after the scheduler's ``begin``)."""
    for cell in getattr(source, "__closure__", None) or ():
        try:
            held = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        config = getattr(held, "config", None)
        if isinstance(config, Mapping) and callable(getattr(held, "emit", None)):
            return config
    return None


def judge_execution(
    fmt: DesignFormat, sources: Sequence[Callable[[], object]], out: StateRuns, scenario: str
) -> None:
    """Judge each trace source of one execution, adding the states of the allowed ones to ``out``."""
    for source in sources:
        events = source()
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            out.unusable.setdefault(scenario, "its trace source gives formatted lines, not event records")
            continue
        config = trace_config(source)
        if config is None:
            out.unusable.setdefault(scenario, "the trace config is not reachable from its trace source")
            continue
        mine = StateCollector()
        try:
            verdict = validate_events(fmt, config, events, complete=False, observe=mine)
        except NotObservable as problem:
            out.why_not = str(problem)
            return
        except (KeyError, ValueError, TypeError) as problem:  # a config the checker cannot bind
            out.unusable.setdefault(scenario, f"its trace config could not be bound: {problem!r}")
            continue
        out.traces += 1
        if verdict.allowed:
            out.collected.merge(mine)
        else:
            out.rejected += 1
