"""A signal the explored code sends to its own process: its handler runs in the main thread.

CPython runs a Python signal handler in the main thread, between two of its bytecodes (a wait of
the main thread is interrupted for it, then goes on), whichever thread the signal was sent from
or to. On the greenlet back end every controlled thread runs on the process's main OS thread, so
the handler ran in the thread that sent the signal (``os.kill(os.getpid(), sig)`` in a worker:
``threading.current_thread()`` in the handler was the worker, seventh review, session 40), and
``signal.pthread_kill`` of a controlled thread's ident (the explorer's, no OS thread's) could not
be sent at all (it was refused by name since session 39).

Now, in a controlled thread, ``os.kill`` of the process itself, ``signal.raise_signal`` and
``signal.pthread_kill`` of a controlled thread are an operation (dependent with every step of
the main thread so far and its next one: where the handler runs depends on it), and the signal
is not sent: ``signal_masks`` decides which thread it goes to (or that it stays pending, or that
a ``sigwait`` takes it: ``patch_sigwait``). Delivered, its handler, as ``signal.getsignal`` gives
it when it runs, runs in the main controlled thread (its steps are the main thread's: a lock it
takes is taken by the main thread) when that thread next runs, before the rest of its code, once
per signal pending, as CPython's do; an exception it raises is raised in the main thread where it
was. A wait of the main thread is interrupted for it (the handler runs, then the wait goes on)
only if the signal came to the main thread itself, as Linux's ``EINTR`` does: a condition's wait
too (CPython's waiter lock; a handler's notify ends it, a handler's exception leaves the wait set
with the lock reacquired), not ``sigwait``. Sent from the main thread, it runs at once, after the
call. A signal ignored (``SIG_IGN``, or ignored by default) does nothing; one whose default
action ends the process is the failure, ``ProcessExit``, of the thread that sent (or unblocked)
it. Not done: a signal sent after the main thread's function returned is dropped (CPython runs
it during the interpreter's exit); on the threads back end (whose main controlled thread is not
the process's main thread) a handler's run is refused by name; ``signal.alarm``/``setitimer`` are
real timers, not modelled.

``_thread.interrupt_main(signum)`` in a controlled thread is CPython's simulated arrival of the
signal for the main thread (``PyErr_SetInterruptEx``): the same operation as a send, past the
masks (it trips the signal's flag, no kernel signal), waking no wait (no ``EINTR``: the handler
runs once the main thread's wait returns), doing nothing for a signal whose handler is not
Python's (``SIG_DFL``, ``SIG_IGN``); SIGINT's default handler raises ``KeyboardInterrupt`` in the
main thread, the program's own, never taken for the user's Ctrl-C (``ctrl_c``).

``signal.getsignal(SIGINT)`` in a controlled thread gives Python's default handler where
lanecheck's Ctrl-C watcher stands for it (review 13's A8: a library that installs its own only
over the default took the other branch).
"""

from __future__ import annotations

import _thread
import operator
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import greenlet

from model_checks.harness import ctrl_c, signal_wakeup
from model_checks.harness.own_code import own
from model_checks.harness.patch_either import replacing
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.per_execution import per_execution
from model_checks.harness.rt.backends import ABORT, Abort
from model_checks.harness.rt.clock import now
from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.objects import GLOBAL, AtomicState, ConditionState, Op
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.signal_masks import SignalMasks, name_of
from model_checks.harness.thread_idents import thread_of


class ProcessExit(Exception):
    """The explored code ended the process (``os._exit``, a signal whose default action ends it):
    a real run ends there, every thread with it."""


# signals whose default action is to do nothing (signal(7)); every other one's ends the process
_IGNORED_BY_DEFAULT = frozenset(
    getattr(signal, name) for name in ("SIGCHLD", "SIGURG", "SIGWINCH", "SIGCONT") if hasattr(signal, name)
)


