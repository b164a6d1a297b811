"""The work-stealing trace format as `lanecheck validate` reaches it: ``FORMAT.validate``.

One pass over the lines: each is parsed (``reader.parse_line``: strict JSON within the
limits), checked by hand (``fields.EventFields``; the schema words a refusal), and stepped
through the sequential model (``model.Model``). Exit codes and verdicts as for every
design: 0 allowed (complete, or an allowed prefix with what is pending), 1 not allowed
(the first seq and its rule), 2 not a well-formed trace (the line).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from model_checks.conformance.reader import MAX_INDEXED, MAX_SIZE, parse_line
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.conformance.verdict import ALLOWED, MALFORMED, NOT_ALLOWED, Malformed, Rejected, Verdict
from model_checks.designs.work_stealing.trace.fields import EventFields
from model_checks.designs.work_stealing.trace.model import Model
from model_checks.designs.work_stealing.trace.rules import RULES
from model_checks.designs.work_stealing.trace.schema import header_problem

DESIGN = "work-stealing"
ENGINE = "fast"
PREFIX_RULE = 9


# The header's sizes: the validator holds a deque per worker.
HEADER_LIMITS = {"workers": MAX_INDEXED, "capacity": MAX_SIZE}


def config_problem(header: Any) -> str | None:
    """Why line 1 (parsed) is not a work-stealing header, or None."""
    problem = limits_problem(header, HEADER_LIMITS) or header_problem(header)
    if problem is not None:
        return problem
    config = header["config"]
    for name in ("workers", "capacity"):  # JSON Schema takes 2.0 for an integer; a size may not be
        if type(config[name]) is not int:
            return f"config.{name} must be an integer, not {config[name]!r}"
    capacity = config["capacity"]
    if capacity & (capacity - 1):
        return f"config.capacity must be a power of two, not {capacity}"
    return None


class WorkStealingFormat:
    """The work-stealing trace format (docs/work-stealing-trace.md): one engine, the fast model."""

    design = DESIGN
    rules = RULES
    engines = (ENGINE,)

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> Verdict:
        if engine != ENGINE:
            raise ValueError(
                f"work-stealing traces have one engine, {ENGINE} (a sequential model of the deques); "
                f"not {engine!r}"
            )
        return judge(header, it, complete=complete)


def judge(header: Any, it: Iterator[str], *, complete: bool = False) -> Verdict:
    """The verdict on a trace whose line 1 is ``header`` (parsed) and whose later lines ``it`` gives."""
    problem = config_problem(header)
    if problem is not None:
        return Verdict(False, MALFORMED, f"line 1: {problem}", line=1, engine=ENGINE, design=DESIGN)
    config = header["config"]
    model = Model(config["workers"], config["capacity"], config["pool"])
    fields = EventFields(config["workers"])
    checks = fields.checks
    handlers = model.handlers
    parse = parse_line
    expected = 1  # the next seq; the events judged so far are ``expected - 1``
    line_no = 1
    ev: dict[str, Any] | None = None
    try:
        for raw in it:
            line_no += 1
            obj = parse(raw, line_no)
            # The common fields inline, the event's own in one call (``fields.EventFields.ok``).
            try:
                seq = obj["seq"]
                good = type(seq) is int and type(obj["thread"]) is str and checks[obj["event"]](obj)
            except (KeyError, TypeError, IndexError):  # missing, unhashable, or not an object
                good = False
            if not good or type(obj) is not dict:
                raise Malformed(line_no, f"line {line_no}: {fields.problem(obj)}")
            if seq != expected:
                if seq < 1:
                    raise Malformed(line_no, f"line {line_no}: {fields.problem(obj)}")
                raise Malformed(
                    line_no,
                    f"line {line_no}: seq {seq} where {expected} was expected (a gap or reorder in seq)",
                )
            ev = obj
            handlers[obj["event"]](obj)
            expected += 1
        ev = None
        model.finish(complete or model.stopped)
    except Malformed as bad:
        return Verdict(
            False, MALFORMED, bad.message, line=bad.line, events=expected - 1, engine=ENGINE, design=DESIGN
        )
    except Rejected as rejected:
        seq = ev["seq"] if ev is not None else None
        where = f"seq {seq}: " if seq is not None else "at the end of the trace: "
        return Verdict(
            False,
            NOT_ALLOWED,
            where + rejected.message,
            seq=seq,
            rule=rejected.rule,
            events=expected - 1,
            last_states=model.describe(),
            engine=ENGINE,
            design=DESIGN,
        )
    if complete or model.stopped:
        ended = "ends after stop_end" if model.stopped else "--complete"
        return Verdict(
            True,
            ALLOWED,
            f"allowed: {expected - 1} events, a complete behaviour ({ended})",
            events=expected - 1,
            engine=ENGINE,
            design=DESIGN,
        )
    pending, phrases = model.pending()
    tail = ("; pending — " + "; ".join(phrases)) if phrases else "; nothing pending"
    return Verdict(
        True,
        ALLOWED,
        f"allowed as a prefix: {expected - 1} events, the trace ends before stop_end ok "
        f"(pass --complete when the run is over) (rule {PREFIX_RULE}){tail}",
        prefix=True,
        rule=PREFIX_RULE,
        events=expected - 1,
        pending=pending,
        last_states=model.describe(),
        engine=ENGINE,
        design=DESIGN,
    )


FORMAT = WorkStealingFormat()
