"""What a validation says: the ``Verdict`` (each design's format brings the rules it words)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

ALLOWED, NOT_ALLOWED, MALFORMED = 0, 1, 2


@dataclass(frozen=True)
class Verdict:
    """The result of validating one trace.

    ``code`` is the exit code: 0 allowed, 1 not allowed, 2 not a well-formed trace.
    ``seq`` is the first event no behaviour allows (code 1) and ``line`` the
    offending line (code 2). ``prefix`` is true when the trace ends before
    ``stop_end``; ``pending`` then lists what is still owed.
    """

    allowed: bool
    code: int
    message: str
    seq: int | None = None
    line: int | None = None
    rule: int | None = None
    prefix: bool = False
    events: int = 0
    pending: dict[str, Any] = field(default_factory=dict)
    last_states: list[dict[str, Any]] = field(default_factory=list)
    engine: str = "fast"
    design: str = ""  # the trace format that judged it (every format names itself)

    def rule_text(self) -> str | None:
        """The rule broken (or, for a prefix, the prefix rule), in words."""
        if self.rule is None:
            return None
        from model_checks.conformance.designs import design_format  # the registry knows the formats

        fmt = design_format(self.design)
        return None if fmt is None else fmt.rules.get(self.rule)

    def as_json(self) -> dict[str, Any]:
        """Every field by its name, in their order, and the broken rule in words after its number
        (read from the fields so that a field added is never left out of ``--json``)."""
        doc: dict[str, Any] = {}
        for f in fields(self):
            doc[f.name] = getattr(self, f.name)
            if f.name == "rule":
                doc["rule_text"] = self.rule_text()
        return doc


class Rejected(Exception):
    """Raised by an engine: no behaviour of the spec allows this event. At the end of a trace,
    ``seq`` may name the event the end leaves unanswered."""

    def __init__(self, rule: int, message: str, seq: int | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.seq = seq


class Malformed(Exception):
    """Raised while reading: the line is not part of a well-formed trace."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def plain(value: Any) -> Any:
    """``value`` with dict keys as strings and tuples as lists: a spec state as JSON can show it."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Verdicts:
    """How one engine's verdicts on one design's traces read: the same for every design and engine.

    ``events`` is always the number of events judged (taken by the engine) before the verdict."""

    design: str
    engine: str

    def verdict(self, allowed: bool, code: int, message: str, **more: Any) -> Verdict:
        return Verdict(allowed, code, message, engine=self.engine, design=self.design, **more)

    def malformed(self, problem: Malformed, events: int = 0) -> Verdict:
        return self.verdict(False, MALFORMED, problem.message, line=problem.line, events=events)

    def rejected(
        self, problem: Rejected, ev: dict[str, Any] | None, events: int, last_states: list[dict[str, Any]]
    ) -> Verdict:
        """``ev``: the event no behaviour takes; None when the end of the trace is what is refused."""
        seq = problem.seq if ev is None else ev["seq"]
        where = "at the end of the trace: " if ev is None else f"seq {seq}: "
        return self.verdict(
            False,
            NOT_ALLOWED,
            where + problem.message,
            seq=seq,
            rule=problem.rule,
            events=events,
            last_states=last_states,
        )

    def complete(self, events: int, why: str) -> Verdict:
        """Allowed, and the run is over (``why``: how the trace or the caller says so)."""
        return self.verdict(
            True, ALLOWED, f"allowed: {events} events, a complete behaviour ({why})", events=events
        )

    def prefix(
        self,
        events: int,
        ends_before: str,
        rule: int,
        pending: tuple[dict[str, Any], list[str]],
        last_states: list[dict[str, Any]],
    ) -> Verdict:
        """Allowed as a prefix of a behaviour: the trace ends before ``ends_before`` (by ``rule``),
        owing ``pending`` (as data and as phrases)."""
        owed, phrases = pending
        tail = ("; pending — " + "; ".join(phrases)) if phrases else "; nothing pending"
        return self.verdict(
            True,
            ALLOWED,
            f"allowed as a prefix: {events} events, the trace ends before {ends_before} (rule {rule}){tail}",
            prefix=True,
            rule=rule,
            events=events,
            pending=owed,
            last_states=last_states,
        )
