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

And the order an import gives (review 10's t47): the end of a module's body, run by its import,
happens before any later import of it finds it made (CPython's second import waits on the module
lock, or finds the module in ``sys.modules`` no longer initialising: the body is over). The first
edge is the controlled module lock's; the second was none, so two threads that lazily import a
module and read its globals were a data race between its body and the second thread's read.
While the race detector runs, the thread whose ``_load_unlocked`` ran a module's body publishes
its clock for the module's name as the body ends (a release, before the module lock's: a thread
can find the module made before the lock is given back), and an import that finds the module
(the ``import`` statement through ``__import__``, ``from pkg import mod``,
``importlib.import_module``) joins it (an acquire). No scheduling point is added: the import that
waits is the module lock's, already one. A thread that reaches the module's globals without
importing it (through an object handed over) is not ordered.
"""

from __future__ import annotations

import _frozen_importlib
import _thread
import builtins
import sys
import types
import weakref
from typing import TYPE_CHECKING, Any, cast

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_frames import join
from model_checks.harness.sync import primitives
from model_checks.harness.thread_idents import thread_ident

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

# (this module's wrappers of the machinery are part of it: an import they pass on is the caller's)
IMPORTERS = frozenset({"importlib._bootstrap", "_frozen_importlib", __name__})
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


_real_find_and_load = _frozen_importlib._find_and_load  # type: ignore[attr-defined]
_real_load_unlocked = _frozen_importlib._load_unlocked  # type: ignore[attr-defined]
_real_import = builtins.__import__
# each execution's detector -> module name -> the clock its body's end published
_MADE: weakref.WeakKeyDictionary[Any, dict[str, list[int]]] = weakref.WeakKeyDictionary()


def _racing() -> tuple[RaceDetector, int] | None:
    """The race detector and the running controlled thread, where both are."""
    rt = _controlled()
    if rt is None:
        return None
    detector = rt._ex.race
    tid = rt._ex.running_thread()
    if detector is None or tid is None or not hasattr(detector, "clocks"):
        return None
    return cast("RaceDetector", detector), tid


def load_unlocked(spec: Any) -> Any:
    """``importlib._bootstrap._load_unlocked``: the module's body run, and the release of its end,
    before the module lock is (a thread that finds the module made meanwhile is ordered after it)."""
    module = _real_load_unlocked(spec)
    at = _racing()
    if at is not None:
        detector, tid = at
        vc = detector._clock(tid)
        _MADE.setdefault(detector, {})[spec.name] = list(vc)
        vc[tid] += 1  # (what this thread does next is not part of the module's making)
    return module


def find_and_load(name: str, import_: Any) -> Any:
    """``importlib._bootstrap._find_and_load`` (``importlib.import_module``'s): the acquire of
    the module's making, where another thread made it."""
    module = _real_find_and_load(name, import_)
    at = _racing()
    made = _MADE.get(at[0]) if at is not None else None
    if at is not None and made:
        _acquire(at[0], at[1], made, (name,))
    return module


def import_(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    """``builtins.__import__``: CPython's, and the acquire of each module the statement finds
    made (``import a.b``: ``a`` and ``a.b``; ``from a import b``: ``a`` and ``a.b``)."""
    module = _real_import(name, globals, locals, fromlist, level)
    if _controlled() is None:
        return module
    at = _racing()
    made = _MADE.get(at[0]) if at is not None else None
    if at is None or not made:
        return module
    if fromlist:
        base = getattr(module, "__name__", "")
        names = [base, *(f"{base}.{x}" for x in fromlist if isinstance(x, str))]
    elif level == 0:
        parts = name.split(".")
        names = [".".join(parts[: i + 1]) for i in range(len(parts))]
    else:
        return module
    _acquire(at[0], at[1], made, names)
    return module


def _acquire(detector: RaceDetector, tid: int, made: dict[str, list[int]], names: Any) -> None:
    for name in names:
        clock = made.get(name)
        if clock is not None:
            join(detector._clock(tid), clock)


# installed while patched (``patch_types.REPLACEMENTS``)
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (_frozen_importlib, "_find_and_load", _real_find_and_load, find_and_load),
    (_frozen_importlib, "_load_unlocked", _real_load_unlocked, load_unlocked),
    (builtins, "__import__", _real_import, import_),
]
