"""Each rule of the Win32 event contract, pinned on ``reference.win32_events`` with real threads.

A test knows a waiter is blocked, without sleeping, through ``win32_observed.Observed``; bad
arguments are refused naming the argument and consume nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference.runtime import ConditionLike, LockLike, ThreadingRuntime
from reference.win32_events import (
    INFINITE,
    MAXIMUM_WAIT_OBJECTS,
    WAIT_OBJECT_0,
    WAIT_TIMEOUT,
    CreateEvent,
    PulseEvent,
    ResetEvent,
    SetEvent,
    WaitForMultipleObjects,
    WaitForSingleObject,
    Win32Event,
    Win32Kernel,
)
from tests.event_pool.win32_observed import Observed, blocked_waiters


@pytest.mark.timeout(30)
def test_auto_reset_a_wait_consumes_the_signal_and_signals_do_not_count_up() -> None:
    ev = Win32Kernel().create_event(manual_reset=False)
    assert not ev.is_set() and ev.wait(0) == WAIT_TIMEOUT
    ev.set()
    ev.set()  # a no-op: the event is already signalled
    assert ev.is_set()
    assert ev.wait(0) == WAIT_OBJECT_0
    assert not ev.is_set()
    assert ev.wait(0) == WAIT_TIMEOUT  # the second set left nothing behind


@pytest.mark.timeout(30)
def test_manual_reset_stays_signalled_until_reset() -> None:
    ev = Win32Kernel().create_event(manual_reset=True, initial_state=True)
    assert [ev.wait(0) for _ in range(3)] == [WAIT_OBJECT_0] * 3
    assert ev.is_set()
    ev.reset()
    assert not ev.is_set() and ev.wait(0) == WAIT_TIMEOUT


def _signalled(manual: bool, waiters: int, pulse: bool) -> tuple[Observed, Win32Event, dict[str, int]]:
    """An event with ``waiters`` threads blocked on it (w0 first), then pulsed or set once."""
    rt = Observed()
    ev = Win32Kernel(rt).create_event(manual_reset=manual)
    results = blocked_waiters(rt, [ev.wait] * waiters)
    ev.pulse() if pulse else ev.set()
    return rt, ev, results


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pulse", [False, True], ids=["set", "pulse"])
def test_auto_reset_releases_exactly_one_of_two_blocked_waiters_first_come_first_served(pulse: bool) -> None:
    rt, ev, results = _signalled(manual=False, waiters=2, pulse=pulse)
    # the signaller releases the waiter itself, under the kernel lock: by now it is decided
    assert rt.notified == ["kernel.wait[w0]"]
    assert not ev.is_set()
    rt.until(lambda: "w0" in results, "w0 returns")
    assert set(results) == {"w0"} and rt.blocked == 1
    ev.set()
    rt.join_all()
    assert rt.notified == ["kernel.wait[w0]", "kernel.wait[w1]"]
    assert results == {"w0": WAIT_OBJECT_0, "w1": WAIT_OBJECT_0}
    assert not ev.is_set()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pulse", [False, True], ids=["set", "pulse"])
def test_manual_reset_releases_every_blocked_waiter(pulse: bool) -> None:
    rt, ev, results = _signalled(manual=True, waiters=3, pulse=pulse)
    assert sorted(rt.notified) == [f"kernel.wait[w{i}]" for i in range(3)]
    rt.join_all()
    assert results == {f"w{i}": WAIT_OBJECT_0 for i in range(3)}
    assert ev.is_set() is not pulse  # a pulse resets it; a set leaves it signalled


@pytest.mark.timeout(30)
@pytest.mark.parametrize("manual", [False, True])
def test_a_thread_not_yet_waiting_misses_a_pulse(manual: bool) -> None:
    ev = Win32Kernel().create_event(manual_reset=manual)
    ev.pulse()
    assert not ev.is_set()
    assert ev.wait(0.01) == WAIT_TIMEOUT


@pytest.mark.timeout(30)
def test_a_timed_out_wait_takes_nothing_and_leaves_no_waiter_behind() -> None:
    rt = Observed()
    ev = Win32Kernel(rt).create_event(manual_reset=False)
    assert ev.wait(0.02) == WAIT_TIMEOUT
    ev.set()
    assert rt.notified == []  # nobody was left queued to take it
    assert ev.is_set()


@pytest.mark.timeout(30)
def test_wait_any_returns_the_lowest_signalled_index_and_consumes_only_that_event() -> None:
    kernel = Win32Kernel()
    a, b, c = (kernel.create_event(False, name=n) for n in "abc")
    b.set()
    c.set()
    assert kernel.wait_for_multiple([a, b, c], wait_all=False, timeout=0) == WAIT_OBJECT_0 + 1
    assert not b.is_set() and c.is_set()
    assert kernel.wait_for_multiple([a, b, c], wait_all=False, timeout=0) == WAIT_OBJECT_0 + 2
    assert kernel.wait_for_multiple([a, b, c], wait_all=False, timeout=0) == WAIT_TIMEOUT


@pytest.mark.timeout(30)
def test_a_blocked_wait_any_returns_the_index_of_the_event_that_released_it() -> None:
    rt = Observed()
    kernel = Win32Kernel(rt)
    work, stop = kernel.create_event(False, name="work"), kernel.create_event(True, name="stop")
    results = blocked_waiters(rt, [lambda: kernel.wait_for_multiple([work, stop], False)])
    stop.set()
    rt.join_all()
    assert results == {"w0": WAIT_OBJECT_0 + 1}
    assert stop.is_set() and not work.is_set()


@pytest.mark.timeout(30)
def test_wait_all_is_satisfied_only_by_every_event_at_once_and_never_consumes_part() -> None:
    kernel = Win32Kernel()
    a, m = kernel.create_event(False, True, "a"), kernel.create_event(True, False, "m")
    assert kernel.wait_for_multiple([a, m], wait_all=True, timeout=0) == WAIT_TIMEOUT
    assert a.is_set()  # the failed wait-all consumed nothing
    m.set()
    assert kernel.wait_for_multiple([a, m], wait_all=True, timeout=0) == WAIT_OBJECT_0
    assert not a.is_set() and m.is_set()  # auto-reset consumed, manual-reset left signalled


@pytest.mark.timeout(30)
def test_a_blocked_wait_all_is_released_by_the_last_signal_and_reserves_nothing() -> None:
    rt = Observed()
    kernel = Win32Kernel(rt)
    a, b = kernel.create_event(False, name="a"), kernel.create_event(False, name="b")
    results = blocked_waiters(rt, [lambda: kernel.wait_for_multiple([a, b], True), a.wait])
    a.set()  # the wait-all (first in a's queue) cannot take it yet; the wait-any behind it does
    assert rt.notified == ["kernel.wait[w1]"]
    assert not a.is_set()
    a.set()
    assert a.is_set() and len(rt.notified) == 1  # still not every event: nothing consumed
    b.set()
    rt.join_all()
    assert results == {"w0": WAIT_OBJECT_0, "w1": WAIT_OBJECT_0}
    assert not a.is_set() and not b.is_set()


@pytest.mark.timeout(30)
def test_the_win32_names_take_milliseconds() -> None:
    kernel = Win32Kernel(name="k")
    ev = CreateEvent(kernel, manual_reset=False)
    assert WaitForSingleObject(ev, 0) == WAIT_TIMEOUT
    SetEvent(ev)
    assert WaitForSingleObject(ev, INFINITE) == WAIT_OBJECT_0
    SetEvent(ev)
    ResetEvent(ev)
    assert WaitForSingleObject(ev, 10) == WAIT_TIMEOUT
    PulseEvent(ev)
    assert not ev.is_set()
    other = kernel.create_event(True, True)
    assert WaitForMultipleObjects([ev, other], False, 0) == WAIT_OBJECT_0 + 1
    assert WaitForMultipleObjects([ev, other], True, 5) == WAIT_TIMEOUT


@pytest.mark.timeout(30)
def test_a_long_timeout_is_accepted_and_a_signal_ends_it() -> None:
    rt = Observed()
    ev = Win32Kernel(rt).create_event(False)
    results = blocked_waiters(rt, [lambda: ev.wait(1e12), lambda: ev.wait(float("inf"))])
    ev.set()
    ev.set()
    rt.join_all()
    assert results == {"w0": WAIT_OBJECT_0, "w1": WAIT_OBJECT_0}


class _Interrupting(ThreadingRuntime):
    """A runtime whose condition waits are interrupted (as KeyboardInterrupt interrupts a real one:
    the lock is held again when it propagates)."""

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike:
        inner = super().condition(lock, name)
        real_wait = inner.wait

        def wait(timeout: float | None = None) -> bool:
            real_wait(0)
            raise KeyboardInterrupt

        inner.wait = wait  # type: ignore[method-assign]
        return inner


@pytest.mark.timeout(30)
def test_an_interrupted_wait_leaves_no_wait_block_to_take_a_later_signal() -> None:
    kernel = Win32Kernel(_Interrupting())
    ev = kernel.create_event(False)
    with pytest.raises(KeyboardInterrupt):
        kernel.wait_for_multiple([ev], False)
    ev.set()
    assert ev.is_set()  # not consumed for the interrupted wait
    assert ev.wait(0) == WAIT_OBJECT_0


_OTHER = Win32Kernel(name="other").create_event(False, name="foreign")


@pytest.mark.parametrize(
    ("call", "error", "names"),
    [
        (lambda k, e: k.create_event(1), TypeError, "manual_reset"),
        (lambda k, e: k.create_event(False, "yes"), TypeError, "initial_state"),
        (lambda k, e: k.create_event(False, name=3), TypeError, "name"),
        (lambda k, e: e.wait(-1), ValueError, "timeout"),
        (lambda k, e: e.wait(float("nan")), ValueError, "timeout"),
        (lambda k, e: e.wait("1"), TypeError, "timeout"),
        (lambda k, e: e.wait(True), TypeError, "timeout"),
        (lambda k, e: k.wait_for_multiple([], False), ValueError, "events is empty"),
        (lambda k, e: k.wait_for_multiple(e, False), TypeError, "events must be a sequence"),
        (lambda k, e: k.wait_for_multiple([e] * 65, False), ValueError, "MAXIMUM_WAIT_OBJECTS"),
        (lambda k, e: k.wait_for_multiple([e, e], True), ValueError, "events[0] and events[1]"),
        (lambda k, e: k.wait_for_multiple([e, "x"], False), TypeError, "events[1]"),
        (lambda k, e: k.wait_for_multiple([e, _OTHER], False), ValueError, "events[1]"),
        (lambda k, e: k.wait_for_multiple([e], 0), TypeError, "wait_all"),
        (lambda k, e: k.wait_for_multiple([e], False, -0.5), ValueError, "timeout"),
        (lambda k, e: WaitForSingleObject(e, -1), ValueError, "milliseconds"),
        (lambda k, e: WaitForSingleObject("e", 0), TypeError, "event"),  # type: ignore[arg-type]
        (lambda k, e: WaitForMultipleObjects([], False, 0), ValueError, "events is empty"),
        (lambda k, e: WaitForMultipleObjects(["e"], False, 0), TypeError, "events[0]"),  # type: ignore[list-item]
        (lambda k, e: Win32Kernel(name=None), TypeError, "name"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_is_refused_naming_the_argument(
    call: Callable[[Win32Kernel, Win32Event], object], error: type[Exception], names: str
) -> None:
    kernel = Win32Kernel()
    ev = kernel.create_event(False, True, "e")
    with pytest.raises(error, match=names.replace("[", r"\[").replace("]", r"\]")):
        call(kernel, ev)
    assert ev.is_set()  # a refused wait consumed nothing


def test_at_most_maximum_wait_objects_are_accepted() -> None:
    kernel = Win32Kernel()
    evs = [kernel.create_event(False) for _ in range(MAXIMUM_WAIT_OBJECTS)]
    evs[-1].set()
    assert kernel.wait_for_multiple(evs, False, 0) == WAIT_OBJECT_0 + MAXIMUM_WAIT_OBJECTS - 1
