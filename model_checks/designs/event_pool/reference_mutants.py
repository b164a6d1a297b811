"""Seeded bugs in the *real* event pool, as ``EventPool`` subclasses that override one seam each.

They are the issue's six bugs, named as the spec mutants they correspond to
(``spec_mutants.py``: "one counterexample, three places"). ``REFERENCE_MUTANTS``
gives each the scenario it shows in (the smallest that shows it) and the
failure kind the harness must report; ``harness.py`` makes them scenarios and
``tests/event_pool/test_reference_harness.py`` pins the counterexamples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model_checks.designs.event_pool.scenarios import PoolScenario
from reference.event_pool import Entry, EventPool, PoolThread
from reference.event_pool_records import finished_fate
from reference.win32_events import Win32Event


class PulseInsteadOfSetPool(EventPool):
    """BUG: a post wakes its thread with PulseEvent, which a thread not yet blocked misses."""

    def _signal(self, me: PoolThread) -> None:
        me.event.pulse()


class UnlockedCheckThenWaitPool(EventPool):
    """BUG: the thread finds the list empty under the lock, but marks itself idle in a second section."""

    def _next_work(self, me: PoolThread, finished: Entry | None) -> Entry | None:
        with self._lock:
            if finished is not None:
                self._settle(finished, finished_fate(finished))
            entry = self._take(me, mark_idle=False)
        if entry is None:
            with self._lock:  # a post in between saw no idle thread and signalled nobody
                self._mark_idle(me)
        return entry


class UnlockedNextIndexPool(EventPool):
    """BUG: GetWorkFromPool reads ``next`` in one critical section and writes ``next + 1`` in another.

    (Plain reads and writes without any lock are the same bug; the harness's race
    detector reports those as a data race before they show. This form is
    race-free at the field level and shows the consequence: a work handed out twice.)
    """

    def _next_work(self, me: PoolThread, finished: Entry | None) -> Entry | None:
        with self._lock:
            if finished is not None:
                self._settle(finished, finished_fate(finished))
            i = self._next
            if i >= len(self._works):
                self._mark_idle(me)
                if self._tracer is not None:
                    self._tracer.emit(me.name, "take", {"item": None})
                return None
        with self._lock:  # next may have moved meanwhile (another take, a cancel)
            entry = self._works[i]
            self._next = i + 1
            me.idle = False
            if me in self._idle:
                self._idle.remove(me)
            me.in_hand = entry
            if self._tracer is not None:
                self._tracer.emit(me.name, "take", {"item": entry.index})
            return entry


class ManualResetNeverResetPool(EventPool):
    """BUG: the threads' events are manual-reset and nobody resets them: every wait returns at once."""

    def _make_event(self, i: int) -> Win32Event:
        return self._kernel.create_event(manual_reset=True, name=f"t{i}.event")


class IfInsteadOfWhilePool(EventPool):
    """BUG: ``if (empty) wait(); take();`` — a woken thread takes works[next] without looking."""

    def _after_wake(self, me: PoolThread) -> None:
        with self._lock:
            i = self._next
            if self._tracer is not None:
                self._tracer.emit(me.name, "take", {"item": i})
            entry = self._works[i]  # past the end when the work was taken first or cancelled
            self._next = i + 1
            me.idle = False
            me.in_hand = entry
        self._run(me, entry)
        self._run_while_listed(me, entry)


class SignalBusyThreadPool(EventPool):
    """BUG: a post signals the first thread of the list, busy or not, while idle threads sleep."""

    def _pick_thread(self) -> PoolThread | None:
        me = self.threads[0]
        if me.idle:
            me.idle = False
            self._idle.remove(me)
        return me


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    build: type[EventPool]
    scenario: PoolScenario
    expect: str  # the harness failure kind
    shows: str  # what the failure message must contain
    doc: str
    options: dict[str, Any]


def _m(
    name: str, build: type[EventPool], scenario: PoolScenario, expect: str, shows: str, **options: Any
) -> ReferenceMutant:
    return ReferenceMutant(name, build, scenario, expect, shows, (build.__doc__ or "").strip(), options)


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = {
    m.name: m
    for m in (
        _m(
            "pulse-instead-of-set", PulseInsteadOfSetPool, PoolScenario(threads=1, posts=1), "lost_wakeup", ""
        ),
        _m(
            "unlocked-check-then-wait",
            UnlockedCheckThenWaitPool,
            PoolScenario(threads=1, posts=2),
            "invariant",
            "IdleFirst",
        ),
        _m(
            "unlocked-next-index",
            UnlockedNextIndexPool,
            PoolScenario(threads=1, posts=1, api=True, cancel=True),
            "invariant",
            "WorkIndexExact",
        ),
        _m(
            "manual-reset-never-reset",
            ManualResetNeverResetPool,
            PoolScenario(threads=1, posts=1),
            "invariant",
            "OneWakePerSignal",
        ),
        _m(
            "if-instead-of-while",
            IfInsteadOfWhilePool,
            PoolScenario(threads=1, posts=1, api=True, cancel=True),
            "invariant",
            "WorkIndexExact",
        ),
        _m(
            "signal-busy-thread",
            SignalBusyThreadPool,
            PoolScenario(threads=2, posts=2),
            "invariant",
            "IdleFirst",
        ),
    )
}
