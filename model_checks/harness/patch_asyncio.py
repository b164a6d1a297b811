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

A controlled thread's ``call_soon_threadsafe`` (so ``run_coroutine_threadsafe``) to a loop that
another controlled thread runs, or may run (one not running while another thread lives), is
refused when it is made (``refused_posts``): the loop learns of it from its selector only, so
such a loop waits there in some schedule. The refusal at the wait alone came too late: in the
first order explored the loop's thread had not run yet, the poster's timed wait for the result
(``fut.result(timeout=5)``) expired (a virtual timeout may) and the check reported the program's
``TimeoutError`` with a replay, as if the program were wrong (eleventh review, #19). A post to the
poster's own running loop, to a closed one, to one a thread outside the check runs, or by the
execution's only live thread (it will run the loop itself), is made as before.

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
from model_checks.harness.thread_idents import thread_ident

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


def _waited_for(loop: Any) -> bool:
    """Would ``loop`` learn of a post made now by the running controlled thread only from its
    selector's wait? (it runs in another controlled thread, or it runs nowhere yet and another
    thread of the execution lives, which may run it)"""
    rt = _controlled()
    if rt is None or loop.is_closed():
        return False
    ex = rt._ex
    others = [t.tid for t in ex.live if t.tid != ex.current]
    running = getattr(loop, "_thread_id", None)  # (``run_forever`` sets it: ``threading.get_ident()``)
    if running is None:
        return bool(others)
    return running in {thread_ident(tid) for tid in others}


def _refuse(loop: Any) -> None:
    """Refuse the post: the check ends here. A loop no thread runs yet is closed first: left open
    in the ended execution's reference cycles, its self-pipe's sockets were finalised before it,
    and its ``__del__`` printed "Exception ignored ... Invalid file descriptor: -1"."""
    if not loop.is_running():
        loop.close()
    raise UsageError(MESSAGE)


def _refusing_post(real: Callable[..., Any]) -> Callable[..., Any]:
    def call_soon_threadsafe(self: Any, callback: Callable[..., Any], *args: Any, context: Any = None) -> Any:
        if _waited_for(self):
            _refuse(self)
        return real(self, callback, *args, context=context)

    call_soon_threadsafe.__name__ = call_soon_threadsafe.__qualname__ = "call_soon_threadsafe"
    return call_soon_threadsafe


def _refusing_submit(real: Callable[..., Any]) -> Callable[..., Any]:
    def run_coroutine_threadsafe(coro: Any, loop: Any) -> Any:
        if _waited_for(loop):
            close = getattr(coro, "close", None)
            if close is not None:
                close()  # (never to be awaited: no "was never awaited" warning at its collection)
            _refuse(loop)
        return real(coro, loop)

    run_coroutine_threadsafe.__name__ = run_coroutine_threadsafe.__qualname__ = "run_coroutine_threadsafe"
    return run_coroutine_threadsafe


def refused_posts() -> list[tuple[Any, str, Any, Any]]:
    """``BaseEventLoop.call_soon_threadsafe`` and ``asyncio.run_coroutine_threadsafe`` (in
    ``asyncio`` and its ``tasks``), each refusing a post its loop would wait for, where the program
    imported ``asyncio``."""
    base: Any = sys.modules.get("asyncio.base_events")
    tasks: Any = sys.modules.get("asyncio.tasks")
    found: list[tuple[Any, str, Any, Any]] = []
    if base is not None:
        real = base.BaseEventLoop.call_soon_threadsafe
        found.append((base.BaseEventLoop, "call_soon_threadsafe", real, _refusing_post(real)))
    if tasks is not None:
        submit = _refusing_submit(tasks.run_coroutine_threadsafe)
        found.append((tasks, "run_coroutine_threadsafe", tasks.run_coroutine_threadsafe, submit))
        asyncio: Any = sys.modules.get("asyncio")
        if asyncio is not None and asyncio.run_coroutine_threadsafe is tasks.run_coroutine_threadsafe:
            found.append((asyncio, "run_coroutine_threadsafe", tasks.run_coroutine_threadsafe, submit))
    return found


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
