"""The explorer's rows of `lanecheck verify`: each spec at its standard configuration, each mutant caught."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from model_checks.design import Design
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import DESIGNS
from model_checks.verify import VerifyRow, mutant_of

if TYPE_CHECKING:
    from model_checks.mutant import SpecMutant


def rows(
    quick: bool, designs: Sequence[Design] | None = None, *, only: str | None = None
) -> Iterator[VerifyRow]:
    """Each design's spec row, then one row per spec mutant.

    ``only`` (a part of the step, ``model_checks.verify.parts``): the spec row alone
    (``verify.SPEC_PART``), or the row of one mutant ("--variant NAME") without the spec row; a
    mutant's row does not use the spec row's result, so verify runs them as units of their own.
    """
    for d in DESIGNS.values() if designs is None else designs:
        mutant = mutant_of(only) if only is not None else None
        if only is None or mutant is None:
            yield spec_row(quick, d)
        if only is None:
            for m in d.mutants.values():
                yield mutant_row(d, m)
        elif mutant is not None:
            yield mutant_row(d, d.mutant(mutant))


def spec_row(quick: bool, d: Design) -> VerifyRow:
    config = d.quick if quick else d.standard
    result = check(d.spec, d.config(config), Options(), config=config)
    s = result.stats
    figures = (
        f"{s.states:,} states, {s.transitions:,} transitions, depth {s.depth},"
        f" {s.states_per_second:,.0f} states/s"
    )
    if result.incomplete_reason:
        figures += f"; {result.incomplete_reason}"
    if result.violation is not None:
        figures += f"; {result.violation.name}: {result.violation.reason}"
    return VerifyRow("spec", f"{d.name} [{config}]", "holds", result.verdict, figures, s.seconds)


def mutant_row(d: Design, m: SpecMutant) -> VerifyRow:
    r = check(m.spec, m.constants(d.config(m.config)), Options(), config=m.config)
    caught = r.verdict == "violated" and r.violation is not None and r.violation.name == m.expect
    length = r.counterexample.length if r.counterexample else None
    actual = (
        "caught"
        if caught and length == m.length
        else ("missed" if r.verdict != "violated" else "caught-differently")
    )
    got = f"{r.violation.name} in {length} steps" if r.violation else r.verdict
    return VerifyRow(
        "spec-mutant",
        f"{d.name} --variant {m.name}",
        "caught",
        actual,
        f"expects {m.expect} in {m.length} steps; got {got}",
        r.stats.seconds,
    )
