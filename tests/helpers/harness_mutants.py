"""A reference mutant under the harness: its scenario runs and fails the way the mutant must."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from model_checks.design import Scenario
from model_checks.harness import Options, check
from model_checks.harness.options import Failure


class _Expects(Protocol):
    @property
    def expect(self) -> str: ...


def caught(scenarios: Mapping[str, Scenario], mutants: Mapping[str, _Expects], name: str) -> Failure:
    """Runs ``mutant/<name>``: the scenario expects what the mutant declares, and the harness finds
    that kind of failure within two preemptions. The failure is returned for the design's own checks."""
    expect = mutants[name].expect
    scenario = scenarios[f"mutant/{name}"]
    assert scenario.expect == expect
    result = check(scenario.build(), Options(**scenario.options))
    failure = result.failure
    assert result.verdict == "failed" and failure is not None, f"{name} missed: {result.report()}"
    assert failure.kind == expect, failure.report()
    assert failure.preemptions <= 2, failure.report()
    return failure
