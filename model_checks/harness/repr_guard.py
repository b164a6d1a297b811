"""CPython's repr recursion guard, one per controlled thread on the greenlet back end.

``Py_ReprEnter`` keeps the containers a thread is printing in a list under ``"Py_Repr"`` in its
thread state's dict, one per OS thread: a ``repr`` of a list, dict, deque, set that finds itself
there prints ``[...]``. The greenlet back end's controlled threads share one OS thread, so a
thread printing a shared list while another was parked inside its ``repr`` (an element's
``__repr__`` took a lock) printed ``[...]``, which CPython never does (review 13's A1: p01, p66,
p78). Each controlled thread keeps its own list: the back end's switches put aside the list of a
thread that leaves inside a ``repr`` and give it back when the thread goes on (``rt/repr_lists.py``,
compiled with the scheduler: most switches cost two tests of a length). ``patch_exit_calls`` calls
``on_execution`` as each execution begins and ends: the thread state's dict is found once per
execution (its one OS thread), and the driver's own list put back at the end. On the threads back
end each controlled thread is an OS thread with CPython's own guard.

(Until session 45 a greenlet trace function did this at every switch, with the dict read through
ctypes each time: about 1.3% of patch mode's time in ``bench.harness._ours_plain(2)``.)
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.repr_lists import KEY as KEY
from model_checks.harness.rt.repr_lists import ReprLists

if TYPE_CHECKING:
    from model_checks.harness.runtime import ControlledRuntime

# (a function object of its own, not the one ``ctypes.pythonapi``'s attribute caches: another
# module, ``patch_local``, gives that one its own ``restype``)
_get_dict = ctypes.pythonapi["PyThreadState_GetDict"]
# (a borrowed reference: as ``py_object`` ctypes would take it as new and drop one too many)
_get_dict.restype = ctypes.c_void_p
_get_dict.argtypes = []

_ATTACHED: list[ReprLists] = []  # the running execution's


def _thread_dict_through_ctypes() -> dict[str, Any]:
    """The running OS thread's thread state dict, where CPython keeps ``Py_Repr``."""
    found: dict[str, Any] = ctypes.cast(_get_dict(), ctypes.py_object).value
    return found


# (in C where built: the ctypes call and cast cost about 11,000 instructions an execution, session 46)
_thread_dict: Callable[[], dict[str, Any]] = getattr(NATIVE, "thread_state_dict", _thread_dict_through_ctypes)


def on_execution(rt: ControlledRuntime | None) -> None:
    """An execution begins (``rt``) or ends (None): its threads' lists are kept apart."""
    if _ATTACHED:
        _ATTACHED.pop().detach()
    if rt is None:
        return
    ex = rt._ex
    backend: Any = ex.backend
    if getattr(backend, "direct", None) is None:
        return
    reprs = ReprLists(_thread_dict())
    ex.reprs = backend.reprs = reprs
    _ATTACHED.append(reprs)
