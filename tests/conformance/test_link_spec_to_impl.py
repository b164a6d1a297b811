"""Check 2 of issue 5: the spec's observable traces against the reference's (exhaustive DPOR).

Every comparison CI runs (``comparisons.CASES`` with ``ci``) is computed once per module; the
table in docs/conformance.md is generated from those results, so a change of the reference or of
the harness that changes what is logged fails ``test_docs_table_is_current`` instead of leaving
the document stale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.designs.work_lane.link.classify import UNEXPLAINED, class_counts, classify
from model_checks.designs.work_lane.link.comparisons import CASES, docs_block_of, docs_table, run_case
from model_checks.designs.work_lane.link.horizon import explore_to_horizon
from model_checks.designs.work_lane.link.scenario import (
    LINK_SCENARIOS,
    EventKey,
    Run,
    event_key,
    link_program,
    show,
)
from model_checks.designs.work_lane.link.spec_to_impl import Comparison, compare
from model_checks.designs.work_lane.link.spec_traces import TooManyTraces, spec_traces
from model_checks.harness import Options, check

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
CI_CASES = [name for name, case in CASES.items() if case.ci]
_results: dict[str, Comparison] = {}
# One xdist worker for the module, so that each comparison is computed once, not once a worker.
pytestmark = pytest.mark.xdist_group("link-spec-to-impl")


def result(name: str) -> Comparison:
    if name not in _results:
        _results[name] = run_case(CASES[name])
    return _results[name]


@pytest.mark.timeout(60)
def test_spec_trace_counts() -> None:
    assert len(spec_traces(LINK_SCENARIOS["1x2-full-invalid"].constants()).traces) == 5
    assert len(spec_traces(LINK_SCENARIOS["2x1-cap1-full"].constants()).traces) == 14


@pytest.mark.timeout(60)
@pytest.mark.timeout(60)
def test_a_trace_set_too_big_to_enumerate_is_refused_by_name() -> None:
    # the spec's trace set can grow exponentially with the scenario: past the bound the
    # enumeration stops and says so, instead of running on (or pretending to be complete)
    constants = LINK_SCENARIOS["2x1-cap1-full"].constants()
    with pytest.raises(TooManyTraces, match="not enumerated within 0 s"):
        spec_traces(constants, time_limit=0.0)
    with pytest.raises(TooManyTraces, match="more than 3 traces"):
        spec_traces(constants, max_traces=3)


def test_projection_merges_traces_that_differ_only_in_hidden_events() -> None:
    sc = LINK_SCENARIOS["2x1-cap1-full"]
    full = spec_traces(sc.constants())
    projected = spec_traces(sc.constants(), observed={"post", "invoke"})
    assert all(e[1] in ("post", "invoke") for t in projected.traces for e in t)
    assert 0 < len(projected.traces) < len(full.traces)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", CI_CASES)
def test_ci_case_is_exhaustive_and_explained(name: str) -> None:
    c = result(name)
    assert c.harness == "exhaustive", c.figures()
    assert not c.failure, c.failure
    unexplained = [show(t) for t in c.spec_only if classify(t) == UNEXPLAINED]
    assert not unexplained, "spec-only traces no class in classify.CLASSES explains:\n" + "\n".join(
        unexplained
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", CI_CASES)
def test_no_implementation_only_trace(name: str) -> None:
    # An implementation trace outside the spec is a failure. This one found a reference bug
    # (docs/conformance.md): on 1x1-stop-discard, drain_begin logged after stop_begin(discard).
    c = result(name)
    assert not c.impl_only, "\n".join(show(t) for t in c.impl_only)


@pytest.mark.timeout(120)
def test_two_producers_full_lane_conforms() -> None:
    # This comparison found a real bug (docs/conformance.md): the reference logged a post after
    # leaving the queue's critical section, so a drainer's invoke could be logged before the
    # post it made room for. Fixed in WorkLane._publish; it must stay fixed.
    c = result("2x1-cap1-full")
    assert not c.impl_only, c.figures()
    assert c.verdict == "covered", c.figures()


@pytest.mark.timeout(120)
def test_two_workers_one_item_covered() -> None:
    c = result("1x1-2w")
    assert c.verdict == "covered", c.figures()
    assert c.realised_transitions == c.spec_transitions  # both workers' Take realised


@pytest.mark.timeout(120)
def test_stop_discard_spec_only_traces_are_discard_before_take() -> None:
    counts = class_counts(result("1x1-stop-discard").spec_only)
    assert counts == {"discard-before-take": 2}, counts


@pytest.mark.timeout(120)
def test_docs_table_is_current() -> None:
    want = docs_table((CASES[n], result(n)) for n in CI_CASES)
    got = docs_block_of(DOCS.read_text(encoding="utf-8"))
    assert got == want, (
        "docs/conformance.md is stale: replace its generated block with the output of "
        "`lanecheck link compare --ci --docs`"
    )


@pytest.mark.timeout(60)
def test_bounded_comparison_says_so() -> None:
    c = compare(LINK_SCENARIOS["2x1-cap1-full"], max_executions=5)
    assert c.harness == "bounded" and c.verdict == "incomplete", c.figures()
    assert "max_executions=5" in c.figures()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["2x1-cap1-full", "1x1-2w"])
def test_horizon_loses_no_trace(name: str) -> None:
    # Abandoning executions at the cut must find exactly the traces that running every execution
    # to its end (the harness's own exhaustive DPOR, clean-up included) finds.
    sc = LINK_SCENARIOS[name]
    runs: list[Run] = []
    full = check(link_program(sc, runs.append), Options(strategy="dpor", max_steps=5_000))
    assert full.verdict == "exhaustive", full.summary()
    found = explore_to_horizon(lambda on_start: link_program(sc, _ignore, on_start=on_start))
    assert found.verdict == "exhaustive"
    assert found.executions <= full.executions
    assert found.traces == _traces(runs)


def _traces(runs: list[Run]) -> set[tuple[EventKey, ...]]:
    return {tuple(event_key(e) for e in run.events()) for run in runs}


def _ignore(run: Run) -> None:
    return None