class _Pending:
    """The signals of one execution waiting for its main controlled thread (in CPython's order:
    by number), the object their sending and handling are operations on, the main thread's
    operation a signal interrupted (announced again once the handlers return) and the masks
    that say which thread a signal goes to (``signal_masks``)."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        made = self.ex.new_object(
            lambda oid: AtomicState(oid, "the process's signals", None, by_identity=True)
        )
        assert isinstance(made, AtomicState)
        self.state = made
        self.signals: list[int] = []
        self.interrupted: Op | None = None
        # the lanecheck thread's own mask is the main controlled thread's first one
        initial = (
            frozenset(int(s) for s in _real_sigmask(signal.SIG_BLOCK, [])) if _real_sigmask else frozenset()
        )
        self.masks = SignalMasks(self.ex, made, initial)

    def delivery(self, interrupted: Op) -> Op:
        """The main thread's operation while a signal interrupts ``interrupted``: always enabled.
        It carries a parked condition wait's saved lock count and source, which a notify that
        comes before it reads (``ConditionState._reacquire``)."""
        op = Op("store", self.state, ("handlers",))
        op.result, op.source = interrupted.result, interrupted.source
        return op


_pending = per_execution(_Pending)


def _programs_handler(signum: int) -> Callable[[int, FrameType | None], Any] | int | None:
    """``signum``'s handler as the program set it: lanecheck's Ctrl-C watcher (``ctrl_c``) stands
    for Python's default SIGINT handler it replaced, whose ``KeyboardInterrupt`` is the program's."""
    handler = _real_getsignal(signum)
    return signal.default_int_handler if handler is ctrl_c._pressed else handler


def _getsignal(signalnum: int) -> Any:
    """``signal.getsignal``: the program's code in a controlled thread sees ``_programs_handler``;
    the harness's (which puts the watcher back) the real one."""
    if _controlled() is None or own(sys._getframe(1).f_code.co_filename):
        return _real_getsignal(signalnum)
    return _programs_handler(signalnum)


def _ignored(signum: int) -> bool:
    """Does CPython do nothing for ``signum`` (``SIG_IGN``, a signal ignored by default)?"""
    handler = _programs_handler(signum)
    if callable(handler):
        return False
    return handler == signal.SIG_IGN or handler is None or signum in _IGNORED_BY_DEFAULT


def _handler(signum: int) -> Callable[[int, FrameType | None], object] | None:
    """What CPython would run for ``signum`` (None: nothing); a default action that ends the
    process raises ``ProcessExit``."""
    handler = _programs_handler(signum)
    if callable(handler):
        return handler
    if _ignored(signum):
        return None
    raise ProcessExit(f"{name_of(signum)}'s default action ends the process here, every thread with it")


def _sent_for_real(signum: int) -> bool:
    """A SIGINT while lanecheck tells the user's Ctrl-C from the program's ``KeyboardInterrupt``
    (``ctrl_c``) is sent for real: it is the Ctrl-C, which stops the check (a test cannot press
    one otherwise)."""
    return signum == signal.SIGINT and _real_getsignal(signal.SIGINT) is ctrl_c._pressed


def _send(rt: ControlledRuntime, signum: int, call: str, target: int | None) -> None:
    """The explored code sends ``signum`` to thread ``target`` of its own process (None: to the
    process)."""
    pending = _announce(rt, call)
    recipient = pending.masks.send(signum, target, _ignored(signum), call)
    if recipient is not None:
        deliver(rt, signum, recipient, call)


def _announce(rt: ControlledRuntime, call: str) -> _Pending:
    """The operation of a signal's sending (``call``) on the process's signals."""
    ex = rt._ex
    pending = _pending(rt)
    # dependent with every step of the main thread so far and its next one (the handler runs at
    # whichever the signal comes before: with the next one only, the explorer never moved the
    # send back to where main held a lock its handler takes, review 8's r030) and ordered with
    # the handling (``delivery``), not with everything: a yield point would order the sender's
    # later accesses before the handler's, and hide their race
    objs = pending.state.own | _main_objects(ex)
    ex.perform(Op("store", pending.state, (call,), objs=objs))
    return pending


def deliver(rt: ControlledRuntime, signum: int, recipient: int, call: str) -> None:
    """``signum`` is delivered to thread ``recipient``, which does not block it: CPython's C
    handler notes it there, and the main thread runs the Python handler at its next bytecode. Its
    wait is interrupted for it only if the signal came to the main thread itself (a worker's does
    not wake it: its wait goes on, and the handler runs once the wait returns)."""
    ex = rt._ex
    pending = _pending(rt)
    main = ex.threads[0]
    op = main.pending
    if _handler(signum) is not None:
        signal_wakeup.trip(signum)  # (CPython's C handler writes it as the signal arrives)
    if _handler(signum) is None or main.finished or op is None or op.kind == "exit":
        return  # (after the main thread's function returned CPython runs it at exit: not modelled)
    direct = getattr(ex.backend, "direct", None)
    if direct is None:
        raise UsageError(
            f"{call} in the explored code on the threads back end: CPython runs the handler in the "
            "process's main thread, which is not a controlled thread there (use the greenlet back end)"
        )
    if ex.running_thread() == 0:
        _run_handlers([signum], _program_frame(sys._getframe(1)))
        return
    if signum not in pending.signals:
        pending.signals.append(signum)
        pending.signals.sort()
    # a wait is interrupted (CPython's lock waits, a condition's waiter lock, sleep, select...),
    # but not ``sigwait`` (glibc's goes on after EINTR, and so CPython's); a step that can run
    # anyway runs after the handlers
    interrupt = (recipient == 0 and 0 not in pending.masks.plain_sigwait) or can_run(ex, op, 0)
    if pending.interrupted is None and not _is_delivery(pending, op) and interrupt:
        pending.interrupted = op
        main.pending = pending.delivery(op)
    if not isinstance(direct[0], _StandsForMain):
        direct[0] = _Interrupting(ex, direct, direct[0], pending)


