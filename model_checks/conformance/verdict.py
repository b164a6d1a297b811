"""What a validation says: the ``Verdict`` and the rules of the trace format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALLOWED, NOT_ALLOWED, MALFORMED = 0, 1, 2

RULES: dict[int, str] = {
    1: "the ready queue is FIFO and bounded; a submit never fails",
    2: "a lane has at most one reservation; a thread that owes a submission submits it first",
    3: "one drainer per lane, at most max_per_drain invokes per drain, `invoked` is that count",
    4: "FIFO per lane, nothing duplicated, nothing invoked that was not accepted",
    5: "no lost wakeup: drain_end idle only on an empty lane, resubmit only on a non-empty one",
    6: "capacity: ok only below lane_capacity, capacity_exceeded only when full",
    7: "stop: no post accepted after stop_begin; drain waits for every item; discard drops the rest",
    8: "a trace is judged as a prefix of some behaviour of the spec",
}


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

    def as_json(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "code": self.code,
            "message": self.message,
            "seq": self.seq,
            "line": self.line,
            "rule": self.rule,
            "rule_text": RULES.get(self.rule) if self.rule is not None else None,
            "prefix": self.prefix,
            "events": self.events,
            "pending": self.pending,
            "last_states": self.last_states,
            "engine": self.engine,
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
