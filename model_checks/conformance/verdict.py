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

# The rules of the schedule-gate format (docs/schedule-gate.md, "What a validator enforces").
GATE_RULES: dict[int, str] = {
    1: "permits: granted only while one is free and the actor is Idle, refused only when none is; "
    "released only when owed (a release_permit directive or a surplus after a lost CAS)",
    2: "admission: admit_begin with a permit only on an Idle gate, a join only on a runnable one; "
    "admit_end's directive is the gate table's for the replayed word",
    3: "publish: only between the producer's admit_begin and admit_end; ok only below mailbox_capacity, "
    "full only when full",
    4: "ready tokens: enqueued only by the thread a directive told to, taken in FIFO order, one per actor",
    5: "drains: drain_begin by the token's taker on a Scheduled gate; process in publish order within "
    "max_per_drain; drain_end's directive is the gate table's and `processed` the count",
    6: "a thread told to enqueue a token or release a permit does so before any other event of its own",
    7: "stop_end only when quiescent: every published event processed, every permit back, nothing owed",
    8: "a trace is judged as a prefix of some behaviour of the spec",
}

# The rules of the akka-mailbox format (docs/akka-mailbox.md, "Rules a validator enforces").
AKKA_RULES: dict[int, str] = {
    1: "one reservation: schedule only on an open, unscheduled word; each schedule followed by its execute",
    2: "the executor is FIFO: run_begins in execute order",
    3: "one runner: process/run_end on the thread of the run_begin; at most max(throughput, 1) "
    "processes per run; `processed` is their count",
    4: "FIFO per mailbox, nothing twice, nothing invented",
    5: "closed is absorbing: no send ok after close, and a logged `status` word is the spec's",
    6: "a complete trace ends with every ok message processed or dead-lettered (else a lost wakeup)",
    7: "a trace is judged as a prefix of some behaviour of the spec",
}

DESIGN_RULES: dict[str, dict[int, str]] = {
    "work-lane": RULES,
    "schedule-gate": GATE_RULES,
    "akka-mailbox": AKKA_RULES,
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
    design: str = "work-lane"

    def rule_text(self) -> str | None:
        """The rule broken (or, for a prefix, the prefix rule), in words."""
        if self.rule is None:
            return None
        return DESIGN_RULES.get(self.design, RULES).get(self.rule)

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
