"""Each rule of the Win32 event contract, pinned on ``reference.win32_events`` under both runtimes.

With real threads (``ThreadingRuntime``) a test knows a waiter is blocked, without sleeping, through
``_Observed``: a runtime whose conditions count the threads inside ``wait`` and record each
``notify``. A waiter enters its condition wait only after registering its wait block under the
kernel lock, and a signaller needs that lock, so "n threads inside wait" means "n registered waits".

Under the harness, small programs are explored exhaustively: what must hold in every interleaving
is checked by each execution's final check, and what must be possible shows among the outcomes.
The contract is checked as *conservation of signals*: each ``SetEvent`` on an auto-reset event is
consumed by exactly one successful wait, or is still there at the end. Two broken kernels show
that these checks fail when a rule is broken.

The last part runs small scenarios on both sides, the reference with real threads and
``spec.win32_events.signal`` with the waiters in the reference's (FIFO) queue order, and compares
who is released, with which index, and the events' states after.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from model_checks.harness import check
from model_checks.harness.runtime import ControlledRuntime
from reference.runtime import ConditionLike, LockLike, ThreadHandle, ThreadingRuntime
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
from spec.language import Function
from spec.win32_events import Event, Events, Wait, signal, signal_outcomes

BOUND = 10.0  # seconds: the longest a real-thread test waits for anything that must happen


# --- real threads ---------------------------------------------------------------------------------
class _ObservedCondition(threading.Condition):
    """A real condition that tells ``_Observed`` when a thread enters or leaves ``wait``."""

    def __init__(self, lock: LockLike | None, name: str, runtime: _Observed) -> None:
        super().__init__(lock)  # type: ignore[arg-type]
        self._name, self._rt = name, runtime

    def wait(self, timeout: float | None = None) -> bool:
        with self._rt.meta:
            self._rt.blocked += 1
            self._rt.meta.notify_all()
        try:
            return super().wait(timeout)
        finally:
            with self._rt.meta:
                self._rt.blocked -= 1
                self._rt.meta.notify_all()

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        raise NotImplementedError("the kernel waits with wait() only")

    def notify(self, n: int = 1) -> None:
        self._rt.notified.append(self._name)
        super().notify(n)

    def notify_all(self) -> None:
        self._rt.notified.append(self._name)
        super().notify(sys.maxsize)  # every waiter, recorded once (not again through notify)


class _Observed(ThreadingRuntime):
    def __init__(self) -> None:
        self.meta = threading.Condition()
        self.blocked = 0  # threads inside a kernel condition's wait
        self.notified: list[str] = []  # the kernel conditions notified, in order ("kernel.wait[w0]")
        self.threads: list[ThreadHandle] = []

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike:
        return _ObservedCondition(lock, name, self)

    def start_thread(self, target: Callable[[], None], name: str) -> ThreadHandle:
        handle = super().start_thread(target, name)
        self.threads.append(handle)
        return handle

    def until_blocked(self, n: int) -> None:
        with self.meta:
            assert self.meta.wait_for(lambda: self.blocked == n, BOUND), f"{self.blocked} blocked, not {n}"

    def until(self, predicate: Callable[[], bool], what: str) -> None:
        with self.meta:
            assert self.meta.wait_for(predicate, BOUND), f"not within {BOUND}s: {what}"

    def join_all(self) -> None:
        for t in self.threads:
            t.join(BOUND)
            assert not t.is_alive(), f"{t.name} is still waiting"


def _waiter(rt: _Observed, name: str, wait: Callable[[], int], results: dict[str, int]) -> None:
    def body() -> None:
        result = wait()
        with rt.meta:
            results[name] = result
            rt.meta.notify_all()

    rt.start_thread(body, name)


def _blocked_waiters(rt: _Observed, waits: Sequence[Callable[[], int]]) -> dict[str, int]:
    """Start one thread per wait, each blocked before the next starts (so the queue order is known);
    the result of waiter ``w<i>`` appears under its name when its wait returns."""
    results: dict[str, int] = {}
    for i, wait in enumerate(waits):
        _waiter(rt, f"w{i}", wait, results)
        rt.until_blocked(i + 1)
    return results


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


def _signalled(manual: bool, waiters: int, pulse: bool) -> tuple[_Observed, Win32Event, dict[str, int]]:
    """An event with ``waiters`` threads blocked on it (w0 first), then pulsed or set once."""
    rt = _Observed()
    ev = Win32Kernel(rt).create_event(manual_reset=manual)
    results = _blocked_waiters(rt, [ev.wait] * waiters)
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
    rt = _Observed()
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
    rt = _Observed()
    kernel = Win32Kernel(rt)
    work, stop = kernel.create_event(False, name="work"), kernel.create_event(True, name="stop")
    results = _blocked_waiters(rt, [lambda: kernel.wait_for_multiple([work, stop], False)])
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
    rt = _Observed()
    kernel = Win32Kernel(rt)
    a, b = kernel.create_event(False, name="a"), kernel.create_event(False, name="b")
    results = _blocked_waiters(rt, [lambda: kernel.wait_for_multiple([a, b], True), a.wait])
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
    rt = _Observed()
    ev = Win32Kernel(rt).create_event(False)
    results = _blocked_waiters(rt, [lambda: ev.wait(1e12), lambda: ev.wait(float("inf"))])
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


# --- under the harness ----------------------------------------------------------------------------
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
            out.append((ev.wait(3600.0), rt.monotonic()))

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


# --- the reference against spec.win32_events ----------------------------------------------------
Scenario = tuple[dict[str, bool], dict[str, bool], list[tuple[tuple[str, ...], bool]], str, bool]
# Each scenario in one line: the events ("name=auto" or "name=manual", "*" when signalled), the
# blocked waits in queue order ("a+b" waits for all, "a,b" for any), and the signal ("set e", "pulse e").
SCENARIOS = {
    "auto-set-two-waiters": ("e=auto", "e e", "set e"),
    "manual-set-two-waiters": ("e=manual", "e e", "set e"),
    "auto-pulse-two-waiters": ("e=auto", "e e", "pulse e"),
    "manual-pulse-two-waiters": ("e=manual", "e e", "pulse e"),
    "pulse-nobody": ("e=auto", "", "pulse e"),
    "any-released-by-second": ("w=auto s=manual", "w,s", "set s"),
    "all-waits-behind-any": ("a=auto b=auto", "a+b a", "set a"),
    "all-completed-by-last": ("a=auto* b=manual", "a+b b", "set b"),
    "manual-releases-all-and-any": ("m=manual x=auto*", "m+x m m+x", "set m"),
}


def _scenario(events: str, waits: str, signal: str) -> Scenario:
    """(manual per event, signalled per event, blocked waits in queue order, the event signalled, pulse?)"""
    kinds = dict(event.split("=") for event in events.split())
    manual = {name: kind.rstrip("*") == "manual" for name, kind in kinds.items()}
    signalled = {name: kind.endswith("*") for name, kind in kinds.items()}
    blocked = [(tuple(w.replace("+", ",").split(",")), "+" in w) for w in waits.split()]
    how, target = signal.split()
    return manual, signalled, blocked, target, how == "pulse"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_reference_releases_whom_the_spec_releases(scenario: str) -> None:
    manual, signalled, waits, target, pulse = _scenario(*SCENARIOS[scenario])
    names = tuple(manual)
    spec_events: Events = Function(names, [Event(manual[n], signalled[n]) for n in names])
    spec_waiters = [(f"w{i}", Wait(handles, wait_all)) for i, (handles, wait_all) in enumerate(waits)]
    expected_events, expected = signal(spec_events, target, spec_waiters, pulse)
    assert (expected_events, expected) in signal_outcomes(spec_events, target, spec_waiters, pulse)

    rt = _Observed()
    kernel = Win32Kernel(rt)
    events = {n: kernel.create_event(manual[n], signalled[n], n) for n in names}

    def wait_of(handles: tuple[str, ...], wait_all: bool) -> Callable[[], int]:
        return lambda: kernel.wait_for_multiple([events[h] for h in handles], wait_all)

    results = _blocked_waiters(rt, [wait_of(h, w) for h, w in waits])
    events[target].pulse() if pulse else events[target].set()
    released_now = [name.removeprefix("kernel.wait[").removesuffix("]") for name in rt.notified]
    states_now = {n: events[n].is_set() for n in names}
    rt.until(lambda: set(released_now) <= set(results), f"{released_now} return")

    assert released_now == [who for who, _ in expected]
    assert {who: results[who] for who in released_now} == dict(expected)
    assert states_now == {n: expected_events[n].signalled for n in names}

    # let the others go: signal every event until every thread is done
    for _ in range(1000):
        if all(not t.is_alive() for t in rt.threads):
            break
        for ev in events.values():
            ev.set()
        rt.threads[0].join(0.01)
    rt.join_all()
