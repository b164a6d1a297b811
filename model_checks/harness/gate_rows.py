"""`lanecheck verify` rows: the Schedule Gate reference under the harness, correct and mutated."""

from __future__ import annotations

from collections.abc import Iterator

from model_checks.harness.api import check
from model_checks.harness.gate_scenarios import MUTANT_SCENARIOS, gate_program
from model_checks.harness.mutant_rows import mutant_row
from model_checks.harness.options import Options
from model_checks.mutants.schedule_gate_reference import REFERENCE_MUTANTS
from model_checks.verify import VerifyRow
from reference.schedule_gate import GateScheduler


def rows(quick: bool) -> Iterator[VerifyRow]:
    result = check(gate_program(GateScheduler, script=((0,),)), Options(time_limit=60))
    actual: str = "failed" if result.failure is not None else result.verdict
    yield VerifyRow(
        "harness",
        "schedule-gate reference, one producer",
        "exhaustive",
        actual,
        result.figures(),
        result.elapsed,
    )
    result = check(
        gate_program(GateScheduler, yield_in_handler=True), Options(preemption_bound=1, time_limit=60)
    )
    actual = "failed" if result.failure is not None else result.verdict
    figures = f"{result.figures()}; bounded by {', '.join(result.bounded_by)}"
    yield VerifyRow(
        "harness", "schedule-gate reference, two producers", "bounded", actual, figures, result.elapsed
    )
    for name, mutant in REFERENCE_MUTANTS.items():
        kwargs, options = MUTANT_SCENARIOS[name]
        result = check(gate_program(mutant.build, **kwargs), options)
        yield mutant_row(f"schedule-gate reference --mutant {name}", mutant.expect, result)
