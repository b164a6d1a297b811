"""What every registered design must show, whoever wrote it: each seeded spec bug is caught with
the property it names and a shortest counterexample of exactly the length it states, and one
step less finds nothing (so a weaker checker, or a vacuous spec, shows at once); a liveness
mutant's fair cycle is found and its spec breaks no safety property."""

from __future__ import annotations

import pytest

from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import designs

MUTANTS = [(d.name, m.name) for d in designs().values() for m in d.mutants.values()]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("design", "mutant"), MUTANTS)
def test_every_spec_mutant_is_caught_with_its_shortest_counterexample(design: str, mutant: str) -> None:
    d = designs()[design]
    m = d.mutants[mutant]
    constants = m.constants(d.config(m.config))
    result = check(m.spec, constants, Options())
    assert result.verdict == "violated"
    assert result.violation is not None and result.counterexample is not None
    assert result.violation.name == m.expect, result.violation.reason
    assert result.counterexample.length == m.length
    if result.violation.kind == "liveness":
        # A lasso, not a shortest path: a depth bound below it may still see the whole (shallow)
        # graph. What must hold instead: the bug breaks no safety property, only the fair cycle.
        assert check(m.spec, constants, Options(liveness=False)).verdict == "holds"
        return
    shorter = check(m.spec, constants, Options(max_depth=m.length - 1))
    assert shorter.verdict == "incomplete"
    assert shorter.incomplete_reason is not None and "depth bound" in shorter.incomplete_reason


@pytest.mark.timeout(300)
@pytest.mark.parametrize("design", list(designs()))
def test_every_design_holds_where_verify_quick_checks_it(design: str) -> None:
    d = designs()[design]
    result = check(d.spec, d.config(d.quick), Options(), config=d.quick)
    assert result.verdict == "holds", result.violation
