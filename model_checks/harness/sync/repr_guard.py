"""CPython's repr recursion guard, one per controlled thread on the greenlet back end.

``Py_ReprEnter`` keeps the containers a thread is printing in a list under ``"Py_Repr"`` in its
thread state's dict, one per OS thread: a ``repr`` of a list, dict, deque, set that finds itself
there prints ``[...]``. The greenlet back end's controlled threads share one OS thread, so a
thread printing a shared list while another was parked inside its ``repr`` (an element's
``__repr__`` took a lock) printed ``[...]``, which CPython never does (review 13's A1: p01, p66,
p78). Here each controlled thread (and the driver) keeps its own list: at a switch between
greenlets, the list of a thread that leaves inside a ``repr`` is put aside and the one of the
thread entered given back. Most switches find the list empty and nothing put aside: two look-ups.

Hooked by a greenlet trace function (``greenlet.settrace``) installed at each execution's start
over whatever trace is there (unless it is still under one, ``patch_os_thread``'s, which chains
to what it found) and removed at its end if on top; ``patch_exit_calls`` calls ``on_execution``
as each execution begins and ends. On the threads back end each controlled thread is an OS
thread with CPython's own guard.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Final

import greenlet

if TYPE_CHECKING:
    from model_checks.harness.runtime import ControlledRuntime

KEY: Final = "Py_Repr"

# (a function object of its own, not the one ``ctypes.pythonapi``'s attribute caches: another
# module, ``patch_local``, gives that one its own ``restype``)
_get_dict = ctypes.pythonapi["PyThreadState_GetDict"]
# (a borrowed reference: as ``py_object`` ctypes would take it as new and drop one too many)
_get_dict.restype = ctypes.c_void_p
_get_dict.argtypes = []


def _thread_dict() -> dict[str, Any]:
    """The running OS thread's thread state dict, where CPython keeps ``Py_Repr``."""
    found: dict[str, Any] = ctypes.cast(_get_dict(), ctypes.py_object).value
    return found


class _Guards:
    """One execution's put-aside repr lists, by greenlet."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = _thread_dict()
        self.aside: dict[Any, list[object]] = {}
        self.driver: object = self.state.get(KEY)

    def switched(self, origin: Any, target: Any) -> None:
        state = self.state
        printing = state.get(KEY)
        if printing:  # left inside a repr: its list is put aside, the entered one's given back
            self.aside[origin] = printing
            state[KEY] = self.aside.pop(target, None) or []
        elif self.aside:
            own = self.aside.pop(target, None)
            if own is not None:
                state[KEY] = own

    def end(self) -> None:
        """The execution is over: the driver's list is back (threads left parked keep theirs)."""
        self.aside.clear()
        if self.driver is None:
            self.state.pop(KEY, None)
        else:
            self.state[KEY] = self.driver


_GUARDS: list[_Guards | None] = [None]
_PREVIOUS: list[Any] = [None]


def _trace(event: str, args: Any) -> None:
    # (this runs at every switch: most find no thread inside a repr, and call nothing)
    guards = _GUARDS[0]
    if guards is not None:
        busy = guards.state.get(KEY) or guards.aside
        if busy and (event == "switch" or event == "throw"):
            guards.switched(*args)
    previous = _PREVIOUS[0]
    if previous is not None:
        previous(event, args)


def on_execution(rt: ControlledRuntime | None) -> None:
    """An execution begins (``rt``) or ends (None): its threads' guards are kept apart."""
    guards = _GUARDS[0]
    if guards is not None:
        _GUARDS[0] = None
        guards.end()
    if rt is None:
        if greenlet.gettrace() is _trace:  # (under another trace it passes events on till removed)
            greenlet.settrace(_PREVIOUS[0])
            _PREVIOUS[0] = None
        return
    if getattr(rt._ex.backend, "direct", None) is None:
        return
    if not _installed():
        _PREVIOUS[0] = greenlet.settrace(_trace)
    _GUARDS[0] = _Guards()


def _installed() -> bool:
    """Is ``_trace`` the greenlet trace, or under it (``patch_os_thread``'s chains to what it
    found)? One that removed it, restoring what was there before it, took it out of the chain."""
    trace = greenlet.gettrace()
    while trace is not None:
        if trace is _trace:
            return True
        owner = getattr(trace, "__self__", None)
        trace = getattr(owner, "previous", None)
    return False
