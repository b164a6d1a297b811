"""A trace format judged in one pass by a design's hand-written model: the ``fast`` engine.

A design brings what is its own — why line 1 is not its header, and, from the header's
config, a ``FastStart``: its model (``FastModel``), the check of each event's fields and
the words for a line that fails them — and ``FastFormat`` does the rest the same way for
every such design: each line parsed (``reader.parse_line``), its fields checked, seq
continuity, the model stepped, and the verdict worded. Exit codes as for every design: 0
allowed (complete, or an allowed prefix with what is pending), 1 not allowed (the first
seq and its rule), 2 not a well-formed trace (the line).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from model_checks.conformance.reader import clip, parse_line
from model_checks.conformance.verdict import Malformed, Rejected, Verdict, Verdicts

ENGINE = "fast"

Event = dict[str, Any]
Check = Callable[[Event], bool]


class FastModel(Protocol):
    """A design's model of its one state, stepped by the events (``Rejected`` when one is not allowed)."""

    stopped: bool  # the trace showed the end of its run (its stop_end ok)

    @property
    def handlers(self) -> Mapping[str, Callable[[Event], None]]:
        """Per event name: the step it takes."""
        ...

    def finish(self, complete: bool) -> None:
        """The trace ended; with ``complete`` the run is over: ``Rejected`` if something is owed."""

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        """What a prefix leaves owed: as data and as phrases."""
        ...

    def describe(self) -> list[dict[str, Any]]:
        """The model's state, for people."""
        ...


class Owed:
    """What a prefix leaves owed, gathered for ``FastModel.pending``: data and phrases together."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.phrases: list[str] = []

    def add(self, key: str, value: object, phrase: str) -> None:
        self.data[key] = value
        self.phrases.append(phrase)

    def stop(self, mode: str | None, stopped: bool, seq: int | None) -> None:
        """A stop that began (at ``seq``, in ``mode``; None: none began) and has not ended."""
        if mode is not None and not stopped:
            self.add("stop", mode, f"stop({mode}) began at seq {seq} and has not ended")

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        return self.data, self.phrases


class FastStart(NamedTuple):
    """What judging one trace starts from, given its header's config."""

    model: FastModel
    checks: Mapping[str, Check]  # per event name: its fields are well formed (a missing one: KeyError)
    problem: Callable[[Any], str]  # why a line the checks refused is not well formed, naming the field


def event_ok(checks: Mapping[str, Check], obj: Any) -> bool:
    """``obj`` is a well-formed event by ``checks`` (its seq aside from continuity)."""
    try:
        seq = obj["seq"]
        return (
            type(obj) is dict
            and type(seq) is int
            and seq >= 1
            and type(obj["thread"]) is str
            and checks[obj["event"]](obj)
        )
    except (KeyError, TypeError, IndexError):  # a field missing, an unhashable event, not an object
        return False


def nameless_problem(obj: Any) -> str | None:
    """Words for an object with no ``event`` field: a second header, or an event without its name
    (a schema would name some event's missing field instead, a guess at which event it is)."""
    if type(obj) is not dict or "event" in obj:
        return None
    if obj.get("trace") == "lanecheck":
        return "a second header: only line 1 is the header, every later line is an event"
    return "the event has no `event` field (its name)"


def line_problem(design: str, events: Collection[str], obj: Any, *words: Callable[[Any], str | None]) -> str:
    """Why a line is not a well-formed event of ``design`` (whose event names are ``events``): its
    event's name, else the first of ``words`` (the schema's, then what the schema lets through)
    that finds something."""
    nameless = nameless_problem(obj)
    if nameless is not None:
        return nameless
    if type(obj) is dict:
        kind = obj.get("event")
        if kind is not None and type(kind) is not str:
            return "`event` must be a string"
        hint = OTHER_VERSION.get(design)
        found = hint(obj) if hint is not None else None
        if found is not None:
            return found
        if type(kind) is str and kind not in events:
            return f"unknown event {clip(repr(kind), 80)} (design {design})"
    for word in words:
        found = word(obj)
        if found is not None:
            return found
    return _float_problem(events, obj) or "not a well-formed event"


# Per design: words for a line that is an event of another version of its format (a version-1
# work-lane ``drain_end`` in a version-2 work-lane-lockfree trace), registered by the design's
# format; None when the line is not one.
OTHER_VERSION: dict[str, Callable[[dict[str, Any]], str | None]] = {}


DIGITS_ALONE = "(write an integer's digits alone: 1, not 1.0 or 1e0)"


def fraction_words(value: float) -> str:
    """A number JSON wrote with a fraction or an exponent, where an integer was expected: what was
    read (``1e0`` and ``1.0`` both read 1.0, so the words say both forms)."""
    return f"a number with a fraction or an exponent (read as {clip(repr(value), 40)}), not an integer"


