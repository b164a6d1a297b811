"""The lock-free reference under the harness: scenario verdicts with execution counts, every mutant caught.

Measured (pure-Python harness core, 2 shared cores): one producer on one lane, Stop(drain):
exhaustive in 23 executions; two producers on one lane, Stop(drain) (``one-lane-drain``):
exhaustive in 12,715 executions, 270 s on a loaded machine (54,424 before the lane's trace locks,
which make each traced step one critical section of its object). Mutants (their rows validate the
trace), minimal counterexamples (steps, preemptions), measured before the trace locks added their
acquire/release steps: cas-before-push (76, 0), no-recheck (76, 0), idle-after-recheck (75, 0),
stop-skips-inflight (54, 1), reset-drops-unreported (62, 0).
"""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane_lockfree.harness import EXHAUSTIVE, SCENARIOS
from model_checks.designs.work_lane_lockfree.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane_lockfree.scenarios import (
    SCENARIO_SPECS,
    LockFreeScenario,
    lockfree_program,
)
from model_checks.harness import Options, check
from reference.runtime import Runtime
from reference.tracing import Tracer
from reference.work_lane_lockfree import LockFreePool, StopMode
from reference.worker_pool import WorkItem
from tests.helpers.harness_mutants import caught

pytestmark = pytest.mark.usefixtures("quiet_reference")


@pytest.mark.timeout(60)
def test_one_producer_is_exhaustive() -> None:
    result = check(lockfree_program(LockFreeScenario(producers=1)), Options(strategy="dpor", races=True))
    assert result.verdict == "exhaustive", result.report()
    assert result.executions >= 10 and result.outcomes == {(1, 1, 0, 0)}


# ~3 minutes: outside the suite (-m soak); `lanecheck verify` proves the same scenario in its row
@pytest.mark.soak
@pytest.mark.timeout(600)
def test_two_producers_one_lane_is_exhaustive_and_reaches_the_empty_drain() -> None:
    scenario = SCENARIOS["one-lane-drain"]
    assert "one-lane-drain" in EXHAUSTIVE and scenario.expect == "exhaustive"
    result = check(scenario.build(), Options(**scenario.options))
    assert result.verdict == "exhaustive", result.report()
    assert result.executions > 10_000  # measured: 12,715
    # (accepted, invoked, discarded, empty drains): every item ran, and some run drained nothing.
    assert result.outcomes == {(2, 2, 0, 0), (2, 2, 0, 1)}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", [n for n in SCENARIO_SPECS if n not in EXHAUSTIVE])
def test_sampled_scenarios_pass_with_the_race_detector(name: str) -> None:
    scenario = SCENARIOS[name]
    assert scenario.expect == "bounded" and scenario.quick_options is not None
    result = check(scenario.build(), Options(**scenario.quick_options))
    assert result.failure is None, result.report()
    assert result.verdict == "bounded" and result.executions == scenario.quick_options["max_executions"]


REFUSED: list[int] = []


class RecordingPool(LockFreePool):
    """Counts the resubmissions Stop(discard) refused (across executions: a test-only tally)."""

    def __init__(self, workers: int, capacity: int, runtime: Runtime, tracer: Tracer | None = None) -> None:
        super().__init__(workers, capacity, runtime, tracer)

    def offer(self, item: WorkItem) -> bool:
        accepted = super().offer(item)
        if not accepted:
            REFUSED.append(item.lane)
        return accepted


@pytest.mark.timeout(300)
def test_the_refused_resubmission_loses_nothing() -> None:
    REFUSED.clear()
    program = lockfree_program(SCENARIO_SPECS["stop-discard-refused-resubmit"], pool_factory=RecordingPool)
    result = check(program, Options(strategy="dpor", max_executions=3_000))
    assert result.failure is None, result.report()
    assert REFUSED, "no execution reached a refused resubmission"
    # Some execution had an item reported discarded by the reset rather than invoked.
    assert any(isinstance(o, tuple) and o[2] > 0 for o in result.outcomes), result.outcomes


# Each mutant's row validates its trace first (format v2): the spec's words for the step it cannot
# make; and the scenario's own checks, without validation, name the bug as a user sees it.
JUDGED: dict[str, tuple[str, str]] = {
    "cas-before-push": ("a CAS Idle -> Scheduled follows the thread's own push", "lost wakeup"),
    "no-recheck": ("could be: idle holding", "lost wakeup"),
    "idle-after-recheck": ("the spec's step here logs to = 'idle'", "lost wakeup"),
    "stop-skips-inflight": ("Stop begins once every post in flight has finished", "Stop returned"),
    "reset-drops-unreported": ("the Stop drops accepted items", "conservation"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", list(REFERENCE_MUTANTS))
def test_every_mutant_is_caught(name: str) -> None:
    failure = caught(SCENARIOS, REFERENCE_MUTANTS, name)
    judged, seen = JUDGED[name]
    assert "trace (format v2) not allowed" in failure.message and judged in failure.message, failure.message
    assert len(failure.steps) < 120  # minimised counterexample
    mutant = REFERENCE_MUTANTS[name]
    program = lockfree_program(LockFreeScenario(**mutant.scenario), build=mutant.build, validate=False)
    unvalidated = check(program, Options(**SCENARIOS[f"mutant/{name}"].options)).failure
    assert unvalidated is not None and unvalidated.kind == mutant.expect, name
    assert seen in unvalidated.message, unvalidated.message


@pytest.mark.timeout(60)
def test_the_same_scenario_passes_without_the_mutant() -> None:
    for m in REFERENCE_MUTANTS.values():
        result = check(
            lockfree_program(LockFreeScenario(**m.scenario)), Options(strategy="dpor", time_limit=30)
        )
        assert result.failure is None, (
            f"{m.name}'s scenario fails on the correct reference: {result.report()}"
        )


def test_spec_mutant_names_are_mirrored() -> None:
    from model_checks.designs.work_lane_lockfree.spec_mutants import MUTANTS

    assert set(REFERENCE_MUTANTS) == set(MUTANTS)
    assert all(m.spec_variant == name for name, m in REFERENCE_MUTANTS.items())
    assert {m.scenario.get("stop", StopMode.DRAIN) for m in REFERENCE_MUTANTS.values()} == set(StopMode)
