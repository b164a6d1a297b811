"""`lanecheck verify` rows: the event pool's traces under the harness, correct and mutated.

Every execution of the clean harness scenarios (``harness.EXHAUSTIVE`` and ``SAMPLED``) is
traced and its trace validated as a complete trace (``traced.traced_program``); each
reference mutant's failing trace must be rejected by the validator at a located seq. (The
harness verdicts themselves are the generic scenario rows of ``Design.scenarios``.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from model_checks.designs.event_pool.harness import EXHAUSTIVE, SAMPLED
from model_checks.designs.event_pool.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.event_pool.trace.traced import failure_lines, traced_program
from model_checks.designs.event_pool.trace.validate import validate_lines
from model_checks.harness.api import check
from model_checks.harness.design_rows import granular, no_failing_trace, quiet_reference, rejected_trace_row
from model_checks.harness.options import Options, Result
from model_checks.verify import VerifyRow

# verify --quick: the exhaustive scenarios below this many executions, and 50 sampled ones.
QUICK_EXECUTIONS = 200


def rows(quick: bool) -> Iterator[VerifyRow]:
    for name, (sc, executions, _) in EXHAUSTIVE.items():
        if quick and executions > QUICK_EXECUTIONS:
            continue
        result = check(traced_program(sc), Options(strategy="dpor", time_limit=120))
        yield _scenario_row(name, "exhaustive", result)
    for name, (sc, _) in SAMPLED.items():
        options = Options(strategy="pct", seed=1, max_executions=50 if quick else 500)
        yield _scenario_row(f"{name} [pct]", "bounded", check(traced_program(sc), options))
    yield from mutant_rows()


def _scenario_row(name: str, expect: str, result: Result) -> VerifyRow:
    expect = granular(expect, False)  # (the searches above run without the race detector)
    actual = granular("failed" if result.failure is not None else result.verdict, result.races)
    figures = result.figures() + (f"; {result.failure.message}" if result.failure else "")
    subject = f"event-pool scenario {name} (every trace validated)"
    return VerifyRow("conformance", subject, expect, actual, figures, result.elapsed)


def mutant_rows() -> Iterator[VerifyRow]:
    """Each reference mutant's failing trace, rejected at a located seq."""
    with quiet_reference():
        for name, m in REFERENCE_MUTANTS.items():
            started = time.perf_counter()
            program = traced_program(m.scenario, build=m.build, validate=False)
            result = check(program, Options(strategy="dpor", time_limit=60))
            subject = f"event-pool trace of reference --mutant {name}"
            if result.failure is None:
                yield no_failing_trace(subject)
                continue
            lines = failure_lines(result.failure, m.scenario.threads)
            # A lost wakeup ends the run in a deadlock: no stop_end, so the end is judged.
            verdict = validate_lines(lines, complete=result.failure.kind == "lost_wakeup")
            yield rejected_trace_row(subject, lines, verdict, started)
