"""The Win32 event contract of ``reference.win32_events`` under the harness.

Small programs are explored exhaustively: what must hold in every interleaving is checked by each
execution's final check, and what must be possible shows among the outcomes. The contract is
checked as *conservation of signals*: each ``SetEvent`` on an auto-reset event is consumed by
exactly one successful wait, or is still there at the end. Broken kernels show that these checks
fail when a rule is broken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from model_checks.harness import check
from model_checks.harness.rt.clock import MONOTONIC_ORIGIN
from model_checks.harness.runtime import ControlledRuntime
from reference.win32_events import WAIT_OBJECT_0, WAIT_TIMEOUT, Win32Event, Win32Kernel

Program = Callable[[ControlledRuntime], object]
KernelFactory = Callable[[ControlledRuntime], Win32Kernel]


def _kernel(rt: ControlledRuntime) -> Win32Kernel:
    return Win32Kernel(rt)


def _conserves_one_set(make: KernelFactory = _kernel, timeout: float | None = 1.0) -> Program:
    """Two waiters on an auto-reset event, one SetEvent: the signal is taken once or left."""

    def program(rt: ControlledRuntime) -> object:
        ev = make(rt).create_event(manual_reset=False, name="e")
        results: dict[str, int] = {}

        def body(name: str) -> Callable[[], None]:
            def run() -> None:
                results[name] = ev.wait(timeout)

            return run

        threads = [rt.start_thread(body(n), n) for n in ("w0", "w1")]
        ev.set()
        for t in threads:
            t.join()

        def final() -> tuple[int, bool]:
            taken = sum(r == WAIT_OBJECT_0 for r in results.values())
            assert taken + ev.is_set() == 1, f"one SetEvent: {results}, still signalled: {ev.is_set()}"
            return taken, ev.is_set()

        return final

    return program


@pytest.mark.timeout(120)
def test_harness_set_on_auto_reset_releases_exactly_one_of_two_waiters_in_every_interleaving() -> None:
    # timeouts only when nothing else can run: the waiter left out must time out, never be released
    strict = check(_conserves_one_set(), virtual_timeouts=False)
    assert strict.verdict == "exhaustive", strict.report()
    assert strict.outcomes == {(1, False)}
    # with timeouts and spurious wakeups explored: the signal may also outlive both waits
    loose = check(_conserves_one_set(), spurious_wakeups=True)
    assert loose.ok, loose.report()
    assert loose.outcomes == {(1, False), (0, True)}
    assert any("spurious_limit" in b for b in loose.bounded_by)  # spurious wakeups did reach the waits


class _ReleasesAll(Win32Kernel):
    """Broken on purpose: SetEvent releases every waiter of an auto-reset event."""

    def _signal(self, event: Win32Event) -> None:
        for block in tuple(event._waiters):
            event._signalled = True  # the bug: the signal comes back for every waiter
            result = self._satisfy(block.events, block.wait_all)
            if result is not None:
                block.result = result
                block.unregister()
                block.wake.notify()
        event._signalled = True


@pytest.mark.timeout(120)
def test_harness_finds_a_kernel_whose_set_releases_two_auto_reset_waiters() -> None:
    result = check(_conserves_one_set(_ReleasesAll), virtual_timeouts=False)
    assert result.failure is not None and result.failure.kind == "assertion", result.report()
    assert "one SetEvent" in result.failure.message


def _manual_releases_all(rt: ControlledRuntime) -> object:
    ev = Win32Kernel(rt).create_event(manual_reset=True, name="m")
    results: dict[str, int] = {}

    def run(name: str) -> Callable[[], None]:
        def body() -> None:
            results[name] = ev.wait()

        return body

    threads = [rt.start_thread(run(n), n) for n in ("w0", "w1", "w2")]
    ev.set()
    for t in threads:
        t.join()
    return lambda: (tuple(sorted(results.values())), ev.is_set())


@pytest.mark.timeout(120)
def test_harness_manual_reset_releases_every_waiter_in_every_interleaving() -> None:
    result = check(_manual_releases_all, spurious_wakeups=True)
    assert result.ok, result.report()  # no deadlock: no waiter was left blocked
    assert result.outcomes == {((WAIT_OBJECT_0,) * 3, True)}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", [_conserves_one_set(), _manual_releases_all], ids=["auto", "manual"])
def test_harness_the_kernel_is_data_race_free(program: Program) -> None:
    result = check(program, races=True)
    assert result.verdict == "exhaustive" and result.races, result.report()


def _pulse(manual: bool, pulse: bool) -> Program:
    """One waiter with a timeout, one PulseEvent (or SetEvent) from another thread."""

    def program(rt: ControlledRuntime) -> object:
        ev = Win32Kernel(rt).create_event(manual_reset=manual, name="e")
        results: dict[str, int] = {}

        def waiter() -> None:
            results["w"] = ev.wait(5.0)

        t = rt.start_thread(waiter, "w")
        ev.pulse() if pulse else ev.set()
        t.join()
        return lambda: (results["w"], ev.is_set())

    return program


@pytest.mark.timeout(120)
@pytest.mark.parametrize("manual", [False, True])
def test_harness_a_pulse_before_the_waiter_waits_is_missed_a_set_is_not(manual: bool) -> None:
    # timeouts fire only when nothing else can run, so a timeout here means nothing will wake it
    pulsed = check(_pulse(manual, pulse=True), virtual_timeouts=False)
    assert pulsed.verdict == "exhaustive", pulsed.report()
    assert pulsed.outcomes == {(WAIT_OBJECT_0, False), (WAIT_TIMEOUT, False)}
    kept = check(_pulse(manual, pulse=False), virtual_timeouts=False)
    assert kept.outcomes == {(WAIT_OBJECT_0, manual)}


def _timed_wait(make: KernelFactory = _kernel) -> Program:
    """One waiter with an hour's timeout, one SetEvent: what it returns, and when."""

    def program(rt: ControlledRuntime) -> object:
        ev = make(rt).create_event(manual_reset=False, name="e")
        out: list[tuple[int, float]] = []

        def waiter() -> None:
            # (the clock starts at MONOTONIC_ORIGIN, and a thread's reads are a microsecond apart)
            out.append((ev.wait(3600.0), round(rt.monotonic() - MONOTONIC_ORIGIN, 3)))

        t = rt.start_thread(waiter, "w")
        ev.set()
        t.join()

        def final() -> tuple[tuple[int, float], bool]:
            taken = out[0][0] == WAIT_OBJECT_0
            assert taken + ev.is_set() == 1, f"one SetEvent: the wait returned {out[0]}, set: {ev.is_set()}"
            return out[0], ev.is_set()

        return final

    return program


