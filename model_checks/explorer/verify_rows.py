"""The explorer's rows of `lanecheck verify`: each spec at its standard configuration, each mutant caught."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from model_checks.design import Design
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import DESIGNS
from model_checks.verify import VerifyRow


def rows(quick: bool, designs: Sequence[Design] | None = None) -> Iterator[VerifyRow]:
    for d in DESIGNS.values() if designs is None else designs:
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
        yield VerifyRow("spec", f"{d.name} [{config}]", "holds", result.verdict, figures, s.seconds)
        for m in d.mutants.values():
            r = check(m.spec, m.constants(d.config(m.config)), Options(), config=m.config)
            caught = r.verdict == "violated" and r.violation is not None and r.violation.name == m.expect
            length = r.counterexample.length if r.counterexample else None
            actual = (
                "caught"
                if caught and length == m.length
                else ("missed" if r.verdict != "violated" else "caught-differently")
            )
            got = f"{r.violation.name} in {length} steps" if r.violation else r.verdict
            yield VerifyRow(
                "spec-mutant",
                f"{d.name} --variant {m.name}",
                "caught",
                actual,
                f"expects {m.expect} in {m.length} steps; got {got}",
                r.stats.seconds,
            )
