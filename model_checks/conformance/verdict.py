"""What a validation says: the ``Verdict`` (each design's format brings the rules it words)."""

from __future__ import annotations

from dataclasses import dataclass, field
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
        return {
            "allowed": self.allowed,
            "code": self.code,
            "message": self.message,
            "seq": self.seq,
            "line": self.line,
            "rule": self.rule,
            "rule_text": self.rule_text(),
            "prefix": self.prefix,
            "events": self.events,
            "pending": self.pending,
            "last_states": self.last_states,
            "engine": self.engine,
            "design": self.design,
        }


class Rejected(Exception):
    """Raised by an engine: no behaviour of the spec allows this event."""

    def __init__(self, rule: int, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


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
