"""Each rule of the Win32 event contract, as ``spec.win32_events`` states it."""

from __future__ import annotations

import pytest

from spec.language import Function
from spec.win32_events import (
    Event,
    Events,
    Wait,
    consume,
    reset_event,
    satisfy,
    set_event,
    signal,
    signal_outcomes,
)

AUTO, MANUAL = Event(manual=False), Event(manual=True)


def events(**values: Event) -> Events:
    return Function(tuple(values), values.values())


def test_set_event_signals_and_setting_a_signalled_event_changes_nothing() -> None:
    assert set_event(AUTO) == Event(manual=False, signalled=True)
    assert set_event(set_event(AUTO)) == set_event(AUTO)  # signals do not count up
    assert set_event(set_event(MANUAL)) == Event(manual=True, signalled=True)


def test_reset_event_unsignals() -> None:
    assert reset_event(set_event(MANUAL)) == MANUAL
    assert reset_event(AUTO) == AUTO


def test_a_successful_wait_consumes_an_auto_reset_signal_but_not_a_manual_one() -> None:
    assert consume(set_event(AUTO)) == AUTO
    assert consume(set_event(MANUAL)) == set_event(MANUAL)
    ev = events(a=set_event(AUTO))
    outcome = satisfy(ev, Wait(("a",)))
    assert outcome is not None and outcome[1] == 0
    assert outcome[0]["a"] == AUTO
    assert satisfy(outcome[0], Wait(("a",))) is None  # the second wait blocks


def test_a_manual_reset_event_satisfies_every_wait_until_reset() -> None:
    ev = events(m=set_event(MANUAL))
    for _ in range(3):
        outcome = satisfy(ev, Wait(("m",)))
        assert outcome is not None
        ev = outcome[0]
    assert satisfy(events(m=reset_event(ev["m"])), Wait(("m",))) is None


def test_an_unsignalled_event_blocks() -> None:
    assert satisfy(events(a=AUTO, m=MANUAL), Wait(("a", "m"))) is None


def test_set_event_releases_one_waiter_of_an_auto_reset_event_and_stays_unsignalled() -> None:
    ev = events(a=AUTO)
    waiters = [("t0", Wait(("a",))), ("t1", Wait(("a",)))]
    after, released = signal(ev, "a", waiters)
    assert released == (("t0", 0),)
    assert after["a"] == AUTO  # consumed by the release: nobody can take it any more
    outcomes = signal_outcomes(ev, "a", waiters)
    assert sorted(r for _, r in outcomes) == [(("t0", 0),), (("t1", 0),)]  # either waiter, never both


def test_set_event_with_nobody_waiting_leaves_the_event_signalled() -> None:
    nobody: list[tuple[str, Wait]] = []
    after, released = signal(events(a=AUTO), "a", nobody)
    assert released == () and after["a"].signalled


def test_set_event_releases_every_waiter_of_a_manual_reset_event() -> None:
    waiters = [("t0", Wait(("m",))), ("t1", Wait(("m",))), ("t2", Wait(("x",)))]
    after, released = signal(events(m=MANUAL, x=AUTO), "m", waiters)
    assert set(released) == {("t0", 0), ("t1", 0)}  # t2 waits on another event
    assert after["m"].signalled


@pytest.mark.parametrize("kind", [AUTO, MANUAL])
def test_pulse_event_releases_current_waiters_then_resets(kind: Event) -> None:
    waiters = [("t0", Wait(("e",))), ("t1", Wait(("e",)))]
    after, released = signal(events(e=kind), "e", waiters, pulse=True)
    assert len(released) == (2 if kind.manual else 1)
    assert not after["e"].signalled


@pytest.mark.parametrize("kind", [AUTO, MANUAL])
def test_a_thread_not_yet_waiting_misses_a_pulse(kind: Event) -> None:
    nobody: list[tuple[str, Wait]] = []
    after, released = signal(events(e=kind), "e", nobody, pulse=True)
    assert released == ()
    assert satisfy(after, Wait(("e",))) is None  # it blocks, though the pulse came first


def test_wait_any_returns_the_lowest_signalled_index_and_consumes_only_it() -> None:
    ev = events(a=AUTO, b=set_event(AUTO), c=set_event(AUTO))
    outcome = satisfy(ev, Wait(("a", "b", "c")))
    assert outcome is not None
    after, index = outcome
    assert index == 1
    assert not after["b"].signalled and after["c"].signalled


def test_wait_all_needs_every_handle_at_once_and_consumes_them_all() -> None:
    ev = events(a=set_event(AUTO), m=MANUAL)
    assert satisfy(ev, Wait(("a", "m"), wait_all=True)) is None
    assert ev["a"].signalled  # a wait-all that blocks consumes nothing
    outcome = satisfy(ev.except_("m", set_event(MANUAL)), Wait(("a", "m"), wait_all=True))
    assert outcome is not None
    after, index = outcome
    assert index == 0
    assert not after["a"].signalled and after["m"].signalled


def test_a_blocked_wait_all_is_released_only_by_the_last_signal() -> None:
    waiters = [("t0", Wait(("a", "b"), wait_all=True))]
    after, released = signal(events(a=AUTO, b=AUTO), "a", waiters)
    assert released == () and after["a"].signalled
    after, released = signal(after, "b", waiters)
    assert released == (("t0", 0),)
    assert not after["a"].signalled and not after["b"].signalled


def test_a_blocked_wait_any_returns_the_index_of_the_handle_that_released_it() -> None:
    waiters = [("t0", Wait(("work", "stop")))]
    _, released = signal(events(work=AUTO, stop=MANUAL), "stop", waiters)
    assert released == (("t0", 1),)
