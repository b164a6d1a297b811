"""Which spec states the real runs reached: each execution's recorded events judged by a design's
streaming-search format (``streamed.validate_events``) with an observer collecting the fingerprint
of every state the checker held before the first event and after each event of an allowed trace.

Generic: a design qualifies when its trace format, or else the ``spec_trace_format`` it names beside
a hand-written one, is a ``streamed.DesignFormat`` whose checker is observable (``observer_seam``):
a ``TraceSearch`` at ``checker.search``, or an ``observe(observer)`` of the checker's own that reports
an object with the same ``states`` and ``c`` (an adapter around an engine of the design's). Its
trace source must give event records, or hold the tracer that recorded them (below). Anything else
is named, never guessed.

A fingerprint is the state's hash, as the explorer's seen-set keys states: equal within one
process. The validator's states count against the explorer's only when the validator bound the very
constants the explorer ran under; a design's binding usually names processes by the trace's threads
(its own constants class), and then only the count is shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from model_checks.conformance.search import TraceSearch
from model_checks.conformance.streamed import DesignFormat, NotObservable, validate_events
from model_checks.design import Design, load


class Observed(Protocol):
    """What an observer is handed: the states some behaviour could be in now, and their constants."""

    @property
    def states(self) -> Collection[Hashable]: ...

    @property
    def c(self) -> Any: ...


Seam = Callable[[Callable[[Any], None]], None]


@dataclass
class StateCollector:
    """An observer of a checker (``Observed``): every state's fingerprint, and their constants."""

    fingerprints: set[int] = field(default_factory=set)
    constants: dict[int, Any] = field(default_factory=dict)  # id -> the constants object (kept alive)

    def __call__(self, search: Observed) -> None:
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
    traces: int = 0  # traces (trace sources) judged
    rejected: int = 0  # of those, not allowed (their states are left out)
    judged: int = 0  # executions whose traces were judged
    unjudged: int = 0  # executions run after their scenario's judging budget was spent
    judge_seconds: float = 0.0  # the judging budget per scenario (0: nothing is judged)
    judged_by: str = "its trace format"  # which format judged, for the page
    unusable: dict[str, str] = field(default_factory=dict)  # scenario -> why its runs gave no states
    why_not: str | None = None  # the design has no state coverage at all

    @property
    def sample(self) -> str:
        """How many executions were judged, and the budget that bounded them."""
        run = self.judged + self.unjudged
        budget = f"judging at most {self.judge_seconds:g} s per scenario" if self.judge_seconds else ""
        if self.unjudged:
            return f"{self.judged:,} of {run:,} executions judged ({budget}: a sample)"
        return f"all {run:,} executions judged" + (f" ({budget})" if budget else "")


def observable_format(fmt: object) -> DesignFormat | None:
    """``fmt`` when it is a format judged by the streaming search, else None."""
    return fmt if isinstance(fmt, DesignFormat) else None


def state_format(design: Design) -> tuple[DesignFormat | None, str]:
    """The format whose checker gives the design's states and the words naming it; or None and why not."""
    if design.trace_format and (fmt := observable_format(load(design.trace_format))) is not None:
        return fmt, "its trace format"
    if not design.spec_trace_format:
        return None, (
            "its trace format is judged by a hand-written engine, not the streaming search, and the "
            "design names no spec_trace_format (a streaming-search format of the same traces)"
        )
    target = design.spec_trace_format
    try:
        named = load(target)
    except (ImportError, AttributeError) as problem:
        why = f"{type(problem).__name__}: {problem}"
        return None, f"its spec_trace_format {target} could not be loaded: {why}"
    fmt = observable_format(named)
    if fmt is None:
        return None, f"its spec_trace_format {target} names a {type(named).__name__}, not a DesignFormat"
    return fmt, f"its spec_trace_format ({target})"


def observer_seam(checker: object) -> Seam | None:
    """How to observe a checker: its ``TraceSearch``'s ``observe``, or an ``observe`` of its own."""
    search = getattr(checker, "search", None)
    if isinstance(search, TraceSearch):
        return search.observe
    own = getattr(checker, "observe", None)
    return own if callable(own) else None


def observing(fmt: DesignFormat, observer: Callable[[Any], None]) -> DesignFormat:
    """``fmt`` whose every checker has ``observer`` attached; ``NotObservable`` when one cannot be."""

    def make(config: dict[str, Any]) -> Any:
        checker = fmt.make(config)
        seam = observer_seam(checker)
        if seam is None:
            raise NotObservable(
                f"the {fmt.design} checker ({type(checker).__name__}) has neither a streaming search "
                "nor an observe() of its own"
            )
        seam(observer)
        return checker

    return dataclasses.replace(fmt, make=make)


def recorder(source: Callable[[], object]) -> Any | None:
    """The tracer behind a trace source: one its closure holds, with the scheduler's ``config``
    (after ``begin``) and ``emit``."""
    for cell in getattr(source, "__closure__", None) or ():
        try:
            held = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        config = getattr(held, "config", None)
        if isinstance(config, Mapping) and callable(getattr(held, "emit", None)):
            return held
    return None


def trace_config(source: Callable[[], object]) -> Mapping[str, Any] | None:
    """The scheduler's trace config behind a trace source (its tracer's ``config``)."""
    held = recorder(source)
    if held is None:
        return None
    config: Mapping[str, Any] = held.config
    return config


def _records(events: object) -> bool:
    return isinstance(events, list) and all(isinstance(e, dict) for e in events)


def trace_events(source: Callable[[], object]) -> list[dict[str, Any]] | str:
    """The event records of one trace source, or why there are none: a source that formats lines
    (for a failure report) is read through its tracer's ``events()`` when it holds one."""
    events = source()
    if _records(events):
        assert isinstance(events, list)
        return events
    held = recorder(source)
    read = getattr(held, "events", None)
    if callable(read):
        events = read()
        if _records(events):
            assert isinstance(events, list)
            return events
    return "its trace source gives formatted lines, and no tracer with event records is reachable from it"


def judge_execution(
    fmt: DesignFormat, sources: Sequence[Callable[[], object]], out: StateRuns, scenario: str
) -> None:
    """Judge each trace source of one execution, adding the states of the allowed ones to ``out``."""
    for source in sources:
        events = trace_events(source)
        if isinstance(events, str):
            out.unusable.setdefault(scenario, events)
            continue
        config = trace_config(source)
        if config is None:
            out.unusable.setdefault(scenario, "the trace config is not reachable from its trace source")
            continue
        mine = StateCollector()
        try:
            verdict = validate_events(observing(fmt, mine), config, events, complete=False)
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
