"""Win32 event objects over the runtime seam: ``SetEvent``, ``ResetEvent``, ``PulseEvent``,
``WaitForSingleObject`` and ``WaitForMultipleObjects``, written once.

A ``Win32Kernel`` plays the part of the kernel's dispatcher lock: one runtime lock makes every
event operation of its events atomic. A thread that has to block registers a *wait block* on
each event it waits on and sleeps on a condition of that lock that only it waits on. The thread
that signals an event satisfies the blocks itself, in the event's queue order, consuming the
signal on the waiter's behalf, and only then notifies the waiter, as the kernel does. So:

* an **auto-reset** event with waiters hands its signal to exactly one of them and stays
  unsignalled: nobody can steal a signal already given to a waiter; with nobody waiting it stays
  signalled until one wait consumes it; ``SetEvent`` on a signalled event changes nothing
  (signals do not count up);
* a **manual-reset** event releases every waiter and stays signalled until ``ResetEvent``;
* ``PulseEvent`` releases the waiters blocked at that instant (auto-reset: at most one), then
  resets the event: a thread not yet blocked misses it. Microsoft documents ``PulseEvent`` as
  unreliable because a kernel APC can take a waiter out of its wait for a moment; here a
  registered wait block never leaves its queue before its wait returns (a spurious condition
  wakeup leaves it in place), so the only way to miss a pulse is not to be waiting yet;
* *wait any* returns ``WAIT_OBJECT_0 + i`` for the lowest signalled index ``i`` and consumes
  only that event; *wait all* is satisfied only when every event is signalled at once, then
  consumes the auto-reset ones together, and a wait-all that blocks consumes nothing (it reserves
  nothing either: a wait-any may take an auto-reset event it needs, and it may starve, as on
  Windows);
* a wait whose timeout expires returns ``WAIT_TIMEOUT``, unless a signaller satisfied its block
  first: that signal is already consumed for it, so the wait returns it rather than lose it.

Fairness: the waiters of one event are served first come, first served (the order their waits
registered under the kernel lock). Windows promises no order (an APC moves a waiter to the back
of the queue), so correct code must not rely on it; ``spec.win32_events.signal_outcomes``
explores every order, and ``spec.win32_events.signal`` given the FIFO order gives this module's.

With ``ThreadingRuntime`` these are real-thread events; with the harness's controlled runtime
every lock and condition step is a scheduling point, so the harness explores their
interleavings, and its spurious wakeups and virtual timeouts reach these waits: a spurious wakeup
never surfaces (the waiter re-checks its block and waits out what remains of its timeout), a
timeout surfaces as ``WAIT_TIMEOUT``.

Each thread that ever blocked keeps one condition in its kernel (a dictionary keyed by the
thread's identity), so a blocking wait allocates nothing but its wait block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

from .runtime import DEFAULT_RUNTIME, ConditionLike, Runtime

WAIT_OBJECT_0: int = 0
"""A satisfied wait returns ``WAIT_OBJECT_0 + index`` (index 0 for a single object or wait-all)."""
WAIT_TIMEOUT: int = 0x102
INFINITE: float | None = None
"""No timeout (the Pythonic API takes seconds; ``None`` is Win32's ``INFINITE``)."""
MAXIMUM_WAIT_OBJECTS: int = 64

# Longer waits are cut into pieces this long: ``threading`` refuses timeouts beyond
# ``threading.TIMEOUT_MAX`` (about 292 years on Linux) with OverflowError.
_LONGEST_WAIT = 1e9


def _timeout_seconds(value: object, argument: str = "timeout", scale: float = 1.0) -> float | None:
    """A validated timeout in seconds (``None``: infinite), from ``value`` in units of ``scale`` s."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{argument} must be a number of {'seconds' if scale == 1 else 'milliseconds'} or None "
            f"(INFINITE), not {type(value).__name__}"
        )
    if math.isnan(value):
        raise ValueError(f"{argument} is NaN")
    if value < 0:
        raise ValueError(f"{argument} must be >= 0, got {value!r}")
    if math.isinf(value):
        return None
    return value * scale


def _require_bool(value: object, argument: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{argument} must be a bool, not {type(value).__name__}")
    return value


class _WaitBlock:
    """One blocked ``WaitFor…`` call, queued on each of its events until a signaller satisfies it
    (``result`` set, under the kernel lock) or its wait gives up."""

    __slots__ = ("events", "result", "wait_all", "wake")

    def __init__(self, events: tuple[Win32Event, ...], wait_all: bool, wake: ConditionLike) -> None:
        self.events = events
        self.wait_all = wait_all
        self.wake = wake
        self.result: int | None = None

    def unregister(self) -> None:
        for event in self.events:
            event._waiters.remove(self)


class Win32Kernel:
    """The lock that makes every operation on its events atomic, and the events' factory.

    Use one per pool or program: a ``wait_for_multiple`` may only mix events of one kernel.
    """

    def __init__(self, runtime: Runtime | None = None, name: str = "") -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        self.name = name
        self._runtime: Runtime = DEFAULT_RUNTIME if runtime is None else runtime
        self._lock = self._runtime.lock(f"{name}.kernel" if name else "kernel")
        self._wakers: dict[Hashable, ConditionLike] = {}
        # Only a spurious wakeup needs the clock (to wait out the rest of a timeout): the
        # harness's runtime gives its virtual one, real threads the real one.
        self._clock: Callable[[], float] = self._runtime.monotonic

    def create_event(self, manual_reset: bool, initial_state: bool = False, name: str = "") -> Win32Event:
        """``CreateEvent``: a manual-reset or auto-reset event, signalled if ``initial_state``."""
        return Win32Event(self, manual_reset, initial_state, name)

    def wait_for_multiple(
        self, events: Sequence[Win32Event], wait_all: bool, timeout: float | None = None
    ) -> int:
        """``WaitForMultipleObjects``: ``WAIT_OBJECT_0 + index`` (any: the lowest signalled index;
        all: ``WAIT_OBJECT_0``) or ``WAIT_TIMEOUT`` after ``timeout`` seconds (``None``: never)."""
        handles = self._checked_events(events)
        return self._wait(handles, _require_bool(wait_all, "wait_all"), _timeout_seconds(timeout))

    # --- under the kernel lock ------------------------------------------------------------
    def _checked_events(self, events: object) -> tuple[Win32Event, ...]:
        if not isinstance(events, Sequence) or isinstance(events, str | bytes):
            raise TypeError(f"events must be a sequence of Win32Event, not {type(events).__name__}")
        if not events:
            raise ValueError("events is empty: wait for at least one event")
        if len(events) > MAXIMUM_WAIT_OBJECTS:
            raise ValueError(f"events holds {len(events)} events, more than MAXIMUM_WAIT_OBJECTS (64)")
        seen: dict[int, int] = {}
        for index, event in enumerate(events):
            if not isinstance(event, Win32Event):
                raise TypeError(f"events[{index}] is a {type(event).__name__}, not a Win32Event")
            if event._kernel is not self:
                raise ValueError(f"events[{index}] ({event!r}) belongs to another Win32Kernel")
            if id(event) in seen:
                raise ValueError(
                    f"events[{seen[id(event)]}] and events[{index}] are the same event {event!r}"
                )
            seen[id(event)] = index
        return tuple(events)

    @staticmethod
    def _satisfy(events: tuple[Win32Event, ...], wait_all: bool) -> int | None:
        """Consume what the wait takes and return its result if it is satisfied now; else None."""
        if wait_all:
            for event in events:
                if not event._signalled:
                    return None
            for event in events:
                if not event.manual_reset:
                    event._signalled = False
            return WAIT_OBJECT_0
        for index, event in enumerate(events):
            if event._signalled:
                if not event.manual_reset:
                    event._signalled = False
                return WAIT_OBJECT_0 + index
        return None

    def _signal(self, event: Win32Event) -> None:
        """Signal ``event`` and hand it to its queued waits, first come first served, while it
        stays signalled (an auto-reset event stops at the first wait it satisfies)."""
        event._signalled = True
        if not event._waiters:
            return
        for block in tuple(event._waiters):
            if not event._signalled:
                break
            result = self._satisfy(block.events, block.wait_all)
            if result is not None:
                block.result = result
                block.unregister()
                block.wake.notify()

    def _waker(self) -> ConditionLike:
        """The calling thread's own condition of the kernel lock (made on its first block)."""
        me = self._runtime.current_thread()
        wake = self._wakers.get(me)
        if wake is None:
            wake = self._runtime.condition(
                self._lock, f"{self.name or 'kernel'}.wait[{self._runtime.thread_name()}]"
            )
            self._wakers[me] = wake
        return wake

    def _wait(self, events: tuple[Win32Event, ...], wait_all: bool, timeout: float | None) -> int:
        with self._lock:
            result = self._satisfy(events, wait_all)
            if result is not None:
                return result
            if timeout == 0:
                return WAIT_TIMEOUT
            block = _WaitBlock(events, wait_all, self._waker())
            for event in events:
                event._waiters.append(block)
            try:
                return self._block(block, timeout)
            except (Exception, KeyboardInterrupt, SystemExit):
                # A real condition's wait holds the lock again when it raises: take the block out
                # of its queues, or a later signal would be consumed for a thread that is gone.
                # Other BaseExceptions (a checker unwinding an abandoned execution) leave the
                # kernel as it is: nothing uses it again, and the lock may not be held.
                if block.result is None:
                    block.unregister()
                raise

    def _block(self, block: _WaitBlock, timeout: float | None) -> int:
        remaining = timeout
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            piece = remaining if remaining is None or remaining <= _LONGEST_WAIT else _LONGEST_WAIT
            notified = block.wake.wait(piece)
            # First the block: a signal given to this wait is already consumed, even if the
            # timeout fired meanwhile, so returning WAIT_TIMEOUT would lose it.
            if block.result is not None:
                return block.result
            if deadline is None:
                continue  # a spurious wakeup (or the end of a piece of an infinite wait)
            if not notified and piece == remaining:
                block.unregister()
                return WAIT_TIMEOUT
            remaining = deadline - self._clock()
            if remaining <= 0:
                block.unregister()
                return WAIT_TIMEOUT

    def __repr__(self) -> str:
        return f"<Win32Kernel {self.name}>" if self.name else "<Win32Kernel>"


class Win32Event:
    """A kernel event object of one ``Win32Kernel`` (make it with ``Win32Kernel.create_event``)."""

    __slots__ = ("_kernel", "_signalled", "_waiters", "manual_reset", "name")

    def __init__(
        self, kernel: Win32Kernel, manual_reset: bool, initial_state: bool = False, name: str = ""
    ) -> None:
        if not isinstance(kernel, Win32Kernel):
            raise TypeError(f"kernel must be a Win32Kernel, not {type(kernel).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        self.manual_reset = _require_bool(manual_reset, "manual_reset")
        self._signalled = _require_bool(initial_state, "initial_state")
        self.name = name
        self._kernel = kernel
        self._waiters: list[_WaitBlock] = []

    def set(self) -> None:
        """``SetEvent``: signalled; an auto-reset event releases at most one waiter, which
        consumes the signal; a manual-reset one releases every waiter and stays signalled."""
        with self._kernel._lock:
            self._kernel._signal(self)

    def reset(self) -> None:
        """``ResetEvent``: unsignalled."""
        with self._kernel._lock:
            self._signalled = False

    def pulse(self) -> None:
        """``PulseEvent``: release the waiters blocked now (auto-reset: at most one), then unsignalled."""
        with self._kernel._lock:
            self._kernel._signal(self)
            self._signalled = False

    def wait(self, timeout: float | None = None) -> int:
        """``WaitForSingleObject``: ``WAIT_OBJECT_0`` or, after ``timeout`` seconds, ``WAIT_TIMEOUT``."""
        return self._kernel._wait((self,), False, _timeout_seconds(timeout))

    def is_set(self) -> bool:
        """Whether it is signalled now: for assertions and invariants (a plain read, no lock, so a
        harness invariant may call it), never to decide whether to wait."""
        return self._signalled

    def __repr__(self) -> str:
        mode = "manual-reset" if self.manual_reset else "auto-reset"
        state = "signalled" if self._signalled else "unsignalled"
        return f"<Win32Event {self.name or hex(id(self))} {mode} {state}>"


# --- the Win32 names, for ports (timeouts in milliseconds; None is INFINITE) -------------------
def CreateEvent(
    kernel: Win32Kernel, manual_reset: bool, initial_state: bool = False, name: str = ""
) -> Win32Event:
    return kernel.create_event(manual_reset, initial_state, name)


def SetEvent(event: Win32Event) -> None:
    event.set()


def ResetEvent(event: Win32Event) -> None:
    event.reset()


def PulseEvent(event: Win32Event) -> None:
    event.pulse()


def WaitForSingleObject(event: Win32Event, milliseconds: float | None = INFINITE) -> int:
    if not isinstance(event, Win32Event):
        raise TypeError(f"event must be a Win32Event, not {type(event).__name__}")
    return event._kernel._wait((event,), False, _timeout_seconds(milliseconds, "milliseconds", 0.001))


def WaitForMultipleObjects(
    events: Sequence[Win32Event], wait_all: bool, milliseconds: float | None = INFINITE
) -> int:
    timeout = _timeout_seconds(milliseconds, "milliseconds", 0.001)
    if isinstance(events, Sequence) and events and isinstance(events[0], Win32Event):
        return events[0]._kernel.wait_for_multiple(events, wait_all, timeout)
    if not isinstance(events, Sequence) or isinstance(events, str | bytes):
        raise TypeError(f"events must be a sequence of Win32Event, not {type(events).__name__}")
    if not events:
        raise ValueError("events is empty: wait for at least one event")
    raise TypeError(f"events[0] is a {type(events[0]).__name__}, not a Win32Event")
