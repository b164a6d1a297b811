"""`lanecheck verify` rows: the Schedule Gate reference under the harness, correct and mutated.

Every execution of the clean scenarios is traced and its trace validated against
the spec (``gate_program(validate=True)``), and the data-race detector runs in
every one of them (a plain shared access left unsynchronised fails the row); each
mutant's failing trace must be rejected by ``lanecheck validate`` at a located seq.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from model_checks.conformance.validator import validate_lines
from model_checks.designs.schedule_gate.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.schedule_gate.scenarios import MUTANT_SCENARIOS, failure_lines, gate_program
from model_checks.harness.api import check
from model_checks.harness.design_rows import granular, mutant_row, no_failing_trace, rejected_trace_row
from model_checks.harness.options import Options
from model_checks.verify import VerifyRow
from reference.schedule_gate import GateScheduler

# The clean scenarios: (row subject, its verdict, ``gate_program``'s arguments, the search's options).
CLEAN: tuple[tuple[str, str, dict[str, Any], Options], ...] = (
    (
        "schedule-gate reference, one producer (every trace validated)",
        "exhaustive",
        {"script": ((0,),)},
        Options(time_limit=60, races=True),
    ),
    (
        "schedule-gate reference, two producers (every trace validated)",
        "bounded",
        {"yield_in_handler": True},
        # every schedule with at most one preemption (3,411 executions): a count, not a time
        # limit, bounds it, so reruns explore the same executions on any machine
        Options(preemption_bound=1, races=True),
    ),
)


def rows(quick: bool) -> Iterator[VerifyRow]:
    for subject, expect, kwargs, options in CLEAN:
        result = check(gate_program(GateScheduler, validate=True, **kwargs), options)
        expect = granular(expect, bool(options.races))
        actual = granular("failed" if result.failure is not None else result.verdict, result.races)
        figures = result.figures()
        if expect == "bounded":
            figures += f"; bounded by {', '.join(result.bounded_by)}"
        yield VerifyRow("harness", subject, expect, actual, figures, result.elapsed)
    for name, mutant in REFERENCE_MUTANTS.items():
        kwargs, options = MUTANT_SCENARIOS[name]
        result = check(gate_program(mutant.build, traced=True, **kwargs), options)
        yield mutant_row(f"schedule-gate reference --mutant {name}", mutant.expect, result)
        started = time.perf_counter()
        subject = f"schedule-gate trace of reference --mutant {name}"
        if result.failure is None:
            yield no_failing_trace(subject)
            continue
        lines = failure_lines(result.failure, **kwargs)
        verdict = validate_lines(lines, complete=result.failure.kind == "lost_wakeup")
        yield rejected_trace_row(subject, lines, verdict, started)
