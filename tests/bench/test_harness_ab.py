"""``model_checks.bench.harness_ab``: patch mode's A/B figures (session 45)."""

from __future__ import annotations

import pytest

from model_checks.bench import harness_ab


@pytest.mark.timeout(120)
def test_the_rates_are_executions_per_cpu_second_with_the_load() -> None:
    figures = harness_ab.rates(2)
    assert figures["checks"] == 2
    assert figures["best"] >= figures["median"] > 0, figures
    assert set(figures) >= {"tree", "load_before", "load_after"}


@pytest.mark.timeout(120)
def test_the_callgrind_child_prints_its_executions(capsys: pytest.CaptureFixture[str]) -> None:
    harness_ab.main(["--run", "1"])
    assert capsys.readouterr().out.strip() == "151"  # (one check of two locked deposits, by DFS)
