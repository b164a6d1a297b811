"""`lanecheck verify` rows for every design's harness scenarios (``Design.scenarios``).

A correct scenario must get its expected verdict ("exhaustive", or "bounded"
where its options bound the search: sampling is never a proof); a scenario
that seeds a bug must be caught with the failure kind it names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from model_checks.design import Design, Scenario
from model_checks.harness.api import check
from model_checks.harness.options import Options, Result
from model_checks.verify import VerifyRow


def run_scenario(scenario: Scenario, quick: bool) -> Result:
    fields = scenario.options if not quick or scenario.quick_options is None else scenario.quick_options
    if not scenario.must_fail:
        return check(scenario.build(), Options(**fields))
    # A seeded bug that breaks an invariant of the reference makes its last-resort loggers print a
    # traceback per execution; the row reports the failure, so those tracebacks are only noise.
    quiet = logging.getLogger("reference")
    previous = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        return check(scenario.build(), Options(**fields))
    finally:
        quiet.setLevel(previous)


def scenario_row(design: Design, scenario: Scenario, quick: bool) -> VerifyRow:
    result = run_scenario(scenario, quick)
    failure = result.failure
    figures = result.figures()
    if scenario.must_fail:
        expected = "caught"
        if failure is None:
            actual = f"missed ({result.verdict})"
        else:
            actual = "caught" if failure.kind == scenario.expect else f"caught as {failure.kind}"
        figures = f"expects {scenario.expect}; {figures}"
    else:
        expected = scenario.quick_expect if quick and scenario.quick_expect is not None else scenario.expect
        actual = "failed" if failure is not None else result.verdict
    if failure is not None:
        figures += (
            f"; {failure.kind}: {failure.message} ({failure.preemptions} preemptions, {failure.schedule})"
        )
    area = "harness-mutant" if scenario.must_fail else "harness"
    subject = scenario.subject or f"{design.name} scenario {scenario.name}"
    return VerifyRow(area, subject, expected, actual, figures, result.elapsed)


def rows(quick: bool, designs: Sequence[Design]) -> Iterator[VerifyRow]:
    for design in designs:
        for scenario in design.harness().values():
            if scenario.verify:
                yield scenario_row(design, scenario, quick)


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
