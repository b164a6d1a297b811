"""Reading and judging a trace of a design other than work-lane, one line at a time.

A design contributes a ``DesignFormat``: its JSON Schema file (the header and
the wording of a bad event), a hand-written check of each event's fields (the
hot path; tests keep it in agreement with the schema), and a ``Checker`` factory
— the design's binding of the streaming search (``search.TraceSearch``). This
module does the rest the same way for every design: well-formedness (exit 2
naming the line), seq continuity, the verdict (exit 1 naming the first seq no
behaviour allows, its rule and the states before it; exit 0 complete or an
allowed prefix with what is pending).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from model_checks.conformance.fast_format import line_problem
from model_checks.conformance.reader import MAX_INDEXED, known_fields, parse_line, required_ok
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.conformance.search import Observer, TraceSearch
from model_checks.conformance.trace_schema import TraceSchema
from model_checks.conformance.verdict import Malformed, Rejected, Verdict, Verdicts

ENGINE = "spec"

Event = dict[str, Any]
FieldCheck = Callable[[Any], bool]


class Checker(Protocol):
    """One trace's judge: the design's binding of the streaming search."""

    complete: bool  # the trace showed the end of its run (its design's completion event)

    def step(self, ev: Event) -> None:
        """Advance by one well-formed event; ``Rejected`` when no behaviour takes it."""
        ...

    def finish(self, complete: bool) -> None:
        """The trace ended; with ``complete`` the run is over: ``Rejected`` unless the spec may stop here."""
        ...

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        """What a prefix leaves owed: as data and as phrases."""
        ...

    def describe(self) -> list[dict[str, Any]]:
        """The states the spec could be in, for people (a few)."""
        ...


@dataclass(frozen=True)
class DesignFormat:
    design: str
    schema_file: str
    fields: Mapping[str, tuple[tuple[str, FieldCheck], ...]]  # per event: required field -> check
    index: str  # the field naming an actor / mailbox, bounded by config[bound] when the header has it
    bound: str
    make: Callable[[dict[str, Any]], Checker]
    rules: Mapping[int, str]
    completion: str  # how a trace shows its run finished, for the prefix verdict's words
    # per event: fields that may be absent, checked when present
    optional: Mapping[str, tuple[tuple[str, FieldCheck], ...]] = field(default_factory=dict)
    # the package whose folder holds ``schema_file`` (the design's own folder)
    schema_package: str = "model_checks.conformance"
    # header config fields that are sizes -> the largest value each may take (reader.header_problem)
    header_limits: Mapping[str, int] = field(default_factory=dict)
    engines: tuple[str, ...] = (ENGINE,)  # the streaming search is its only engine

    def validate(
        self, header: Any, it: Iterator[str], *, engine: str, complete: bool, observe: Observer | None = None
    ) -> Verdict:
        """Judge the events after ``header`` (already parsed, line 1) with the design's checker
        (the streaming search: ``engine`` has no choice here).

        ``observe`` is handed the design's streaming search (``TraceSearch``) before the first
        event and after every event it takes: what state coverage is built on. A design whose
        checker has no ``TraceSearch`` at ``checker.search`` (a hand-written engine) cannot be
        observed: ``NotObservable``."""
        problem = limits_problem(header, self.header_limits) or header_problem(self, header)
        if problem is not None:
            return Verdicts(self.design, ENGINE).malformed(Malformed(1, f"line 1: {problem}"))
        return _judge(self, dict(header["config"]), it, parse_line, complete, observe)


def is_item(v: Any) -> bool:
    t = type(v)
    return t is str or t is int


def is_items(v: Any) -> bool:
    return type(v) is list and all(is_item(x) for x in v)


def is_bool(v: Any) -> bool:
    return type(v) is bool


def is_count(v: Any) -> bool:
    return type(v) is int and v >= 0


def one_of(*values: str) -> FieldCheck:
    allowed = frozenset(values)
    return lambda v: type(v) is str and v in allowed


# ------------------------------------------------------------------------------ the schema


def _trace_schema(fmt: DesignFormat) -> TraceSchema:
    # Equal for equal formats, so the schema's validators are built once per design.
    return TraceSchema(fmt.schema_package, fmt.design, fmt.index, fmt.schema_file)


def header_problem(fmt: DesignFormat, obj: object) -> str | None:
    return _trace_schema(fmt).header_problem(obj)


def schema_event_problem(fmt: DesignFormat, obj: object, bound: int) -> str | None:
    """Why ``obj`` is not a well-formed event of this design, in the schema's words; None if it is."""
    return _trace_schema(fmt).event_problem(obj, bound)


