"""`lanecheck verify` rows: every seeded bug of the Work Lane reference is caught under the harness."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from model_checks.harness.api import check
from model_checks.harness.options import Options, Result
from model_checks.harness.scenarios import LaneScenario, lane_program
from model_checks.mutants.work_lane_reference import REFERENCE_MUTANTS
from model_checks.verify import VerifyRow


def rows(quick: bool) -> Iterator[VerifyRow]:
    # A mutant that breaks the pool's invariant makes its last-resort logger print a traceback
    # per execution; the row reports the failure, so the tracebacks are only noise here.
    pool_log = logging.getLogger("reference.worker_pool")
    previous = pool_log.level
    pool_log.setLevel(logging.CRITICAL)
    try:
        yield from _rows()
    finally:
        pool_log.setLevel(previous)


def _rows() -> Iterator[VerifyRow]:
    for name, mutant in REFERENCE_MUTANTS.items():
        options = Options(strategy="dpor", spurious_wakeups=mutant.spurious_wakeups, time_limit=60)
        result = check(lane_program(LaneScenario(**mutant.scenario), build=mutant.build), options)
        yield mutant_row(f"work-lane reference --mutant {name}", mutant.expect, result)


def mutant_row(subject: str, expect: str, result: Result) -> VerifyRow:
    """A reference mutant's row: "caught" only with the failure kind it must produce."""
    failure = result.failure
    if failure is None:
        actual = f"missed ({result.verdict})"
    else:
        actual = "caught" if failure.kind == expect else f"caught as {failure.kind}"
    figures = f"expects {expect}; {result.figures()}"
    if failure is not None:
        figures += f"; {failure.preemptions} preemptions; schedule {failure.schedule}"
    return VerifyRow("harness-mutant", subject, "caught", actual, figures, result.elapsed)
