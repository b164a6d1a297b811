"""The event-pool format against its sources: every harness trace of the reference, the spec's
behaviours (random walks, the exported covering set, the mutants' counterexamples), and the
link comparison of the two on the smallest scenarios."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from model_checks.conformance.export import random_walk
from model_checks.designs.event_pool.configs import CONFIGS
from model_checks.designs.event_pool.harness import EXHAUSTIVE, SAMPLED
from model_checks.designs.event_pool.scenarios import PoolScenario
from model_checks.designs.event_pool.spec_mutants import MUTANTS
from model_checks.designs.event_pool.trace import validate_lines
from model_checks.designs.event_pool.trace.export import covering_traces, export, project, trace_lines
from model_checks.designs.event_pool.trace.link import reference_traces, spec_traces
from model_checks.designs.event_pool.trace.traced import traced_program
from model_checks.explorer.check import check as explore
from model_checks.explorer.search import Options as ExplorerOptions
from model_checks.harness import Options, check
from reference.event_pool import EventPool, PoolThread
from spec import event_pool as ep


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", sorted(EXHAUSTIVE))
def test_every_trace_of_each_exhaustive_scenario_is_a_complete_allowed_trace(name: str) -> None:
    sc, executions, _ = EXHAUSTIVE[name]
    result = check(traced_program(sc), Options(strategy="dpor", time_limit=120))
    assert result.verdict == "exhaustive", result.report()
    assert result.executions == executions


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_every_trace_of_each_sampled_scenario_is_allowed(name: str) -> None:
    sc, _ = SAMPLED[name]
    result = check(traced_program(sc), Options(strategy="pct", seed=1, max_executions=100))
    assert result.verdict == "bounded", result.report()


class DoubleWaitPool(EventPool):
    """Behaves correctly but logs its wait twice: only the trace is wrong."""

    def _wait(self, me: PoolThread) -> int:
        if self._tracer is not None:
            self._tracer.emit(me.name, "wait", {})
        return super()._wait(me)


@pytest.mark.timeout(60)
def test_the_per_execution_validation_fails_on_a_bad_trace() -> None:
    result = check(traced_program(PoolScenario(threads=1, posts=1), build=DoubleWaitPool), Options())
    assert result.failure is not None and "trace not allowed" in result.failure.message, result.report()
    assert "t0 logs wait, but its next event can only be wake" in result.failure.message


@pytest.mark.timeout(120)
def test_random_behaviours_of_the_spec_are_complete_allowed_traces() -> None:
    rng = random.Random(7)
    for name in ("small", "standard"):
        c = CONFIGS[name]
        for _ in range(150):
            lines = trace_lines(c, project(random_walk(ep.SPEC, c, rng)))
            verdict = validate_lines(lines, complete=True)
            assert verdict.code == 0, (name, verdict.message, lines)


@pytest.mark.timeout(120)
def test_export_writes_the_covering_traces_each_allowed(tmp_path: Path) -> None:
    traces = covering_traces(CONFIGS["small"])
    events = {line.split('"event": ')[1].split('"')[1] for t in traces for line in t[1:]}
    assert events == {
        "post",
        "signal",
        "wait",
        "wake",
        "take",
        "run",
        "done",
        "cancel",
        "stop_begin",
        "stop_end",
    }
    written = export(tmp_path / "out", CONFIGS["small"])
    assert [p.name for p in written] == [f"event-pool-{n:03d}.jsonl" for n in range(1, len(traces) + 1)]
    for p in written:
        verdict = validate_lines(p.read_text(encoding="utf-8").splitlines())
        assert verdict.code == 0 and not verdict.prefix, verdict.message


# The spec mutants' counterexamples as traces: where the validator sees the bug, or why it cannot.
SPEC_MUTANT_VERDICTS = {
    "unlocked-check-then-wait": (9, 4),  # the post after take null sees no idle thread
    "unlocked-next-index": (9, 7),  # the take of a cancelled work
    "if-instead-of-while": (9, 7),  # the take of work 3, never posted
    "signal-busy-thread": (3, 4),  # the second post picks busy t0 while t1 is idle
    # Allowed prefixes: the bug shows only in the next event, after the invariant fired.
    "pulse-instead-of-set": None,  # a lost pulse looks like a signal not yet consumed (a deadlock shows it)
    "manual-reset-never-reset": None,  # ends at the wait that returns at once; the wake after it is rejected
    "wait-after-done": None,  # ends at done; the wait after it (no take) is rejected
    "wait-ignores-running": None,  # `waited` is not a trace event: not observable
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(SPEC_MUTANT_VERDICTS))
def test_each_spec_mutants_counterexample_as_a_trace(name: str) -> None:
    assert set(SPEC_MUTANT_VERDICTS) == set(MUTANTS)
    m = MUTANTS[name]
    c = m.constants(CONFIGS["small"])
    result = explore(m.spec, c, ExplorerOptions())
    assert result.counterexample is not None
    verdict = validate_lines(trace_lines(c, project(result.counterexample.steps)))
    expected = SPEC_MUTANT_VERDICTS[name]
    if expected is None:
        assert verdict.code == 0 and verdict.prefix, verdict.message
    else:
        assert (verdict.code, verdict.seq, verdict.rule) == (1, *expected), verdict.message


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cancel", [False, True])
def test_link_every_reference_trace_is_a_spec_trace_on_the_smallest_scenarios(cancel: bool) -> None:
    """One thread, two submissions of one work object, wait (with or without cancel), close/stop.

    Every reference trace (all DPOR executions) is the projection of a spec behaviour; the spec
    has more (independent steps in other orders, which DPOR explores in one order only, and the
    reference's coarser steps: it settles a work and looks at the list in one critical section)."""
    spec = spec_traces(ep.Constants(threads=1, submits=2, cancel=cancel))
    ref, result = reference_traces(PoolScenario(threads=1, posts=2, api=True, cancel=cancel))
    assert result.verdict == "exhaustive", result.report()
    assert ref and ref <= spec, sorted(ref - spec)[:3]
    assert len(spec) > len(ref)


@pytest.mark.timeout(120)
def test_link_fails_against_a_mutated_spec() -> None:
    """The comparison can fail: a spec whose threads wait again after a callback without looking."""
    c = ep.Constants(threads=1, submits=2, cancel=True)
    mutated = spec_traces(c, MUTANTS["wait-after-done"].spec)
    ref, _ = reference_traces(PoolScenario(threads=1, posts=2, api=True, cancel=True))
    assert ref - mutated
