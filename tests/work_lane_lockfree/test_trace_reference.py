"""The lock-free reference's v2 traces under the harness: every trace of the exhaustive 1-producer
scenario allowed, the 2-producer ones sampled, and each reference mutant's trace rejected where the
bug shows in it (the mutants here are ``reference_mutants.py``'s, emitting v2 events)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest

from model_checks.designs.work_lane_lockfree.reference_mutants import (
    ONE_POST,
    ONE_PRODUCER_TWO_POSTS,
    ResetDropsUnreportedLane,
    StopSkipsInflightScheduler,
)
from model_checks.designs.work_lane_lockfree.scenarios import (
    SCENARIO_SPECS,
    LockFreeScenario,
    lockfree_program,
)
from model_checks.harness import Options, check
from reference.work_lane_lockfree import LockFreeScheduler, StopMode, trace_header
from reference.work_lane_lockfree_lane import DRAINING, IDLE, SCHEDULED, LockFreeLane, PostOutcome

T = TypeVar("T")


@pytest.fixture(autouse=True)
def _quiet_reference() -> Iterator[None]:
    log = logging.getLogger("reference")
    level = log.level
    log.setLevel(logging.CRITICAL)
    yield
    log.setLevel(level)


def test_the_header_names_the_design_and_version_2() -> None:
    h = trace_header({"lanes": 1})
    assert (h["trace"], h["design"], h["version"], h["config"]) == (
        "lanecheck",
        "work-lane-lockfree",
        2,
        {"lanes": 1},
    )


@pytest.mark.timeout(120)
def test_every_trace_of_the_one_producer_scenario_is_allowed() -> None:
    result = check(lockfree_program(LockFreeScenario(producers=1), validate=True), Options(strategy="dpor"))
    assert result.verdict == "exhaustive" and result.failure is None, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(SCENARIO_SPECS))
def test_sampled_traces_of_every_scenario_are_allowed(name: str) -> None:
    result = check(
        lockfree_program(SCENARIO_SPECS[name], validate=True),
        Options(strategy="pct", seed=3, max_executions=40),
    )
    assert result.failure is None, result.report()


# -- the reference mutants, emitting v2 events


class CasBeforePushLane(LockFreeLane[T]):
    """BUG: CAS Idle -> Scheduled before the push (traced as the steps it makes)."""

    def publish(self, item: T) -> PostOutcome:
        won = self.word.compare_and_swap(IDLE, SCHEDULED)
        self._cas(IDLE, SCHEDULED, won)
        pushed = self.queue.push(item)
        result = "ok" if pushed else "capacity_exceeded"
        self._emit("push", {"lane": self.index, "item": self._label(item), "result": result})
        if not pushed:
            if won:
                self.word.store(IDLE)
            return PostOutcome.FULL
        return PostOutcome.ACCEPTED_SUBMIT if won else PostOutcome.ACCEPTED


class NoRecheckLane(LockFreeLane[T]):
    """BUG: CAS Draining -> Idle ends the drain, no re-check."""

    def _end_drain(self, invoked: int) -> bool:
        if not self.word.compare_and_swap(DRAINING, IDLE):
            raise RuntimeError("not Draining")
        self._cas(DRAINING, IDLE, True, invoked=invoked)
        return False


class IdleAfterRecheckLane(LockFreeLane[T]):
    """BUG: the re-check while Draining, the Idle write after it."""

    def _end_drain(self, invoked: int) -> bool:
        if len(self.queue):
            self.word.compare_and_swap(DRAINING, SCHEDULED)
            self._cas(DRAINING, SCHEDULED, True, invoked=invoked)
            return True
        self.word.compare_and_swap(DRAINING, IDLE)
        self._cas(DRAINING, IDLE, True, invoked=invoked)
        self._emit("recheck", {"lane": self.index, "empty": True})
        return False


def _with_lane(lane: type[LockFreeLane[Any]]) -> Any:
    def build(*args: Any, **kwargs: Any) -> LockFreeScheduler[Any]:
        return LockFreeScheduler(*args, **{**kwargs, "lane_factory": lane})

    return build


MUTANTS: dict[str, tuple[Any, dict[str, Any]]] = {
    "cas-before-push": (_with_lane(CasBeforePushLane), ONE_PRODUCER_TWO_POSTS),
    "no-recheck": (_with_lane(NoRecheckLane), ONE_PRODUCER_TWO_POSTS),
    "idle-after-recheck": (_with_lane(IdleAfterRecheckLane), ONE_PRODUCER_TWO_POSTS),
    "stop-skips-inflight": (StopSkipsInflightScheduler, {**ONE_POST, "stop_races_posts": True}),
    "reset-drops-unreported": (_with_lane(ResetDropsUnreportedLane), {**ONE_POST, "stop": StopMode.DISCARD}),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_trace_is_rejected(name: str) -> None:
    build, scenario = MUTANTS[name]
    result = check(
        lockfree_program(LockFreeScenario(**scenario), build=build, validate=True),
        Options(strategy="dpor", time_limit=120),
    )
    failure = result.failure
    assert failure is not None, f"{name} missed: {result.summary()}"
    assert "trace (format v2) not allowed" in failure.message, failure.message
