"""Win32 event objects at spec level: pure functions over event values.

A spec whose threads synchronise through Windows events keeps a
``Function[Handle, Event]`` among its variables and does every event operation
through this module, so each rule of the Win32 contract is written once:

* **auto-reset** (``manual=False``): a wait that succeeds *consumes* the
  signal, so ``SetEvent`` releases at most one waiter; ``SetEvent`` on an event
  already signalled changes nothing (signals do not count up);
* **manual-reset** (``manual=True``): the event stays signalled until
  ``ResetEvent``, and releases every waiter meanwhile;
* ``PulseEvent``: releases the threads waiting *at that instant* (auto-reset:
  one of them; manual-reset: all), then resets the event. A thread that is
  not yet blocked in its wait misses the pulse for good — the call Microsoft
  documents as unreliable, and the lost wakeup of a port that uses it;
* ``WaitForSingleObject`` / ``WaitForMultipleObjects``: a wait returns at once
  when it is satisfied (``satisfy``), else the thread blocks until a signal
  releases it (``signal``). *Any*: the lowest-indexed signalled handle wins and
  only that one is consumed. *All*: satisfied only when every handle is
  signalled at the same time, and then every auto-reset one is consumed at once.

A waiter is released *by the signalling step*, atomically, as the kernel does:
after ``SetEvent`` on an auto-reset event with a blocked waiter, the event is
unsignalled again and the waiter is already on its way out of the wait —
nobody can steal that signal. A timeout is not an event operation: a spec
models it as its own step, enabled only while the thread is blocked.

Everything here is pure: the functions return new values.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import permutations
from typing import NamedTuple, TypeVar

from spec.language import Function

Handle = Hashable
T = TypeVar("T", bound=Hashable)  # whoever waits (a thread's name)

WAIT_TIMEOUT = "timeout"
"""What a wait that timed out returns (a wait that succeeds returns ``WAIT_OBJECT_0 + index``)."""


class Event(NamedTuple):
    """A kernel event object: its reset mode and whether it is signalled."""

    manual: bool
    signalled: bool = False


class Wait(NamedTuple):
    """One ``WaitForSingleObject`` (one handle) or ``WaitForMultipleObjects`` call."""

    handles: tuple[Handle, ...]
    wait_all: bool = False


Events = Function[Handle, Event]
Released = tuple[tuple[T, int], ...]  # (waiter, the index its wait returns), in release order


def set_event(e: Event) -> Event:
    """``SetEvent`` with nobody waiting: signalled (a no-op when it already is)."""
    return e._replace(signalled=True)


def reset_event(e: Event) -> Event:
    """``ResetEvent``: unsignalled."""
    return e._replace(signalled=False)


def consume(e: Event) -> Event:
    """What a successful wait leaves: an auto-reset event is reset, a manual-reset one stays signalled."""
    return e if e.manual else reset_event(e)


def satisfy(events: Events, wait: Wait) -> tuple[Events, int] | None:
    """The wait returns now: (the events after it consumed its signals, ``WAIT_OBJECT_0 + index``).

    ``None``: not satisfied now, the thread blocks. *Any* returns the lowest
    index among the signalled handles; *all* returns 0 (``WAIT_OBJECT_0``).
    """
    if wait.wait_all:
        if not all(events[h].signalled for h in wait.handles):
            return None
        for h in wait.handles:
            events = events.except_(h, consume(events[h]))
        return events, 0
    for index, h in enumerate(wait.handles):
        if events[h].signalled:
            return events.except_(h, consume(events[h])), index
    return None


def signal(
    events: Events, handle: Handle, waiters: Sequence[tuple[T, Wait]], pulse: bool = False
) -> tuple[Events, Released[T]]:
    """``SetEvent(handle)`` (or ``PulseEvent`` with ``pulse``) while ``waiters`` are blocked.

    The event becomes signalled; the blocked waits that include ``handle`` are
    then satisfied in the order given (the kernel's queue order) while they can
    be — an auto-reset event is consumed by the first, so it releases one. A
    pulse finally resets the event: whoever was not released, and whoever is
    not yet blocked, missed it.
    """
    events = events.except_(handle, set_event(events[handle]))
    released: list[tuple[T, int]] = []
    for who, wait in waiters:
        if handle not in wait.handles:
            continue
        outcome = satisfy(events, wait)
        if outcome is not None:
            events, index = outcome
            released.append((who, index))
    if pulse:
        events = events.except_(handle, reset_event(events[handle]))
    return events, tuple(released)


def signal_outcomes(
    events: Events, handle: Handle, waiters: Sequence[tuple[T, Wait]], pulse: bool = False
) -> list[tuple[Events, Released[T]]]:
    """Every outcome of ``signal`` over every queue order of the waiters (Win32 promises no order)."""
    outcomes: list[tuple[Events, Released[T]]] = []
    for order in permutations(waiters):
        outcome = signal(events, handle, order, pulse)
        if all(outcome[0] != o[0] or set(outcome[1]) != set(o[1]) for o in outcomes):
            outcomes.append(outcome)
    return outcomes
