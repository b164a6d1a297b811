"""Programs for review 8's signal rows (r091: a handler that notifies the main thread's condition
wait; r085: ``pthread_sigmask`` and ``sigwait``), each CORRECT or BUGGY in CPython 3.11 on Linux."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import FrameType

from tests.harness.program_kit_main_signal import signal_the_main_thread

Handler = Callable[[int, FrameType | None], object]


@contextmanager
def _handling(sig: int, handler: Handler) -> Iterator[None]:
    """``handler`` is ``sig``'s handler inside the block; the old one is put back after it."""
    old = signal.signal(sig, handler)
    try:
        yield
    finally:
        signal.signal(sig, old)


@contextmanager
def _blocking(sig: int) -> Iterator[None]:
    """The calling thread blocks ``sig`` inside the block (threads it starts there inherit it);
    its old mask is put back after it."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _notifier(c: threading.Condition, st: dict[str, bool]) -> Handler:
    def handler(sig: int, frame: FrameType | None) -> None:
        with c:
            st["flag"] = True
            c.notify_all()

    return handler


_NOTHING_MORE = nullcontext()


def _kill_the_process() -> None:
    os.kill(os.getpid(), signal.SIGUSR1)


def _signal_while_main_waits(
    c: threading.Condition,
    done: Callable[[], bool],
    send: Callable[[], None] = _kill_the_process,
    holding: AbstractContextManager[object] = _NOTHING_MORE,
) -> None:
    """Main starts a worker that calls ``send`` holding ``c`` (so only once main's wait released
    it), waits on ``c`` until ``done()`` (holding ``holding`` too), then joins the worker."""

    def w() -> None:
        with c:
            send()

    t = threading.Thread(target=w)
    with holding, c:
        t.start()
        while not done():
            c.wait()
    t.join()


# ------------------------------------------------------------------ a handler during Condition.wait
def handler_notifies_the_waiting_main() -> None:
    """CORRECT: the worker sends SIGUSR1 once main waits (it holds the condition's lock, which
    main's wait released); the handler, run in main by interrupting its wait, notifies it."""
    c = threading.Condition()
    st = {"flag": False}
    with _handling(signal.SIGUSR1, _notifier(c, st)):
        _signal_while_main_waits(c, lambda: st["flag"])


def handler_may_run_before_mains_wait() -> None:
    """BUGGY (review 8's r091 as written): the signal can come after main's flag check and before
    its wait puts it in the wait set (CPython runs the handler at ``Condition.wait``'s first
    bytecodes): the notify finds no waiter and main waits forever."""
    c = threading.Condition()
    st = {"flag": False}
    with _handling(signal.SIGUSR1, _notifier(c, st)):
        # (the wait stays here: the test reads it in main's stack, in this function)
        t = threading.Thread(target=_kill_the_process)
        with c:
            t.start()
            while not st["flag"]:
                c.wait()
        t.join()


def handler_sets_the_flag_without_a_notify() -> None:
    """BUGGY: the handler runs (main's wait is interrupted) but wakes no one: main's wait goes on."""
    c = threading.Condition()
    st = {"flag": False}
    with _handling(signal.SIGUSR1, lambda s, f: st.update(flag=True)):
        _signal_while_main_waits(c, lambda: st["flag"])


def handler_takes_a_lock_main_holds_while_waiting() -> None:
    """BUGGY: main waits on the condition holding another lock, which the handler takes."""
    c = threading.Condition()
    lk = threading.Lock()
    st = {"flag": False}

    def handler(sig: int, frame: FrameType | None) -> None:
        with lk, c:
            st["flag"] = True
            c.notify_all()

    with _handling(signal.SIGUSR1, handler):
        _signal_while_main_waits(c, lambda: st["flag"], holding=lk)


def a_workers_raise_signal_leaves_mains_wait_asleep() -> None:
    """BUGGY: ``raise_signal`` in the worker delivers SIGUSR1 to the worker; CPython's C handler
    there does not wake main, whose wait goes on: the handler would run once it returns."""
    c = threading.Condition()
    st = {"flag": False}
    with _handling(signal.SIGUSR1, _notifier(c, st)):
        _signal_while_main_waits(c, lambda: st["flag"], send=lambda: signal.raise_signal(signal.SIGUSR1))


# ----------------------------------------------------------------------- masks and sigwait
def sigwait_for_a_signal_pthread_kill_sends() -> None:
    """CORRECT (review 8's r085): SIGUSR2 blocked in every thread, the worker takes it with
    ``sigwait`` from ``pthread_kill`` of it."""
    got: list[int] = []
    with _blocking(signal.SIGUSR2):
        t = threading.Thread(target=lambda: got.append(signal.sigwait({signal.SIGUSR2})))
        t.start()
        assert t.ident is not None
        signal.pthread_kill(t.ident, signal.SIGUSR2)
        t.join()
    assert got == [signal.SIGUSR2], got


def sigwaitinfo_for_a_signal_sent_to_the_process() -> None:
    """CORRECT: main blocks SIGUSR2 before the worker starts (it inherits the mask); the worker's
    ``sigwaitinfo`` takes the ``os.kill`` of the process, which no thread takes otherwise."""
    got: list[int] = []
    with _blocking(signal.SIGUSR2):
        t = threading.Thread(target=lambda: got.append(signal.sigwaitinfo({signal.SIGUSR2}).si_signo))
        t.start()
        os.kill(os.getpid(), signal.SIGUSR2)
        t.join()
    assert got == [signal.SIGUSR2], got


def sigwait_for_a_signal_never_sent() -> None:
    """BUGGY: the worker waits for SIGUSR2, which no thread sends: main's join waits forever."""
    with _blocking(signal.SIGUSR2):
        t = threading.Thread(target=signal.sigwait, args=({signal.SIGUSR2},))
        t.start()
        t.join()


def mask_set_after_the_worker_started() -> None:
    """BUGGY: main blocks SIGUSR2 after starting the worker, which keeps the mask it inherited:
    the signal can reach it before its ``sigwait``, and SIGUSR2's default action ends the process."""
    ready = threading.Event()

    def waiter() -> None:
        ready.set()
        signal.sigwait({signal.SIGUSR2})

    t = threading.Thread(target=waiter)
    t.start()
    with _blocking(signal.SIGUSR2):
        ready.wait()
        assert t.ident is not None
        signal.pthread_kill(t.ident, signal.SIGUSR2)
        t.join()


def a_blocked_signal_waits_for_its_unblocking() -> None:
    """CORRECT: SIGUSR1 sent to main while main blocks it is pending (``sigpending`` says so); its
    handler runs when main unblocks it, not before."""
    got: list[int] = []
    with _handling(signal.SIGUSR1, lambda s, f: got.append(s)), _blocking(signal.SIGUSR1):
        signal_the_main_thread(signal.SIGUSR1)
        assert got == [] and signal.sigpending() == {signal.SIGUSR1}, (got, signal.sigpending())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        assert got == [signal.SIGUSR1], got


def sigtimedwait_times_out() -> None:
    """CORRECT: nothing is sent, so ``sigtimedwait`` returns None once its timeout passed."""
    got: list[object] = []
    with _blocking(signal.SIGUSR2):
        t = threading.Thread(target=lambda: got.append(signal.sigtimedwait({signal.SIGUSR2}, 0.5)))
        t.start()
        t.join()
    assert got == [None], got


def a_sigwaiter_and_an_unblocked_worker_could_each_take_it() -> None:
    """Refused by name: SIGUSR2 sent to the process while one worker waits for it in ``sigwait``
    and another does not block it; which takes it is the kernel's choice."""
    with _handling(signal.SIGUSR2, lambda s, f: None), _blocking(signal.SIGUSR2):
        ready = threading.Event()
        go = threading.Event()

        def unblocked() -> None:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR2})
            ready.set()
            go.wait()

        b = threading.Thread(target=unblocked)
        b.start()
        ready.wait()
        a = threading.Thread(target=signal.sigtimedwait, args=({signal.SIGUSR2}, 1.0))
        a.start()
        os.kill(os.getpid(), signal.SIGUSR2)
        go.set()
        a.join()
        b.join()