@pytest.mark.timeout(120)
def test_harness_a_virtual_timeout_surfaces_as_wait_timeout_after_the_whole_timeout() -> None:
    result = check(_timed_wait(), spurious_wakeups=True)
    assert result.ok and result.elapsed < 60, result.report()
    assert result.outcomes == {
        ((WAIT_OBJECT_0, 0.0), False),  # released before any time passed
        ((WAIT_TIMEOUT, 3600.0), True),  # the whole hour (a spurious wakeup neither restarts nor
        # shortens it), and the signal, which came later, is still there
        ((WAIT_OBJECT_0, 3600.0), False),  # the timeout fired, but the signaller had already
        # given the waiter its signal before the waiter got the kernel lock back: it returns it
    }


class _TimeoutFirst(Win32Kernel):
    """Broken on purpose: an expired timeout wins over a signal already given to the wait."""

    def _block(self, block: Any, timeout: float | None) -> int:
        while True:
            if not block.wake.wait(timeout):
                if block.result is None:
                    block.unregister()
                return WAIT_TIMEOUT
            if block.result is not None:
                return int(block.result)


@pytest.mark.timeout(120)
def test_harness_finds_a_timeout_that_loses_the_signal_given_to_the_wait() -> None:
    result = check(_timed_wait(_TimeoutFirst))
    assert result.failure is not None and result.failure.kind == "assertion", result.report()
    assert "one SetEvent" in result.failure.message


