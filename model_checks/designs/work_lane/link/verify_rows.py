"""Rows of `lanecheck verify` for the checks that join spec, harness and reference (issue 5)."""

from __future__ import annotations

import time
from collections.abc import Iterator

from model_checks.designs.work_lane.link.classify import UNEXPLAINED, class_counts
from model_checks.designs.work_lane.link.comparisons import CASES, run_case
from model_checks.designs.work_lane.link.impl_to_spec import (
    ImplToSpec,
    check_harness_scenario,
    check_link_scenario,
)
from model_checks.designs.work_lane.link.real_threads import stress
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS
from model_checks.designs.work_lane.link.spec_to_impl import compare_by_automaton
from model_checks.designs.work_lane.link.three_places import three_places
from model_checks.designs.work_lane.scenarios import SCENARIO_OPTIONS
from model_checks.harness import Options
from model_checks.verify import VerifyRow

AREA = "conformance"
SMALL_SEED = 7
SMALL_EXECUTIONS = 100_000
SMALL_EXECUTIONS_QUICK = 8_000


def _bound(harness_verdict: str) -> str:
    """A sampled exploration is never reported as if it were complete."""
    return "" if harness_verdict == "exhaustive" else f" ({harness_verdict})"


def _impl_to_spec_row(r: ImplToSpec, more: str = "") -> VerifyRow:
    bound = _bound(r.harness)
    figures = f"{r.traces_validated} traces / {r.executions} executions ({r.harness}){more}"
    return VerifyRow(
        AREA, f"impl->spec {r.subject}", "allowed" + bound, r.verdict + bound, figures, r.seconds
    )


def rows(quick: bool) -> Iterator[VerifyRow]:
    cap = 300 if quick else 3_000
    for name in ["1x2-full-invalid", "2x1-cap1-full"] + ([] if quick else ["1x2-budget2", "2x1-same-lane"]):
        r = check_link_scenario(
            LINK_SCENARIOS[name], Options(strategy="dpor", max_steps=5_000, max_executions=cap)
        )
        yield _impl_to_spec_row(r, f", {r.events} events")
    for name in ["lanes-2x2-budget1", "stop-discard-races-posts"]:
        r = check_harness_scenario(name, SCENARIO_OPTIONS.with_(max_executions=cap))
        yield _impl_to_spec_row(r)
    # exhaustive within CI time; the full run adds two producers with two workers (~45 s)
    for case in CASES.values():
        if not (case.ci or (not quick and case.name == "2x1-same-lane")):
            continue
        c = run_case(case, time_limit=None if case.ci else 300)
        bound = _bound(c.harness)
        counts = class_counts(c.spec_only)
        expected = "no-impl-only-traces" if c.spec_only else "covered"
        if c.harness == "exhaustive" and UNEXPLAINED in counts:
            actual = "unexplained-spec-only"
        elif c.verdict == "incomplete":  # bounded, nothing outside the spec so far
            actual = expected
        else:
            actual = c.verdict
        yield VerifyRow(
            AREA,
            f"spec->impl {case.name}: {case.scenario.label()}",
            expected + bound,
            actual + bound,
            c.figures() + "".join(f"; spec-only {name}: {n}" for name, n in counts.items()),
            c.seconds,
        )
    # the whole small configuration: the spec side counted by its automaton, the reference sampled.
    # An execution count, not a time limit, bounds the sample, so a rerun (or a certificate's
    # check) runs the same executions on any machine; 100,000 is what 60 s reached on 2 idle cores.
    a = compare_by_automaton(
        LINK_SCENARIOS["small"],
        strategy="pct",
        max_executions=SMALL_EXECUTIONS_QUICK if quick else SMALL_EXECUTIONS,
        seed=SMALL_SEED,
    )
    yield VerifyRow(
        AREA,
        f"spec->impl small (automaton): {LINK_SCENARIOS['small'].label()}",
        "no-impl-only-traces (bounded)",
        ("no-impl-only-traces" if a.verdict == "incomplete" else a.verdict) + _bound(a.harness),
        a.figures(),
        a.seconds,
    )
    started = time.perf_counter()
    s = stress(runs=4 if quick else 20, items=5_000)
    yield VerifyRow(
        AREA,
        "real threads: reference traces",
        "allowed",
        s.verdict,
        f"{s.runs} runs, {s.items} posts, {s.events} events" + (f"; {s.rejected[0]}" if s.rejected else ""),
        time.perf_counter() - started,
    )
    # guided chooser (check 5): each pair takes well under a second, so quick runs all three
    for mutant in ["double-submit", "stop-skips-inflight", "check-outside-lock"]:
        t = three_places(mutant)
        yield VerifyRow(
            AREA,
            f"three places {t.reference_mutant} <-> {t.spec_mutant}",
            "same-step",
            t.verdict,
            t.figures(),
            t.seconds,
        )