def event_ok(fmt: DesignFormat, obj: Any, bound: int) -> bool:
    """The hot-path check of one event line (everything but seq continuity)."""
    checks = required_ok(fmt.fields, obj)
    if checks is None:
        return False
    for name, check in fmt.optional.get(obj["event"], ()):
        if name in obj and not check(obj[name]):
            return False
    # The index is bounded where the event names one (an unknown extra field is ignored).
    return not (bound and any(name == fmt.index for name, _ in checks) and obj[fmt.index] >= bound)


# ------------------------------------------------------------------------------ the driver


def validate_events(
    fmt: DesignFormat,
    config: Mapping[str, Any],
    events: Iterable[Event],
    *,
    complete: bool,
    observe: Observer | None = None,
) -> Verdict:
    """Judge events already parsed (a tracer's records), as ``DesignFormat.validate`` judges the
    lines after a header with this ``config`` (a problem names the line the event would have had).

    The config is trusted as a header's would not be: it comes from the scheduler itself."""
    return _judge(fmt, dict(config), iter(events), _already_parsed, complete, observe)


class NotObservable(Exception):
    """The format's checker does not judge with the streaming search: no states to observe."""


def _already_parsed(obj: Any, line: int) -> Any:
    return obj


def _judge(
    fmt: DesignFormat,
    config: dict[str, Any],
    rest: Iterator[Any],
    parse: Callable[[Any, int], Any],
    complete: bool,
    observe: Observer | None,
) -> Verdict:
    verdicts = Verdicts(fmt.design, ENGINE)
    # Without the header's count, the index is still bounded: the engines grow state up to it.
    bound: int = config.get(fmt.bound, MAX_INDEXED)
    checker = fmt.make(config)
    if observe is not None:
        search = getattr(checker, "search", None)
        if not isinstance(search, TraceSearch):
            raise NotObservable(f"the {fmt.design} checker has no streaming search to observe")
        search.observe(observe)
    count = 0
    ev: Event | None = None
    try:
        for line_no, raw in enumerate(rest, start=2):
            obj = parse(raw, line_no)
            if not event_ok(fmt, obj, bound):
                raise Malformed(line_no, f"line {line_no}: {_event_words(fmt, obj, bound)}")
            if obj["seq"] != count + 1:
                raise Malformed(
                    line_no,
                    f"line {line_no}: seq {obj['seq']} where {count + 1} was expected"
                    " (a gap or reorder in seq)",
                )
            obj = known_fields(obj, fmt.fields[obj["event"]], fmt.optional.get(obj["event"], ()))
            ev = obj
            checker.step(obj)
            count += 1
        ev = None
        checker.finish(complete)
    except Malformed as problem:
        return verdicts.malformed(problem, count)
    except Rejected as rejected:
        return verdicts.rejected(rejected, ev, count, checker.describe())
    if complete or checker.complete:
        return verdicts.complete(count, fmt.design)
    return verdicts.prefix(count, fmt.completion, max(fmt.rules), checker.pending(), checker.describe())


def _event_words(fmt: DesignFormat, obj: Any, bound: int) -> str:
    return line_problem(fmt.design, fmt.fields, obj, lambda o: schema_event_problem(fmt, o, bound))
