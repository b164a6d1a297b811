"""`lanecheck verify` rows: the job store under the harness, correct and mutated.

Every step of the clean scenarios is checked against the spec's state invariants and the trace
validator, and every execution's whole trace, closed by the store's counts, must be a complete run;
each reference mutant must be caught, and its failing trace rejected by `lanecheck validate` at a
located seq where the trace alone shows the bug.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.admission.scenarios import (
    CLEAN_OPTIONS,
    MUTANT_SCENARIOS,
    SETUPS,
    failure_lines,
    jobs_program,
)
from model_checks.harness.api import check
from model_checks.harness.design_rows import granular, mutant_row, no_failing_trace, rejected_trace_row
from model_checks.verify import VerifyRow
from reference.jobs.inmemory import InMemoryStore

QUICK = ("contended-budget", "lease-expiry", "uncontended")


def rows(quick: bool) -> Iterator[VerifyRow]:
    for name, setup in SETUPS.items():
        if quick and name not in QUICK:
            continue
        result = check(jobs_program(InMemoryStore, setup), CLEAN_OPTIONS[name])
        actual = granular("failed" if result.failure is not None else result.verdict, result.races)
        figures = result.figures()
        if result.failure is not None:
            figures += f"; {result.failure.kind}: {result.failure.message}"
        yield VerifyRow(
            "harness",
            f"admission reference (in-memory store), {name} (every step and trace validated)",
            granular("exhaustive", bool(CLEAN_OPTIONS[name].races)),
            actual,
            figures,
            result.elapsed,
        )
    for name, mutant in REFERENCE_MUTANTS.items():
        setup_name, options = MUTANT_SCENARIOS[name]
        result = check(jobs_program(mutant.build(InMemoryStore), SETUPS[setup_name]), options)
        yield mutant_row(f"admission reference --mutant {name}", mutant.expect, result)
        if not mutant.trace_shows:
            continue
        started = time.perf_counter()
        subject = f"admission trace of reference --mutant {name}"
        if result.failure is None:
            yield no_failing_trace(subject)
            continue
        lines = failure_lines(result.failure)
        yield rejected_trace_row(subject, lines, validate_lines(lines), started, mutant.rules)