def _wait_all_conserves(make: KernelFactory = _kernel) -> Program:
    """A wait-all on (a, b), a wait-any on a alone, one SetEvent on each: every signal is taken
    exactly once or left, and the wait-all takes both or neither."""

    def program(rt: ControlledRuntime) -> object:
        kernel = make(rt)
        a, b = kernel.create_event(False, name="a"), kernel.create_event(False, name="b")
        results = _waits_started(
            rt, {"all": lambda: kernel.wait_for_multiple([a, b], True, 1.0), "any": lambda: a.wait(1.0)}
        )
        setter = rt.start_thread(b.set, "sb")
        a.set()
        setter.join()
        for t in results[1]:
            t.join()
        got = results[0]

        def final() -> tuple[int, int]:
            by_all, by_any = got["all"] == WAIT_OBJECT_0, got["any"] == WAIT_OBJECT_0
            assert by_all + by_any + a.is_set() == 1, f"a: {got}, still signalled: {a.is_set()}"
            assert by_all + b.is_set() == 1, f"b: {got}, still signalled: {b.is_set()}"
            return got["all"], got["any"]

        return final

    return program


def _waits_started(
    rt: ControlledRuntime, waits: dict[str, Callable[[], int]]
) -> tuple[dict[str, int], list[Any]]:
    results: dict[str, int] = {}

    def body(name: str, wait: Callable[[], int]) -> Callable[[], None]:
        def run() -> None:
            results[name] = wait()

        return run

    return results, [rt.start_thread(body(n, w), n) for n, w in waits.items()]


@pytest.mark.timeout(120)
def test_harness_wait_all_never_consumes_part_of_its_events() -> None:
    result = check(_wait_all_conserves())
    assert result.verdict == "exhaustive", result.report()
    got = result.outcomes
    assert (WAIT_OBJECT_0, WAIT_TIMEOUT) in got and (WAIT_TIMEOUT, WAIT_OBJECT_0) in got


class _ConsumesAsItGoes(Win32Kernel):
    """Broken on purpose: a wait-all consumes each auto-reset event as it finds it signalled."""

    @staticmethod
    def _satisfy(events: tuple[Win32Event, ...], wait_all: bool) -> int | None:
        if not wait_all:
            return Win32Kernel._satisfy(events, wait_all)
        for event in events:
            if not event._signalled:
                return None
            if not event.manual_reset:
                event._signalled = False
        return WAIT_OBJECT_0


@pytest.mark.timeout(120)
def test_harness_finds_a_wait_all_that_consumes_part_of_its_events() -> None:
    result = check(_wait_all_conserves(_ConsumesAsItGoes))
    assert result.failure is not None and result.failure.kind == "assertion", result.report()


def _wait_any_lowest(rt: ControlledRuntime) -> object:
    kernel = Win32Kernel(rt)
    a, b = kernel.create_event(False, name="a"), kernel.create_event(False, name="b")
    results, threads = _waits_started(rt, {"w": lambda: kernel.wait_for_multiple([a, b], False)})
    setter = rt.start_thread(b.set, "sb")
    a.set()
    setter.join()
    for t in threads:
        t.join()

    def final() -> tuple[int, bool, bool]:
        index = results["w"]
        # the wait took exactly one signal: the other is still there
        assert (a.is_set(), b.is_set()) == ((False, True) if index == 0 else (True, False))
        return index, a.is_set(), b.is_set()

    return final


@pytest.mark.timeout(120)
def test_harness_wait_any_takes_one_event_and_the_lowest_when_both_are_signalled() -> None:
    result = check(_wait_any_lowest, spurious_wakeups=True)
    assert result.ok, result.report()
    # index 1 only when b came first and released it; never when both were already signalled
    assert {o[0] for o in result.outcomes if isinstance(o, tuple)} == {WAIT_OBJECT_0, WAIT_OBJECT_0 + 1}
