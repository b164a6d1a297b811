"""Seeded bugs in the *real* lock-free reference, one seam each, named as the spec mutants
(``spec_mutants.py``) that are the same bug one level up.

Production code carries no bugs on purpose; these variants live with the checks. Each is a
``LockFreeLane`` subclass plugged in through ``lane_factory``, or a ``LockFreeScheduler``
subclass, so the harness runs the production algorithm but for one step. Each traces the steps
it makes in the design's format (version 2), so a harness row validates its trace too: the bug is
caught by the scenario's checks or by the trace being no behaviour of the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from model_checks.mutant import by_name
from reference.work_lane_lockfree import LockFreeScheduler, StopMode
from reference.work_lane_lockfree_lane import DRAINING, IDLE, SCHEDULED, LockFreeLane, PostOutcome
from reference.work_lane_lockfree_queue import EMPTY

T = TypeVar("T")


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    build: Callable[..., LockFreeScheduler[Any]]  # same signature as ``LockFreeScheduler``
    expect: str  # the harness ``Failure.kind`` a run must report
    spec_variant: str  # the same bug in the spec (``spec_mutants.MUTANTS``)
    # The smallest scenario that shows it, as ``LockFreeScenario`` fields.
    scenario: dict[str, Any] = field(default_factory=dict)


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = {}
MutantClass = type[LockFreeLane[Any]] | type[LockFreeScheduler[Any]]


def _mutant(name: str, doc: str, scenario: dict[str, Any]) -> Callable[[MutantClass], MutantClass]:
    """The class below is the mutant ``name``, named as its spec twin: a lane class is plugged in
    through ``lane_factory``, a scheduler class runs as the scheduler. Each bug here shows as a
    failed assertion of its scenario (``expect``)."""

    def register(cls: MutantClass) -> MutantClass:
        build = cls if issubclass(cls, LockFreeScheduler) else partial(LockFreeScheduler, lane_factory=cls)
        mutant = ReferenceMutant(name, doc, build, expect="assertion", spec_variant=name, scenario=scenario)
        REFERENCE_MUTANTS.update(by_name(*REFERENCE_MUTANTS.values(), mutant))
        return cls

    return register


# One producer posting twice to one lane with one worker and a budget of one: the second post's
# CAS, or its push, races the drain of the first. What a lost wakeup leaves is an item in an
# Idle lane: Stop(drain) finds it and fails (reporting it), and the scenario's check says so.
ONE_PRODUCER_TWO_POSTS = {"producers": 1, "items": 2, "lanes": 1, "workers": 1, "budget": 1, "capacity": 2}
ONE_POST = {"producers": 1, "items": 1, "lanes": 1, "workers": 1}


@_mutant("cas-before-push", "the producer's Idle -> Scheduled CAS before its push", ONE_PRODUCER_TWO_POSTS)
class CasBeforePushLane(LockFreeLane[T]):
    """BUG: the producer CASes Idle -> Scheduled before its push: a drainer that releases and
    re-checks in between finds nothing, and the item then lands in an Idle lane."""

    def publish(self, item: T) -> PostOutcome:
        won = self._cas_word(IDLE, SCHEDULED)
        if not self._push(item):  # another producer filled the lane in between
            if won:
                self.word.store(IDLE)
            return PostOutcome.FULL
        return PostOutcome.ACCEPTED_SUBMIT if won else PostOutcome.ACCEPTED


@_mutant(
    "no-recheck", "the end of a drain without the re-check after Draining -> Idle", ONE_PRODUCER_TWO_POSTS
)
class NoRecheckLane(LockFreeLane[T]):
    """BUG: CAS Draining -> Idle ends the drain: an item whose producer's CAS saw Draining stays behind."""

    def _end_drain(self, invoked: int) -> bool:
        if not self._cas_word(DRAINING, IDLE, invoked=invoked):
            raise RuntimeError(f"lane {self.index}: a drain ended on a lane that was not Draining")
        return False


@_mutant(
    "idle-after-recheck",
    "the re-check while Draining, the Draining -> Idle CAS after it",
    ONE_PRODUCER_TWO_POSTS,
)
class IdleAfterRecheckLane(LockFreeLane[T]):
    """BUG: the re-check while still Draining, the Draining -> Idle CAS after it: a post whose CAS
    saw Draining in between is never looked at again."""

    def _end_drain(self, invoked: int) -> bool:
        if len(self.queue):
            if not self._cas_word(DRAINING, SCHEDULED, invoked=invoked):
                raise RuntimeError(f"lane {self.index}: a drain ended on a lane that was not Draining")
            return True
        if not self._cas_word(DRAINING, IDLE, invoked=invoked):
            raise RuntimeError(f"lane {self.index}: a drain ended on a lane that was not Draining")
        with self._queue_step():  # the re-check that was made before the release, logged after it
            self._emit("recheck", {"lane": self.index, "empty": True})
        return False


# An item accepted after Stop(drain) returned is never invoked.
@_mutant(
    "stop-skips-inflight",
    "Stop(drain) returning without waiting for posts in flight",
    {**ONE_POST, "stop_races_posts": True},
)
class StopSkipsInflightScheduler(LockFreeScheduler[T]):
    """BUG: Stop does not wait for the posts in flight: one admitted before admission closed
    pushes (and submits) after Stop(drain) returned."""

    def _wait_posts_settled(self) -> None:
        return None


# An accepted item is neither invoked nor reported discarded.
@_mutant(
    "reset-drops-unreported",
    "the Stop(discard) lane reset destroying items without reporting them",
    {**ONE_POST, "stop": StopMode.DISCARD},
)
class ResetDropsUnreportedLane(LockFreeLane[T]):
    """BUG: the Stop(discard) reset destroys the lane's items without reporting them."""

    def reset(self) -> list[T]:
        while self.queue.pop() is not EMPTY:
            pass
        self.word.store(IDLE)
        return []
