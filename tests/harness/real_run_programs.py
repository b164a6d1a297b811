"""Plain ``threading`` programs where patch mode must do what a real run does (session 37's outside
review found each answered "exhaustive" or no verdict at all): each execution starts with the
functions' default arguments and closures as the module made them; an object is freed, and its
``__del__`` run, when its last reference goes; a ``KeyboardInterrupt`` the program raises in a
thread is that thread's exception; an endless loop over local variables ends the check."""

from __future__ import annotations

import threading
from collections.abc import Callable

a = threading.Lock()
b = threading.Lock()


def first_call(_done: list[bool] = [False]) -> bool:  # noqa: B006 (the default is the state)
    cold = not _done[0]
    _done[0] = True
    return cold


def _make_once() -> Callable[[], bool]:
    done = False

    def once() -> bool:
        nonlocal done
        cold = not done
        done = True
        return cold

    return once


once = _make_once()


def _ordered(first: Callable[[], bool]) -> None:
    """The first call of a real run takes ``a`` then ``b``; another thread takes ``b`` then ``a``."""

    def t1() -> None:
        x, y = (a, b) if first() else (b, a)
        with x, y:
            pass

    def t2() -> None:
        with b, a:
            pass

    p, q = threading.Thread(target=t1), threading.Thread(target=t2)
    p.start()
    q.start()
    p.join()
    q.join()


def default_argument_deadlock() -> None:
    """A deadlock on the path the mutable default takes in a real run (its first call)."""
    _ordered(first_call)


def closure_deadlock() -> None:
    """The same, with the state in a closure's variable made at import."""
    _ordered(once)


lock = threading.Lock()
log: list[str] = []


class Resource:
    def __init__(self) -> None:
        self.open = True

    def __del__(self) -> None:
        with lock:  # the finalizer takes the lock its last owner's thread holds: a self-deadlock
            log.append("closed")


def finalizer_deadlock() -> None:
    def work() -> None:
        with lock:
            r = Resource()
            del r

    t = threading.Thread(target=work)
    t.start()
    t.join()


def keyboard_interrupt_in_a_thread() -> None:
    def work() -> None:
        raise KeyboardInterrupt

    t = threading.Thread(target=work)
    t.start()
    t.join()


def endless_local_loop() -> None:
    def spin() -> None:
        n = 0
        while True:
            n += 1

    threading.Thread(target=spin, daemon=False).start()