def _float_problem(events: Collection[str], obj: Any) -> str | None:
    """An event field (of the event's fields when ``events`` lists them) holding a number with a
    fraction or an exponent, which JSON Schema counts as an integer when it is whole (``1e0``)."""
    if type(obj) is not dict:
        return None
    listed = events.get(obj.get("event")) if isinstance(events, Mapping) else None
    names = ["seq", *(n for n, _ in listed)] if isinstance(listed, tuple) else list(obj)
    for name in names:
        value = obj.get(name)
        for v in value if type(value) is list else [value]:
            if type(v) is float:
                return f"{name}: {fraction_words(v)} {DIGITS_ALONE}"
    return None


def fraction_problem(integers: tuple[str, ...], one: str, many: str, why: str) -> Callable[[Any], str | None]:
    """What JSON Schema lets through, ``2.0`` being an integer to it and not to a trace: the words
    for a fraction in one of the ``integers`` fields, or in the ``one`` field or a ``many`` list
    (``why`` says what their values are). For ``line_problem``, after the schema's words."""

    def problem(obj: Any) -> str | None:
        if type(obj) is not dict:
            return None
        for name in integers:
            if type(obj.get(name)) is float:
                return f"{name}: {fraction_words(obj[name])} {DIGITS_ALONE}"
        listed = obj.get(many)
        for name, values in ((one, [obj.get(one)]), (many, listed if type(listed) is list else ())):
            for value in values:
                if type(value) is float:
                    return f"{name}: {fraction_words(value)} ({why})"
        return None

    return problem


@dataclass(frozen=True)
class FastFormat:
    """A design's trace format with one engine, ``fast`` (``Design.trace_format`` names it)."""

    design: str
    rules: Mapping[int, str]
    prefix_rule: int  # the rule a trace that ends before its stop_end is judged by
    how: str  # the engine in a few words, for refusing another
    header_problem: Callable[[Any], str | None]  # why line 1 (parsed) is not a header, or None
    start: Callable[[dict[str, Any]], FastStart]  # the header's config -> the model and the checks
    engines: tuple[str, ...] = (ENGINE,)
    takes_complete: bool = True  # a run that deadlocked has no stop_end: --complete judges its end

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> Verdict:
        if engine != ENGINE:
            raise ValueError(f"{self.design} traces have one engine, {ENGINE} ({self.how}); not {engine!r}")
        return self.judge(header, it, complete=complete)

    def judge(self, header: Any, it: Iterator[str], *, complete: bool = False) -> Verdict:
        """The verdict on a trace whose line 1 is ``header`` (parsed) and whose later lines ``it`` gives."""
        verdicts = Verdicts(self.design, ENGINE)
        bad = self.header_problem(header)
        if bad is not None:
            return verdicts.malformed(Malformed(1, f"line 1: {bad}"))
        model, checks, problem = self.start(header["config"])
        handlers = model.handlers
        parse = parse_line
        expected = 1  # the next seq; the events judged so far are ``expected - 1``
        line_no = 1
        ev: Event | None = None
        try:
            for raw in it:
                line_no += 1
                obj = parse(raw, line_no)
                # The common fields inline, the event's own in one call: this is the hot path.
                try:
                    seq = obj["seq"]
                    good = type(seq) is int and type(obj["thread"]) is str and checks[obj["event"]](obj)
                except (KeyError, TypeError, IndexError):  # missing, unhashable, or not an object
                    good = False
                if not good or type(obj) is not dict:
                    raise Malformed(line_no, f"line {line_no}: {problem(obj)}")
                if seq != expected:
                    if seq < 1:
                        raise Malformed(line_no, f"line {line_no}: {problem(obj)}")
                    raise Malformed(
                        line_no,
                        f"line {line_no}: seq {seq} where {expected} was expected (a gap or reorder in seq)",
                    )
                ev = obj
                handlers[obj["event"]](obj)
                expected += 1
            ev = None
            model.finish(complete)
        except Malformed as malformed:
            return verdicts.malformed(malformed, expected - 1)
        except Rejected as rejected:
            # At the end, a model may name the event the end leaves unanswered (its ``seq``).
            return verdicts.rejected(rejected, ev, expected - 1, model.describe())
        events = expected - 1
        if complete or model.stopped:
            return verdicts.complete(events, "ends after stop_end" if model.stopped else "--complete")
        ends_before = "stop_end ok (pass --complete when the run is over)"
        return verdicts.prefix(events, ends_before, self.prefix_rule, model.pending(), model.describe())


__all__ = ["ENGINE", "FastFormat", "FastModel", "FastStart", "event_ok", "line_problem"]