def notify_before_the_handler_runs() -> None:
    """CORRECT: the worker sends SIGUSR1 and then notifies, both while main waits; main's wait
    returns (holding the lock again, once) and the handler runs in main, before or after."""
    c = threading.Condition()
    got: list[str] = []
    ran: list[int] = []

    def send_then_notify() -> None:
        os.kill(os.getpid(), signal.SIGUSR1)
        got.append("notify")
        c.notify()

    with _handling(signal.SIGUSR1, lambda s, f: ran.append(s)):
        _signal_while_main_waits(c, lambda: "notify" in got, send=send_then_notify)
    assert got == ["notify"] and ran == [signal.SIGUSR1], (got, ran)


class Wake(Exception):
    pass


def handler_raises_in_mains_condition_wait() -> None:
    """CORRECT: the handler raises in main's ``Condition.wait``, which reacquires the lock before
    the exception leaves it (the ``with`` then releases it) and leaves the wait set."""

    def handler(sig: int, frame: FrameType | None) -> None:
        raise Wake

    c = threading.Condition(threading.Lock())
    woke = False
    with _handling(signal.SIGUSR1, handler):

        def w() -> None:
            with c:
                os.kill(os.getpid(), signal.SIGUSR1)

        t = threading.Thread(target=w)
        with c:
            t.start()
            try:
                c.wait()
            except Wake:
                woke = True
            assert not c._waiters, "left in the wait set"  # type: ignore[attr-defined]
        t.join()
    assert woke


def handlers_frame_is_the_senders() -> None:
    """CORRECT: a signal main raises runs its handler at once, its frame main's (this function)."""
    names: list[str] = []

    def handler(sig: int, frame: FrameType | None) -> None:
        names.append(frame.f_code.co_name if frame is not None else "")

    with _handling(signal.SIGUSR1, handler):
        signal.raise_signal(signal.SIGUSR1)
    assert names == ["handlers_frame_is_the_senders"], names


def pause_in_a_worker() -> None:
    """Refused by name: ``signal.pause`` waits for a C handler to run in its OS thread."""
    t = threading.Thread(target=signal.pause)
    t.start()
    t.join()


def wakeup_fd_set_by_main() -> None:
    """CORRECT: CPython's call (refused by name until session 41, when a modelled signal came to
    write its byte: ``test_review9_process``); the fd, left set, is put back after each execution."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        signal.set_wakeup_fd(w)
    finally:
        os.close(r)
        os.close(w)


def worker_unblocks_while_main_holds_the_lock() -> None:
    """BUGGY: SIGUSR1 is pending for the process (every thread blocks it) until the worker
    unblocks it; its handler, run in main, takes a lock main can be holding then: a self-deadlock."""
    lk = threading.Lock()

    def handler(sig: int, frame: FrameType | None) -> None:
        with lk:
            pass

    with _handling(signal.SIGUSR1, handler), _blocking(signal.SIGUSR1):
        os.kill(os.getpid(), signal.SIGUSR1)
        t = threading.Thread(target=signal.pthread_sigmask, args=(signal.SIG_UNBLOCK, {signal.SIGUSR1}))
        t.start()
        with lk:
            _step()  # (CPython runs a pending handler at a function's first bytecode)
        t.join()


def _step() -> None:
    pass
