"""The event-pool trace format as `lanecheck validate` reaches it: ``FORMAT.validate``.

One pass over the lines: each is parsed (``reader.parse_line``: strict JSON within the
limits), checked by hand (``fields``; the schema words a refusal) and stepped through the
pool's state (``model.Model``). Exit codes and verdicts as for every design: 0 allowed
(complete, or an allowed prefix with what is pending), 1 not allowed (the first seq and
its rule), 2 not a well-formed trace (the line).

A rejection at the end of a complete trace names the event the end leaves unanswered when
there is one (the wait of a thread that sleeps for good beside listed work), else no seq.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from model_checks.conformance.reader import MAX_INDEXED, parse_line, text_lines
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.conformance.verdict import ALLOWED, MALFORMED, NOT_ALLOWED, Malformed, Rejected, Verdict
from model_checks.designs.event_pool.trace.fields import CHECKS, problem
from model_checks.designs.event_pool.trace.model import LocatedRejected, Model
from model_checks.designs.event_pool.trace.rules import PREFIX_RULE, RULES
from model_checks.designs.event_pool.trace.schema import header_problem

DESIGN = "event-pool"
ENGINE = "fast"


def config_problem(header: Any) -> str | None:
    """Why line 1 (parsed) is not an event-pool header, or None."""
    problem_ = limits_problem(header, {"threads": MAX_INDEXED}) or header_problem(header)
    if problem_ is not None:
        return problem_
    threads = header["config"]["threads"]
    # JSON Schema takes 2.0 and (in some drafts) true for an integer; a size may be neither.
    if type(threads) is not int:
        return f"config.threads must be an integer, not {threads!r}"
    if threads > MAX_INDEXED:
        return f"config.threads = {threads} is above the limit of {MAX_INDEXED:,}"
    return None


class EventPoolFormat:
    """The event-pool trace format (docs/event-pool.md): one engine, the pool's state stepped by hand."""

    design = DESIGN
    rules = RULES
    takes_complete = True  # a deadlocked run has no stop_end: --complete judges its end

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> Verdict:
        if engine != ENGINE:
            raise ValueError(
                f"event-pool traces have one engine, {ENGINE} (the pool's state stepped by hand); "
                f"not {engine!r}"
            )
        return judge(header, it, complete=complete)


def judge(header: Any, it: Iterator[str], *, complete: bool = False) -> Verdict:
    """The verdict on a trace whose line 1 is ``header`` (parsed) and whose later lines ``it`` gives."""
    bad = config_problem(header)
    if bad is not None:
        return Verdict(False, MALFORMED, f"line 1: {bad}", line=1, engine=ENGINE, design=DESIGN)
    model = Model(header["config"]["threads"])
    handlers = model.handlers
    checks = CHECKS
    parse = parse_line
    expected = 1  # the next seq; the events judged so far are ``expected - 1``
    line_no = 1
    ev: dict[str, Any] | None = None
    try:
        for raw in it:
            line_no += 1
            obj = parse(raw, line_no)
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
        return Verdict(
            False,
            MALFORMED,
            malformed.message,
            line=malformed.line,
            events=expected - 1,
            engine=ENGINE,
            design=DESIGN,
        )
    except Rejected as rejected:
        seq = ev["seq"] if ev is not None else getattr(rejected, "seq", None)
        where = f"seq {seq}: " if ev is not None else "at the end of the trace: "
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


def validate_lines(lines: Iterable[str], *, complete: bool = False) -> Verdict:
    """The verdict on a whole trace given as lines of text (header first), without the registry:
    what ``lanecheck validate`` says of an event-pool trace."""
    it = text_lines(lines)
    try:
        first = next(it, None)
        if first is None:
            raise Malformed(1, "line 1: empty file: the header is missing")
        header = parse_line(first, 1)
    except Malformed as malformed:
        return Verdict(False, MALFORMED, malformed.message, line=malformed.line, engine=ENGINE, design=DESIGN)
    return judge(header, it, complete=complete)


FORMAT = EventPoolFormat()

__all__ = ["DESIGN", "FORMAT", "EventPoolFormat", "LocatedRejected", "judge", "validate_lines"]
