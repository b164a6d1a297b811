"""Seeded bugs in the *real* work-stealing reference, each a small override of one seam.

They mirror the spec mutants (``spec_mutants.py``, same names where the bug is the same) and
the bugs real ports shipped: the last-element race without the CAS, crossbeam-deque's 2021
steal/resize advisory (read after the CAS), a grow that loses or duplicates items, a stale
index mask, a park without the re-check (the pool's lost wakeup), a join that blocks its worker.
``REFERENCE_MUTANTS`` names each with the scenario it is caught in and the failure kind the
harness must report (``harness.py`` turns them into ``Scenario`` rows).

Not here: **missing-fence** (the owner's ``top`` load passing its ``bottom`` store in a store
buffer). The harness runs sequentially consistent atomics, as CPython's GIL does, so the
reordering cannot happen and a mutant without the fence would be the correct deque; the spec's
TSO mode catches it (``spec_mutants.py``: ``missing-fence``, docs/work-stealing.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from model_checks.mutant import by_name
from reference.work_stealing import WorkStealingPool
from reference.work_stealing_deque import ABORT, EMPTY, OK, ChaseLevDeque

T = TypeVar("T")


class TakeWithoutCasDeque(ChaseLevDeque[T]):
    """BUG: the owner takes the last element with a plain store to ``top``, no CAS: a thief that
    already read the slot also wins its CAS, and the element is obtained twice. Traced, the
    owner's ``top`` load and its claim are two steps, each under the trace lock alone (as the
    correct take's are), so the race stays open and the trace shows the element's second ``ok``."""

    def _claim_last(self, t: int) -> bool:
        self._top.store(t + 1)  # the bug: a thief's CAS since our load of top is not noticed
        return True


class StealReadsAfterCasDeque(ChaseLevDeque[T]):
    """BUG: the thief claims index ``t`` by CAS first and reads the slot afterwards; by then the
    owner may have reused the slot for a newer push (crossbeam-deque's 2021 advisory)."""

    def steal(self, thief: int) -> tuple[str, T | None]:
        t = self._top.load()
        if t >= self._bottom.load():
            self._trace_steal(thief, EMPTY, None)
            return EMPTY, None
        if not self._top.compare_and_swap(t, t + 1):
            self._trace_steal(thief, ABORT, None)
            return ABORT, None
        item = self._steal_read(t)  # too late: the slot is no longer ours to read
        self._trace_steal(thief, OK, item)
        return OK, item


class StealWithoutCasDeque(ChaseLevDeque[T]):
    """BUG: the thief claims its index by check-then-store instead of one CAS: two thieves (or a
    thief and the owner's last take) both get the element. Traced, the check and the store are
    two steps, as untraced."""

    def _steal_commit(self, thief: int, t: int, item: Any) -> tuple[str, T | None]:
        with self.logged_step():
            unchanged = self._top.load() == t
            if not unchanged:
                self._trace_steal(thief, ABORT, None)
                return ABORT, None
        with self.logged_step():
            self._top.store(t + 1)  # the bug: another claim since our load is overwritten
            self._trace_steal(thief, OK, item)
        return OK, item


class ResizeDropsNewestDeque(ChaseLevDeque[T]):
    """BUG: the grow copies ``[top, bottom - 1)``: the newest element is lost in the new array."""

    def _grow(self, old: list[Any], top: int, bottom: int) -> list[Any]:
        return super()._grow(old, top, bottom - 1)


class ResizeUnpublishedDeque(ChaseLevDeque[T]):
    """BUG: the grow never publishes the new array: thieves keep reading the old one, whose slots
    hold older elements at the new indices (an element is duplicated, a newer one lost)."""

    def _grow(self, old: list[Any], top: int, bottom: int) -> list[Any]:
        new: list[Any] = [None] * (2 * len(old))
        for i in range(top, bottom):
            new[i & (len(new) - 1)] = old[i & (len(old) - 1)]
        self._buf = new  # the owner's copy only: ``_buffer`` still names the old array
        self._mask = len(new) - 1
        return new


class StaleMaskDeque(ChaseLevDeque[T]):
    """BUG: indices are masked with the *first* array's capacity, also after a grow: a push
    wraps onto the slot of an older element that is still in the deque."""

    def _slot(self, index: int, buf: list[Any]) -> int:  # the thieves' index
        return index & (self.initial_capacity - 1)

    def _grow(self, old: list[Any], top: int, bottom: int) -> list[Any]:
        new = super()._grow(old, top, bottom)
        self._mask = self.initial_capacity - 1  # the owner's index: stale too
        return new


class ParkWithoutRecheckPool(WorkStealingPool):
    """BUG: a worker registers as a sleeper and sleeps without looking at the queues again: a
    submit that came after its search but before its registration wakes nobody."""

    def _recheck(self, w: int) -> bool:
        return False


class StealFromSelfPool(WorkStealingPool):
    """BUG: the victim is drawn from every worker, itself included."""

    def _victims(self, w: int) -> Iterator[int]:
        n = self.workers
        start = self._rngs[w].randrange(n) if self._rngs else 0  # no generator below 3 workers
        return ((start + k) % n for k in range(n))


class JoinNeverHelpsPool(WorkStealingPool):
    """BUG: join blocks its worker until the task is done instead of running other tasks: once
    every worker waits in a join, the tasks they wait for sit in deques nobody takes from."""

    def _wait_for(self, w: int, task: Any) -> None:
        self._wait_external(task)


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    scenario: str  # the correct scenario (``harness.SCENARIOS``) it runs in, with ``build``
    build: Callable[..., Any]  # the deque class (deque scenarios) or the pool class
    expect: str  # the failure kind a harness run must report
    spec_variant: str | None  # the same bug in the spec, when it has it


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = by_name(
    ReferenceMutant(
        "take-without-cas",
        "the owner takes the last element without the CAS on top",
        "deque/one-element",
        TakeWithoutCasDeque,
        expect="assertion",
        spec_variant="take-without-cas",
    ),
    ReferenceMutant(
        "steal-reads-after-cas",
        "the thief reads the slot after its CAS (crossbeam-deque 2021)",
        "deque/resize-while-stealing",
        StealReadsAfterCasDeque,
        expect="assertion",
        spec_variant="steal-reads-after-cas",
    ),
    ReferenceMutant(
        "steal-without-cas",
        "the thief claims its index with a load and a store",
        "deque/one-element",
        StealWithoutCasDeque,
        expect="assertion",
        spec_variant="steal-without-cas",
    ),
    ReferenceMutant(
        "resize-drops-newest",
        "the grow copies [top, bottom - 1): the newest element is lost",
        "deque/resize-while-stealing",
        ResizeDropsNewestDeque,
        expect="assertion",
        spec_variant="resize-drops-newest",
    ),
    ReferenceMutant(
        "resize-unpublished",
        "the grow never publishes the new array: thieves read old slots (duplicates)",
        "deque/steal-after-resize",
        ResizeUnpublishedDeque,
        expect="assertion",
        spec_variant=None,
    ),
    ReferenceMutant(
        "stale-mask",
        "indices masked with the first array's capacity after a grow (the index wraps)",
        "deque/resize-while-stealing",
        StaleMaskDeque,
        expect="assertion",
        spec_variant="stale-mask",
    ),
    ReferenceMutant(
        "park-without-recheck",
        "a worker parks without re-checking the queues (lost wakeup)",
        "pool/park-wake",
        ParkWithoutRecheckPool,
        expect="lost_wakeup",
        spec_variant="park-without-recheck",
    ),
    ReferenceMutant(
        "steal-from-self",
        "the victim may be the thief itself",
        "pool/park-wake-traced",
        StealFromSelfPool,
        expect="invariant",
        spec_variant=None,
    ),
    ReferenceMutant(
        "join-never-helps",
        "join blocks its worker (deadlock once every worker joins)",
        "pool/fork-join",
        JoinNeverHelpsPool,
        expect="deadlock",
        spec_variant="join-never-helps",
    ),
)

__all__ = ["REFERENCE_MUTANTS", "ReferenceMutant"]
