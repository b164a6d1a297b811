"""The numbers ``threading.get_ident()`` and ``get_native_id()`` give in an execution's threads.

A worker's is ``IDENT_BASE`` plus its index in the execution. The main controlled thread's are the
real main thread's, which a program's module took at import (``MAIN_IDENT =
threading.get_ident()``): with ``IDENT_BASE`` in their place its main thread was "not the main
thread" (eighth review, session 40: r114, r116), and a fast path for the main thread known by
that ident was never taken (r117, a race proved absent). And ``threading.main_thread()``: one
object for every execution (``MAIN_THREAD``), which a module's ``MAIN = threading.current_thread()``
taken at import is rebound to while patched (r115).

A finished worker's ident is given to the next worker started, as CPython's (glibc's) are: the
ident is the address of the thread's stack, which glibc caches when the thread ends and hands to
the next thread it makes, the one freed last first (review 13's F5: sessions kept by
``get_ident()`` and never removed were proved apart, while a real run's next thread found the
dead one's session 30 times out of 30). Freed at the thread's end, joined or not, as a detached
thread's stack is; ``native_id`` (the kernel's thread id) is never given again, as Linux's."""

from __future__ import annotations

import threading
from typing import Any

from model_checks.harness.rt.objects import ThreadState
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies import observed
from model_checks.harness.sync import reprs
from model_checks.harness.sync.handles import ThreadHandle

IDENT_BASE = 1_000_000  # ``get_ident()`` of an execution's worker: this plus its index
MAIN_IDENT: int = threading.main_thread().ident or IDENT_BASE
MAIN_NATIVE_ID: int = threading.main_thread().native_id or IDENT_BASE


RUNNING: list[Any] = [None]  # the running execution (``patch_os_thread`` keeps it up)


class _Idents:
    """The idents of one execution's workers, given out in the order of its steps: a worker's
    ``spawn`` takes the ident freed last (else a new one: ``IDENT_BASE`` plus its index), its
    ``exit`` frees it. Read up to the execution's last step at each question."""

    def __init__(self, ex: Any) -> None:
        self.ex = ex
        self.read = 0  # the steps taken into account
        self.of: dict[int, int] = {}  # worker -> ident
        self.holder: dict[int, int] = {}  # ident -> the worker given it last
        self.freed: list[int] = []

    def catch_up(self) -> None:
        steps = self.ex.steps
        for i in range(self.read, len(steps)):
            step = steps[i]
            op = step.op
            if type(op.obj) is not ThreadState:
                continue
            if op.kind == "spawn":
                tid = op.obj.tid
                ident = self.freed.pop() if self.freed else IDENT_BASE + tid
                self.of[tid] = ident
                self.holder[ident] = tid
            elif op.kind == "exit" and step.tid in self.of:
                self.freed.append(self.of[step.tid])
        self.read = len(steps)


_IDENTS: list[_Idents | None] = [None]


def _idents() -> _Idents | None:
    ex = RUNNING[0]
    if ex is None:
        return None
    found = _IDENTS[0]
    if found is None or found.ex is not ex:
        found = _IDENTS[0] = _Idents(ex)
    found.catch_up()
    return found


def on_execution(rt: ControlledRuntime | None) -> None:
    """An execution begins (``rt``) or ends (None)."""
    RUNNING[0] = None if rt is None else rt._ex
    _IDENTS[0] = None


def thread_ident(tid: int) -> int:
    """``threading.get_ident()`` in the execution's thread ``tid``."""
    if tid == 0:
        return MAIN_IDENT
    observed.IDENTS_READ[0] = True  # (which one it is hangs on starts and ends: ``observed``)
    idents = _idents()
    found = None if idents is None else idents.of.get(tid)
    return IDENT_BASE + tid if found is None else found


reprs.OWNER_IDENT[0] = thread_ident  # an RLock's repr names its owner so


def pool() -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """The pool of idents in the running execution: each worker's, and those freed (in order)."""
    idents = _idents()
    return ((), ()) if idents is None else (tuple(sorted(idents.of.items())), tuple(idents.freed))


observed.IDENTS_STATE[0] = pool  # (a state pruned search tells states apart by it)


def given(ex: Any) -> dict[int, int]:
    """Each worker's ``get_ident()`` over ``ex``'s steps so far (the main thread's is
    ``MAIN_IDENT``): for a report, which need not be of the running execution."""
    idents = _Idents(ex)
    idents.catch_up()
    return idents.of


def native_id(tid: int) -> int:
    """``threading.get_native_id()`` in the execution's thread ``tid``."""
    return MAIN_NATIVE_ID if tid == 0 else IDENT_BASE + tid


def thread_of(ident: int) -> int | None:
    """The execution's thread whose ``get_ident()`` is ``ident`` (None: it names no controlled
    thread; a number past the execution's threads is returned as it is, for the caller to refuse)."""
    if ident == MAIN_IDENT:
        return 0
    observed.IDENTS_READ[0] = True
    idents = _idents()
    holder = None if idents is None else idents.holder.get(ident)
    if holder is not None:
        return holder  # (a finished worker's ident given again names its new thread)
    return ident - IDENT_BASE if ident >= IDENT_BASE else None


class _MainThread:
    """``threading.main_thread()`` (and ``current_thread()`` in it): one object, each execution's
    main thread in turn, as a module holding the real one since its import holds it (``MAIN =
    threading.current_thread()`` is rebound to it while patched: eighth review, r115)."""

    name = "MainThread"  # as CPython names it (a program may branch on it)
    daemon = False

    def attach(self, rt: ControlledRuntime) -> None:
        """Be ``rt``'s execution's main thread (what the last one set on it goes)."""
        vars(self).clear()
        self._handle = ThreadHandle(rt._ex, rt._ex.threads[0].state)
        self.ident = MAIN_IDENT  # as ``get_ident`` numbers the execution's threads
        self.native_id = MAIN_NATIVE_ID

    def getName(self) -> str:
        return self.name

    def isDaemon(self) -> bool:
        return False

    def is_alive(self) -> bool:
        return self._handle.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self._handle._ex.running_thread() == 0:
            raise RuntimeError("cannot join current thread")
        self._handle.join(timeout)

    def __repr__(self) -> str:  # CPython's (review 10, row 19)
        return f"<_MainThread({self.name}, started {MAIN_IDENT})>"


MAIN_THREAD = _MainThread()
REAL_MAIN_THREAD = threading.main_thread()
