"""``asyncio``'s event loop in a controlled thread: refused where it would wait on its selector.

An event loop waits in ``selector.select(timeout)`` for its next timer (``asyncio.sleep``,
``call_later``), for I/O, or for another thread's ``call_soon_threadsafe`` (a byte on its
self-pipe). In a controlled thread that wait is real: no other controlled thread runs during it
(they share the one OS thread), and the loop's clock (``time.monotonic``) is the virtual one,
which only the explored threads' sleeps and timeouts move, so a timer never fell due and the
check ran past its time limit with no verdict (session 38's review: ``asyncio.run`` of an
``asyncio.sleep(0.01)`` in a thread). So, as ``multiprocessing.pool``'s pools are, such a wait is
refused with a ``UsageError`` naming the problem and the fix. A loop that never waits (its
coroutines' ``asyncio.sleep(0)`` only) runs as before; so does everything else that merely
imports ``asyncio`` or uses a selector of its own (``subprocess``).

Not done: modelling the wait (a controlled event that ``call_soon_threadsafe`` sets, waited on
with the timer's timeout), which also needs each controlled thread's own running loop (CPython
keeps one per OS thread, which the greenlets share).
"""

from __future__ import annotations

import selectors
import sys
from collections.abc import Callable
from typing import Any

from model_checks.harness import patch_io_selectors
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.scheduler import UsageError

MESSAGE = (
    "asyncio's event loop in a controlled thread would wait on its real selector (for a timer, "
    "asyncio.sleep with a delay or call_later, for I/O, or for another thread's "
    "call_soon_threadsafe), which the explorer cannot schedule (the check would hang): explore "
    "the threads, not the event loop (run the loop outside the explored function, or give the "
    "explored coroutines no wait but asyncio.sleep(0))"
)


def _loops_selector(selector: object) -> bool:
    """Is ``selector`` the selector of the event loop running here?"""
    events: Any = sys.modules.get("asyncio.events")
    loop = events._get_running_loop() if events is not None else None
    return loop is not None and getattr(loop, "_selector", None) is selector


def _refusing(real: Callable[..., Any]) -> Callable[..., Any]:
    def select(self: object, timeout: float | None = None) -> Any:
        if _controlled() is not None and (timeout is None or timeout > 0) and _loops_selector(self):
            raise UsageError(MESSAGE)
        return real(self, timeout)

    select.__name__ = select.__qualname__ = "select"
    return select


def refused_waits() -> list[tuple[Any, str, Any, Any]]:
    """(selector class, ``"select"``, its real method, the refusing one) for each of ``selectors``'
    classes that defines ``select`` (the base class's is abstract)."""
    found = []
    for cls in vars(selectors).values():
        if (
            isinstance(cls, type)
            and issubclass(cls, selectors.BaseSelector)
            and cls is not selectors.BaseSelector
        ):
            real = vars(cls).get("select")
            if real is not None:
                # (and otherwise a controlled wait: ``patch_io_selectors``)
                found.append((cls, "select", real, _refusing(patch_io_selectors.waiting(real))))
    return found


def hide_running_loop() -> Callable[[], None]:
    """While patched, this OS thread runs no event loop: one that another part of the process runs
    here (a synchronous Playwright session keeps its loop set) would be every controlled thread's
    (``asyncio.run`` in one raised "cannot be called from a running event loop"). The returned
    function sets it back."""
    events: Any = sys.modules.get("asyncio.events")
    loop = events._get_running_loop() if events is not None else None
    if loop is None:
        return lambda: None
    events._set_running_loop(None)
    return lambda: events._set_running_loop(loop)
