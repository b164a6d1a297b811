"""The reference ``reference.win32_events`` against ``spec.win32_events``: small scenarios run on both
sides, the reference with real threads and ``spec.win32_events.signal`` with the waiters in the
reference's (FIFO) queue order, and who is released, with which index, and the events' states after
are compared.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reference.win32_events import Win32Kernel
from spec.language import Function
from spec.win32_events import Event, Events, Wait, signal, signal_outcomes
from tests.event_pool.win32_observed import Observed, blocked_waiters

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

    rt = Observed()
    kernel = Win32Kernel(rt)
    events = {n: kernel.create_event(manual[n], signalled[n], n) for n in names}

    def wait_of(handles: tuple[str, ...], wait_all: bool) -> Callable[[], int]:
        return lambda: kernel.wait_for_multiple([events[h] for h in handles], wait_all)

    results = blocked_waiters(rt, [wait_of(h, w) for h, w in waits])
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
