"""`lanecheck verify` rows for every design's harness scenarios (``Design.scenarios``).

A correct scenario must get its expected verdict ("exhaustive", or "bounded"
where its options bound the search: sampling is never a proof); a scenario
that seeds a bug must be caught with the failure kind it names.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from model_checks.conformance.verdict import Verdict
from model_checks.design import Design, Program, Scenario
from model_checks.harness.api import check
from model_checks.harness.options import STATES, Options, Result
from model_checks.harness.stateful import check_states
from model_checks.verify import VerifyRow

SYNC_POINTS_ONLY = "exhaustive (synchronisation points only)"


def granular(verdict: str, races: bool) -> str:
    """A row's verdict with the granularity of a proof: "exhaustive" of a search run without the
    race detector covers synchronisation points only (so both the verdict a row expects and the
    one it got say which proof it is: a row expecting one proof is not met by the other)."""
    return SYNC_POINTS_ONLY if verdict == "exhaustive" and not races else verdict


@contextlib.contextmanager
def quiet_reference() -> Iterator[None]:
    """Silence the reference's loggers for the block.

    A seeded bug that breaks an invariant of the reference makes its last-resort loggers print a
    traceback per execution; the row reports the failure, so those tracebacks are only noise."""
    quiet = logging.getLogger("reference")
    previous = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        quiet.setLevel(previous)


def run_scenario(scenario: Scenario, quick: bool) -> Result:
    fields = scenario.search_options(quick)
    with quiet_reference() if scenario.must_fail else contextlib.nullcontext():
        return _search(scenario.program(for_states=fields.get("strategy") == STATES), fields)


def expected_verdict(scenario: Scenario, quick: bool) -> str:
    """The verdict a correct scenario's run must give (``--quick`` may sample where the full run proves)."""
    return scenario.quick_expect if quick and scenario.quick_expect is not None else scenario.expect


def _search(program: Program, fields: Mapping[str, Any]) -> Result:
    if fields.get("strategy") == STATES:
        # The state search (harness/stateful.py): a proof over abstract states where DPOR's
        # traces are too many; its verdict names that granularity.
        return check_states(program, Options(**{**fields, "strategy": "dfs"}))
    return check(program, Options(**fields))


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
        expected = expected_verdict(scenario, quick)
        actual = "failed" if failure is not None else result.verdict
        expected = granular(expected, bool(scenario.search_options(quick).get("races")))
        actual = granular(actual, result.races)
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


def no_failing_trace(subject: str) -> VerifyRow:
    """The row of a mutant whose harness run failed nowhere: it left no trace to reject."""
    return VerifyRow("conformance", subject, "rejected", "no failing trace", "", 0.0)


def rejected_trace_row(
    subject: str,
    lines: Sequence[str],
    verdict: Verdict,
    started: float,
    rules: Collection[int] | None = None,
) -> VerifyRow:
    """A mutant's failing trace (``lines``, its header first) must be rejected at a located seq,
    and, where ``rules`` are given, by one of them."""
    located = verdict.code == 1 and verdict.seq is not None
    if rules is None:
        actual = "rejected" if located else f"exit {verdict.code}"
    else:
        located = located and verdict.rule in rules
        actual = "rejected" if located else f"exit {verdict.code}, rule {verdict.rule}"
    return VerifyRow(
        "conformance",
        subject,
        "rejected",
        actual,
        f"seq {verdict.seq} of {len(lines) - 1}, rule {verdict.rule}: {verdict.message}",
        time.perf_counter() - started,
    )
