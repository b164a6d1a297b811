"""The pool spec holds at its configurations, each invariant fails on its bad case, every mutant is
caught, and the reference's pure decision agrees with the spec's on every reachable state."""

from __future__ import annotations

import pytest

from model_checks.designs.job_pool import DESIGN
from model_checks.designs.job_pool.configs import CONFIGS
from model_checks.designs.job_pool.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import design
from reference.jobs.pool_policy import Observation, PoolPolicy, PoolState, decide
from spec import job_pool as jp
from spec.job_pool import RUNNING, SPEC, STOPPED, STOPPING, Constants, Vars
from spec.language import Instance, SpecError
from tests.spec_helpers import assert_holds, assert_reads_cover, reachable

pytestmark = pytest.mark.timeout(120)

UNIT = 1 << 20  # one spec memory unit as bytes
NOW = 1000.0


def test_the_design_is_registered_with_its_configurations_and_mutants() -> None:
    assert design("job-pool") is DESIGN
    assert set(DESIGN.configs) == {"small", "standard", "zero-min"}
    assert set(MUTANTS) == {
        "ignore-max",
        "draining-uncounted",
        "below-min",
        "ignore-memory-gate",
        "never-scale-down",
    }


@pytest.mark.parametrize(("config", "states"), [("small", 3693), ("zero-min", 3965), ("standard", 57621)])
def test_each_configuration_holds_with_every_action_fired(config: str, states: int) -> None:
    result = assert_holds(SPEC, CONFIGS[config], config, states=states, unfired=[])
    assert {"ScalesDownWhenIdle", "ShutdownCompletes"} <= set(result.properties_checked)


@pytest.fixture(scope="module")
def small_states() -> list[Vars]:
    return reachable(SPEC, CONFIGS["small"])


def test_small_reaches_the_maximum_the_gate_holding_back_the_minimum_and_a_clean_stop(
    small_states: list[Vars],
) -> None:
    c = CONFIGS["small"]
    assert any(s.active + s.draining == c.max_workers for s in small_states)
    held = [s for s in small_states if s.phase == RUNNING and s.active + s.crashed < c.min_workers]
    assert held, "the memory gate never held the minimum back: NeverBelowMin was never at stake"
    assert any(s.started > 0 and s.seen_free < (s.started + 1) * c.peak + c.margin for s in small_states)
    assert any(s.phase == STOPPED for s in small_states)
    assert any(s.phase == STOPPING and s.busy == 0 and s.draining > 0 for s in small_states)


def test_the_reads_hints_cover_what_the_invariants_read(small_states: list[Vars]) -> None:
    assert_reads_cover(SPEC, CONFIGS["small"], small_states)


# ------------------------------------------------------------------ each invariant fails on its bad case

BASE = next(iter(jp.Init(CONFIGS["small"])))._replace(phase=RUNNING, active=1)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("NeverAboveMax", BASE._replace(active=2, draining=1)),
        ("NeverBelowMin", BASE._replace(active=0, seen_free=8, started=0)),
        ("NoStartAgainstGate", BASE._replace(seen_free=4, started=2)),
        ("StoppedMeansNoWorker", BASE._replace(phase=STOPPED, exited=1, active=0)),
    ],
)
def test_each_invariant_fails_on_its_bad_case(name: str, bad: Vars) -> None:
    c = CONFIGS["small"]
    inv = next(i for i in SPEC.invariants if i.name == name)
    assert inv.fn(c, bad) is not None
    assert inv.fn(c, BASE) is None


def test_a_bad_configuration_is_refused() -> None:
    with pytest.raises(SpecError, match="min_workers"):
        Instance(SPEC, Constants(min_workers=3, max_workers=2))


# ------------------------------------------------------------------ mutants


@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_is_caught_with_its_shortest_counterexample(name: str) -> None:
    m = MUTANTS[name]
    result = check(m.spec, CONFIGS[m.config], Options())
    assert result.verdict == "violated"
    assert result.violation is not None and result.violation.name == m.expect
    assert result.counterexample is not None and result.counterexample.length == m.length


def test_never_scaling_down_is_safe_only_liveness_catches_it() -> None:
    m = MUTANTS["never-scale-down"]
    assert check(m.spec, CONFIGS["small"], Options(liveness=False)).verdict == "holds"


# ------------------------------------------------------------------ the spec and the code agree


def reference_decision(c: Constants, s: Vars) -> tuple[int, int, int | None]:
    """The reference's ``decide`` on the spec state ``s`` (already reaped), in the spec's terms."""
    policy = PoolPolicy(c.min_workers, c.max_workers, float(c.grace), c.peak * UNIT, c.margin * UNIT)
    seen = Observation(
        now=NOW,
        active=s.active,
        busy=s.busy,
        draining=s.draining,
        backlog=s.backlog,
        available=jp.Free(c, s) * UNIT,
        peak=c.peak * UNIT,
        stopping=s.phase == STOPPING,
    )
    state = PoolState(None if s.idle_for is None else NOW - s.idle_for)
    got = decide(policy, state, seen)
    idle = None if got.state.idle_since is None else round(NOW - got.state.idle_since)
    return got.start, got.stop, idle


@pytest.mark.parametrize("config", ["small", "zero-min", "standard"])
def test_the_reference_decides_as_the_spec_on_every_reachable_state(config: str) -> None:
    c = CONFIGS[config]
    views = {
        jp.Reaped(s)._replace(phase=RUNNING if s.phase == jp.STARTING else s.phase)
        for s in reachable(SPEC, c)
    }
    views = {v for v in views if v.phase != STOPPED}
    assert len(views) > 100
    for view in views:
        assert reference_decision(c, view) == jp.Decide(c, view), view


def test_the_agreement_check_sees_a_drifted_decision() -> None:
    """A reference that forgot the busy workers would disagree somewhere: the comparison can fail."""
    c = CONFIGS["small"]
    views = [jp.Reaped(s) for s in reachable(SPEC, c) if s.phase == RUNNING]
    drifted = [v for v in views if reference_decision(c, v._replace(busy=0)) != jp.Decide(c, v)]
    assert drifted
