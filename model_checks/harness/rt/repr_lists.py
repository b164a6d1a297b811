"""CPython's repr recursion guard, one per controlled thread on the greenlet back end: the switch.

``Py_ReprEnter`` keeps the containers a thread is printing in a list under ``"Py_Repr"`` in its
thread state's dict, one per OS thread; ``repr_guard.py`` says why each controlled thread needs a
list of its own, and gives each execution a ``ReprLists``. A controlled thread leaves and goes on
only inside ``Execution.perform``, through ``hand_over`` (a switch to the chosen thread) or the
back end's ``suspend`` (to the driver): the thread leaving puts its list aside if it is inside a
``repr``, and takes it back when it goes on, even by an exception thrown into it (the execution
torn down, a parked greenlet collected, a signal handler's error). Each side knows its own thread,
so neither needs the other's, and a switch made elsewhere (a finished body's return to the driver;
a signal handler's greenlet, which runs as the main thread, handing it back) needs nothing. The
driver's own list is put aside for the whole execution: it never switches away inside a ``repr``.

Most switches find the running list empty and nothing put aside: two tests of a length, no call,
no dictionary look-up. CPython never replaces the list it finds under the key, so the one held
here (``shared``) is the one the running code fills.
"""

from __future__ import annotations

from typing import Any, Final

KEY: Final = "Py_Repr"


class ReprLists:
    """One execution's repr lists: the running one, and those put aside by thread id."""

    def __init__(self, state: dict[str, object]) -> None:
        self.state = state  # the OS thread's thread state dict
        self.driver = state.get(KEY)  # (back when the execution ends)
        self.shared: list[object] = []
        state[KEY] = self.shared
        self.aside: dict[int, list[object]] = {}

    def leave(self, me: int) -> None:
        """Thread ``me`` switches away inside a ``repr``: its list is put aside, an empty one runs."""
        shared = self.shared
        own = self.aside.get(me)
        if own is None:
            self.aside[me] = shared
            self.shared = self.state[KEY] = []
        else:  # a signal handler's greenlet (the main thread) inside a repr, the main thread too
            own.extend(shared)
            shared.clear()

    def enter(self, me: int) -> None:
        """Thread ``me`` goes on: the list it put aside runs again."""
        own = self.aside.pop(me, None)
        if own is not None:
            self.shared = self.state[KEY] = own

    def detach(self) -> None:
        """The execution is over: the driver's list is back. A thread left parked (one that
        swallowed ``Abort``) keeps its list aside, where no later switch finds it."""
        if self.driver is None:
            self.state.pop(KEY, None)
        else:
            self.state[KEY] = self.driver
        self.state = {}
        self.shared = []
        self.aside = {}


def hand_over(reprs: ReprLists, me: int, to: Any, value: object) -> object:
    """``to.switch(value)`` from thread ``me``, its repr list kept apart."""
    if reprs.shared:
        reprs.leave(me)
    try:
        return to.switch(value)
    finally:
        if reprs.aside:
            reprs.enter(me)


DETACHED: Final = ReprLists({})  # (no execution's: never inside a repr, nothing put aside)
