"""The work-stealing trace format as `lanecheck validate` reaches it: ``FORMAT.validate``.

One pass over the lines (``conformance.fast_format``): each is parsed, checked by hand
(``fields.EventFields``; the schema words a refusal), and stepped through the sequential
model (``model.Model``).
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.fast_format import FastFormat, FastStart
from model_checks.conformance.reader import MAX_INDEXED, MAX_SIZE
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.designs.work_stealing.trace.fields import EventFields
from model_checks.designs.work_stealing.trace.model import Model
from model_checks.designs.work_stealing.trace.rules import PREFIX_RULE, RULES
from model_checks.designs.work_stealing.trace.schema import SCHEMA

DESIGN = "work-stealing"


# The header's sizes: the validator holds a deque per worker.
HEADER_LIMITS = {"workers": MAX_INDEXED, "capacity": MAX_SIZE}


def config_problem(header: Any) -> str | None:
    """Why line 1 (parsed) is not a work-stealing header, or None."""
    # ``limits_problem`` refuses a size that is no integer (JSON Schema takes 2.0 for one).
    problem = limits_problem(header, HEADER_LIMITS) or SCHEMA.header_problem(header)
    if problem is not None:
        return problem
    capacity = header["config"]["capacity"]
    if capacity & (capacity - 1):
        return f"config.capacity must be a power of two, not {capacity}"
    return None


def start(config: dict[str, Any]) -> FastStart:
    workers = config["workers"]
    fields = EventFields(workers)
    return FastStart(Model(workers, config["capacity"], config["pool"]), fields.checks, fields.problem)


FORMAT = FastFormat(
    design=DESIGN,
    rules=RULES,
    prefix_rule=PREFIX_RULE,
    how="a sequential model of the deques",
    header_problem=config_problem,
    start=start,
)


# The verdict on a trace whose line 1 is ``header`` (parsed) and whose later lines ``it`` gives.
judge = FORMAT.judge
