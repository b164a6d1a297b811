"""Each spec mutant checked by the explorer (the shortest counterexample, breadth-first), with a time cap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model_checks.design import Design
from model_checks.explorer.check import CheckResult, check
from model_checks.explorer.search import Options
from model_checks.mutant import SpecMutant
from spec.language import SpecError

CAP_QUICK = 60.0
CAP = 300.0


@dataclass(frozen=True)
class MutantRun:
    mutant: SpecMutant
    constants: Any
    result: CheckResult | None
    error: str | None  # the check could not run (a configuration the spec refuses)

    @property
    def summary(self) -> str:
        m, r = self.mutant, self.result
        if r is None:
            return f"not checked: {self.error}"
        if r.violation is None or r.counterexample is None:
            return f"{r.verdict}: not caught ({r.incomplete_reason or 'no violation'})"
        got = f"{r.violation.name} in {r.counterexample.length} steps"
        same = r.violation.name == m.expect and r.counterexample.length == m.length
        return got + ("" if same else f" (expected {m.expect} in {m.length} steps)")


def run_mutant(design: Design, mutant: SpecMutant, quick: bool) -> MutantRun:
    try:
        constants = mutant.constants(design.config(mutant.config))
        result = check(
            mutant.spec, constants, Options(time_limit=CAP_QUICK if quick else CAP), config=mutant.config
        )
    except (SpecError, ValueError, KeyError, TypeError) as problem:
        return MutantRun(mutant, None, None, f"{type(problem).__name__}: {problem}")
    return MutantRun(mutant, constants, result, None)