def _program_frame(frame: FrameType | None) -> FrameType | None:
    """The frame of the program's call that sent (or unblocked) the signal: the handler's
    ``frame`` argument."""
    while frame is not None and own(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _is_delivery(pending: _Pending, op: Op) -> bool:
    return op.obj is pending.state and op.args == ("handlers",)


def _main_objects(ex: Any) -> frozenset[int]:
    """The objects of the main thread's steps in this execution, and of its next operation."""
    found: set[int] = set()
    for step in ex.steps:
        if step.tid == 0 and step.op.objs is not GLOBAL:
            found |= step.op.objs
    op = ex.threads[0].pending
    if op is not None and op.objs is not GLOBAL:
        found |= op.objs
    return frozenset(found)


def _run_handlers(signals: list[int], frame: FrameType | None) -> None:
    while signals:
        signum = signals.pop(0)
        # (the handler as it is now: one reset to SIG_DFL or SIG_IGN since is skipped, as CPython's)
        handler = _programs_handler(signum)
        if callable(handler):
            handler(signum, frame)


def _woken(op: Op) -> bool:
    """Was the main thread's interrupted condition wait notified before its handlers ran?"""
    return op.kind == "wake" and isinstance(op.obj, ConditionState) and 0 not in op.obj.waiters


def _resumed(ex: Any, op: Op) -> Op:
    """The interrupted operation, announced again once the handlers returned: a condition wait a
    handler notified reacquires the lock (CPython's waiter lock was released); a timed wait waits
    for what is left of its timeout (CPython's recomputes it)."""
    cond = op.obj
    if op.kind == "wake" and isinstance(cond, ConditionState) and 0 not in cond.waiters:
        back = Op("reacquire", cond, (op.result, True))
        back.source = op.source
        return back
    if op.timeout is not None:
        op.timeout = max(op.deadline - now(ex, 0), 0.0)
    return op


def _unwind(ex: Any, op: Op) -> None:
    """A handler raised while the main thread waited on a condition: as CPython's
    ``Condition.wait``, it leaves the wait set and reacquires the lock before the error goes on."""
    cond = op.obj
    assert isinstance(cond, ConditionState)
    if op.kind != "wake":
        return  # (in the lock's reacquiring: CPython's ``_acquire_restore`` raised, the lock not taken)
    if 0 in cond.waiters:
        cond.waiters.remove(0)
    back = Op("reacquire", cond, (op.result, False))
    back.source = op.source
    ex.perform(back)


class _StandsForMain:
    """What stands for the main thread's greenlet in the back end's table (``direct``) while
    signals wait for it: the execution, the table, the real greenlet and the signals."""

    idle = False  # (never pooled by the back end: the real greenlet is)
    body = None

    def __init__(self, ex: Any, direct: dict[int, Any], real: Any, pending: _Pending) -> None:
        self.ex = ex
        self.direct = direct
        self.real = real
        self.pending = pending


class _Interrupting(_StandsForMain):
    """Stands for the main thread's greenlet while a signal waits for it: the next switch to the
    main thread runs the handlers first, on a greenlet of their own that stands for the main
    thread until they return."""

    @property
    def gr_frame(self) -> FrameType | None:
        frame: FrameType | None = self.real.gr_frame
        return frame

    def switch(self, value: object) -> object:
        self.direct[0] = self.real
        if value is ABORT or not (self.pending.signals or self.pending.interrupted):
            return self.real.switch(value)
        handlers = _Handlers(self.ex, self.direct, self.real, self.pending)
        return handlers.switch(value)


_GREENLET_FRAME: Any = greenlet.greenlet.gr_frame


class _Handlers(_StandsForMain, greenlet.greenlet):  # type: ignore[misc]
    """Runs the pending handlers as the main controlled thread, then hands the main thread the
    value its operation returned (or the exception a handler raised)."""

    def __init__(self, ex: Any, direct: dict[int, Any], real: Any, pending: _Pending) -> None:
        greenlet.greenlet.__init__(self, self._handle, real.parent)
        _StandsForMain.__init__(self, ex, direct, real, pending)

    @property
    def gr_frame(self) -> FrameType | None:
        """While a handler runs, its frames; once they returned (the interrupted wait announced
        again), the main thread's, which a report's stack and the state's fingerprint read."""
        frame: FrameType | None = _GREENLET_FRAME.__get__(self)
        found = frame
        while found is not None:
            if not own(found.f_code.co_filename):
                return frame
            found = found.f_back
        real: FrameType | None = self.real.gr_frame
        return real

    def _handle(self, value: object) -> None:
        ex = self.ex
        ids = ex.backend.ids
        ids[self] = 0
        self.direct[0] = self
        ex.current = 0
        error: BaseException | None = None
        interrupted: Op | None = None
        try:
            if ex.race is not None:
                ex.race.enter_thread()  # (tracing, as at a controlled thread's start)
            pending = self.pending
            while True:
                interrupted = pending.interrupted
                if interrupted is not None and _woken(interrupted):
                    # a notify came before the handlers: the wait reacquired its lock and
                    # returned (``value``); they run after it, at the main thread's next bytecode
                    interrupted = None
                _run_handlers(pending.signals, self.real.gr_frame)
                pending.interrupted = None
                if interrupted is not None:
                    resumed, interrupted = _resumed(ex, interrupted), None
                    value = ex.perform(resumed)  # (as CPython's, after EINTR)
                if not pending.signals and pending.interrupted is None:
                    break  # (else a signal sent meanwhile interrupted it again)
        except Abort:
            value = ABORT  # the execution is torn down: the main thread unwinds too
        except BaseException as exc:  # raised in the main thread where the handler ran
            error = exc
            if interrupted is not None and isinstance(interrupted.obj, ConditionState):
                try:
                    _unwind(ex, interrupted)
                except Abort:
                    error, value = None, ABORT
        finally:
            self.pending.signals.clear()
            ids.pop(self, None)
            self.direct[0] = self.real
        if error is not None:
            self.real.throw(error)
        else:
            self.real.switch(value)


def _kill(pid: int, signum: int) -> None:
    rt = _controlled()
    if rt is None or pid != os.getpid() or _sent_for_real(signum):
        _real_kill(pid, signum)
        return
    _send(rt, signum, f"os.kill(os.getpid(), {signum})", None)


def _raise_signal(signum: int) -> None:
    rt = _controlled()
    if rt is None or _sent_for_real(signum):
        _real_raise(signum)
        return
    _send(rt, signum, f"signal.raise_signal({signum})", rt._ex.running_thread())


def _pthread_kill(thread_id: int, signalnum: int) -> None:
    rt = _controlled()
    tid = thread_of(thread_id)
    if rt is not None and tid is not None and _sent_for_real(signalnum):
        _real_kill(os.getpid(), signalnum)  # (the ident is no OS thread's)
        return
    if rt is None or tid is None:
        assert _real_pthread_kill is not None
        _real_pthread_kill(thread_id, signalnum)
        return
    threads = rt._ex.threads
    if tid >= len(threads) or not threads[tid].born or threads[tid].finished:
        raise ProcessLookupError(3, "No such process")
    if signalnum == 0:
        return  # (a check that the thread exists)
    _send(rt, signalnum, f"signal.pthread_kill({thread_id}, {signalnum})", tid)


def _interrupt_main(signum: int = signal.SIGINT) -> None:
    rt = _controlled()
    if rt is None:
        _real_interrupt_main(signum)  # type: ignore[arg-type]
        return
    signum = operator.index(signum)
    if not 1 <= signum < signal.NSIG:
        raise ValueError("signal number out of range")
    call = f"_thread.interrupt_main({signum})"
    _announce(rt, call)
    if callable(_programs_handler(signum)):  # (else CPython does nothing)
        sender = rt._ex.running_thread()
        assert sender is not None
        # the flag only, no kernel signal: a wait of the main thread is not interrupted (a
        # sender that is not the main thread is no recipient of ``deliver``'s EINTR)
        deliver(rt, signum, sender, call)


_real_interrupt_main = _thread.interrupt_main
_real_getsignal = signal.getsignal
_real_kill = os.kill
_real_raise = signal.raise_signal
_real_pthread_kill = getattr(signal, "pthread_kill", None)
_real_sigmask = getattr(signal, "pthread_sigmask", None)

REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    *replacing(os, {"kill": _kill}),
    *replacing(
        signal, {"raise_signal": _raise_signal, "pthread_kill": _pthread_kill, "getsignal": _getsignal}
    ),
    *replacing(_thread, {"interrupt_main": _interrupt_main}),
]
