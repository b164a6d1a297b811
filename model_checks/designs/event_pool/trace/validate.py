"""The event-pool trace format as `lanecheck validate` reaches it: ``FORMAT.validate``.

One pass over the lines (``conformance.fast_format``): each is parsed, checked by hand
(``fields``; the schema words a refusal) and stepped through the pool's state
(``model.Model``).

A rejection at the end of a complete trace names the event the end leaves unanswered when
there is one (the wait of a thread that sleeps for good beside listed work), else no seq.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from model_checks.conformance.fast_format import ENGINE, FastFormat, FastStart
from model_checks.conformance.lines import validate_with
from model_checks.conformance.reader import MAX_INDEXED
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.conformance.verdict import Verdict
from model_checks.designs.event_pool.trace.fields import CHECKS, problem
from model_checks.designs.event_pool.trace.model import LocatedRejected, Model
from model_checks.designs.event_pool.trace.rules import PREFIX_RULE, RULES
from model_checks.designs.event_pool.trace.schema import SCHEMA

DESIGN = "event-pool"


def config_problem(header: Any) -> str | None:
    """Why line 1 (parsed) is not an event-pool header, or None."""
    # ``limits_problem`` refuses a size that is no integer (JSON Schema takes 2.0 for one).
    return limits_problem(header, {"threads": MAX_INDEXED}) or SCHEMA.header_problem(header)


def start(config: dict[str, Any]) -> FastStart:
    return FastStart(Model(config["threads"]), CHECKS, problem)


FORMAT = FastFormat(
    design=DESIGN,
    rules=RULES,
    prefix_rule=PREFIX_RULE,
    how="the pool's state stepped by hand",
    header_problem=config_problem,
    start=start,
)


# The verdict on a trace whose line 1 is ``header`` (parsed) and whose later lines ``it`` gives.
judge = FORMAT.judge


def validate_lines(lines: Iterable[str], *, complete: bool = False) -> Verdict:
    """The verdict on a whole trace given as lines of text (header first), without the registry:
    what ``lanecheck validate`` says of an event-pool trace."""
    return validate_with(FORMAT, lines, engine=ENGINE, complete=complete)


__all__ = ["DESIGN", "FORMAT", "LocatedRejected", "judge", "validate_lines"]
