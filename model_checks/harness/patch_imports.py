"""A module imported for the first time by the program's code in a controlled thread, in patch
mode: its module lock is a controlled lock.

CPython's import machinery (``importlib._bootstrap``) makes a lock per module being imported,
from ``_thread.allocate_lock``, and names its owner by ``_thread.get_ident()``. The controlled
threads share one OS thread on the greenlet back end, so with real locks a second thread
importing the same module while the first was still running its body (paused at a scheduling
point there) re-entered the lock as its owner and saw the module half made: an ``AttributeError``
no real run raises (session 37's second review). While the import was asked for by the
program's code, the lock is a controlled lock and the owner is the controlled thread, so the
second thread waits for the first as it does in CPython, and an import-order deadlock between two
threads is CPython's ``_DeadlockError``. An import the harness or a library makes keeps real
locks: it is not the program's synchronisation, and the harness's own lazy imports must not
become scheduling points.
"""

from __future__ import annotations

import _frozen_importlib
import _thread
import sys
import types

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.sync import primitives
from model_checks.harness.thread_idents import thread_ident

IMPORTERS = frozenset({"importlib._bootstrap", "_frozen_importlib"})
_real_get_ident = _thread.get_ident


def by_the_importer(caller: types.FrameType) -> bool:
    """Is ``caller`` the import machinery's code?"""
    return caller.f_globals.get("__name__") in IMPORTERS


def asked_by_the_program(caller: types.FrameType) -> bool:
    """Was the import that ``caller`` (the import machinery's) runs asked for by the program's
    code: the first frame below the machinery's is code of the program's own modules?"""
    from model_checks.harness import patch_modules  # (it imports the race detector's sites)

    frame: types.FrameType | None = caller
    while frame is not None and by_the_importer(frame):
        frame = frame.f_back
    if frame is None:
        return False
    module = sys.modules.get(frame.f_globals.get("__name__", ""))
    return module is not None and patch_modules.program_file(module)


def get_ident() -> int:
    """``_thread.get_ident()``: the controlled thread's identity inside one (as
    ``threading.get_ident``), but the OS thread's for the import machinery working on a module
    lock that is real (an import the program did not ask for)."""
    rt = _controlled()
    if rt is None:
        return _real_get_ident()
    caller = sys._getframe(1)
    if by_the_importer(caller):
        lock = getattr(caller.f_locals.get("self"), "lock", None)
        if not isinstance(lock, primitives.Lock):
            return _real_get_ident()
    return thread_ident(rt._ex.running_thread() or 0)


def forget_locks() -> None:
    """No controlled module lock is found again: called as an execution begins and as patching
    ends (a lock whose last reference is in a cycle outlives its import until the collector runs,
    and the next import of the module would take an ended execution's controlled lock)."""
    locks: dict[str, object] = _frozen_importlib._module_locks  # type: ignore[attr-defined]
    for name, ref in list(locks.items()):
        lock = ref() if callable(ref) else None
        if isinstance(getattr(lock, "lock", None), primitives.Lock):
            locks.pop(name, None)
