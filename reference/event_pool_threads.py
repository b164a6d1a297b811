"""What a pool thread of an ``EventPool`` does: wait on its event or stop, then take and run works
until the list is empty, marking itself idle in the critical section that finds it so.

A mixin, so that the design's seeded bugs and the harness reach these steps as the pool's own
methods, under the names they always had. The seams a bug overrides (``_wait``, ``_next_work``,
``_after_wake``) stay in ``reference.event_pool``, beside the pool's other seams.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .event_pool_records import CALLING, EXITED, TAKING, WAITING, Entry, PoolThread
from .failure import SchedulerFailure
from .runtime import Runtime
from .tracing import Tracer
from .win32_events import WAIT_OBJECT_0, WAIT_TIMEOUT

_log = logging.getLogger("reference.event_pool")

_STOP_INDEX = WAIT_OBJECT_0 + 1  # a pool thread waits on (its event, stop)
_COMPACT_AT = 1024  # drop the handed-out head of the work array once it is this long and half of it


class PoolThreadLoop:
    """A pool thread's loop, its take from the work list, and its run of one work."""

    # Set by ``EventPool.__init__``; the list's fields are guarded by the list lock.
    _runtime: Runtime
    _tracer: Tracer | None
    _on_error: Callable[[Any, BaseException], None]
    _works: list[Entry]
    _next: int
    _base: int
    _idle: list[PoolThread]
    _pool_threads: set[object]
    _failure: SchedulerFailure | None

    if TYPE_CHECKING:  # the pool's own (``reference.event_pool``), called from its threads

        def _wait(self, me: PoolThread) -> int: ...
        def _after_wake(self, me: PoolThread) -> None: ...
        def _fail(self, error: BaseException) -> None: ...

    # -- the pool threads ------------------------------------------------------------------

    def _thread_main(self, me: PoolThread) -> None:
        try:
            thread = me.name
            while True:
                me.state = WAITING
                tracer = self._tracer
                if tracer is not None:
                    tracer.emit(thread, "wait", {})
                woke = self._wait(me)
                if tracer is not None:
                    result = "stop" if woke == _STOP_INDEX else "timeout" if woke == WAIT_TIMEOUT else "event"
                    tracer.emit(thread, "wake", {"result": result})
                if woke == _STOP_INDEX:
                    break
                me.state = TAKING
                self._after_wake(me)
        except BaseException as exc:  # our own fault (a work's errors go to on_error)
            self._fail(exc)
        finally:
            me.state = EXITED

    def _take(self, me: PoolThread, mark_idle: bool = True) -> Entry | None:
        """Under the list lock: works[next] and next + 1 (cancelled works skipped), or None when empty.

        Finding the list empty, the thread marks itself idle (``mark_idle``);
        taking a work, it is not idle (it may have been, after a timeout).
        """
        works = self._works
        i = self._next
        end = len(works)
        while i < end and works[i].cancelled:
            i += 1
        tracer = self._tracer
        if i >= end or self._failure is not None:
            self._next = i
            if mark_idle:
                self._mark_idle(me)
            if tracer is not None:
                tracer.emit(me.name, "take", {"item": None})
            return None
        entry = works[i]
        self._next = i + 1
        if me.ident is None:  # a thread runs user code only after a take: known by then
            me.ident = self._runtime.current_thread()
            self._pool_threads.add(me.ident)
        if me.idle:
            me.idle = False
            self._idle.remove(me)
        me.in_hand = entry
        if i >= _COMPACT_AT and 2 * i >= end:
            del works[: i + 1]
            self._base += i + 1
            self._next = 0
        if tracer is not None:
            tracer.emit(me.name, "take", {"item": entry.index})
        return entry

    def _mark_idle(self, me: PoolThread) -> None:
        """Under the list lock: the thread is idle, a post may pick it."""
        if not me.idle:
            me.idle = True
            self._idle.append(me)

    def _run(self, me: PoolThread, entry: Entry) -> None:
        me.in_hand = None
        me.state = CALLING
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(me.name, "run", {"item": entry.index})
        raised = False
        try:
            entry.work()
        except Exception as exc:
            raised = entry.raised = True
            self._report_error(entry, exc)
        if tracer is not None:
            tracer.emit(me.name, "done", {"item": entry.index, "raised": raised})
        me.state = TAKING

    def _report_error(self, entry: Entry, error: BaseException) -> None:
        # A raising error callback must not take the pool thread with it.
        try:
            owner = entry.owner
            if owner is None or not owner._report_error(error):
                self._on_error(entry.work, error)
        except Exception:
            _log.exception("the error callback raised on work %r", entry.work)
