"""numpy's global generator (``np.random.seed``, ``rand``, ``randint``, ...) in patch mode: shared,
and as the check's start found it in every execution.

The functions of ``numpy.random`` (``seed``, ``rand``, ``choice``, ``shuffle``, ``get_state``,
...) use one ``RandomState`` of the process, ``numpy.random.mtrand._rand``, made when
``numpy.random`` is first imported. An outside review (the eleventh, row 15: u01, real runs
failing 79/80) had two threads ``np.random.seed(7)`` and draw: the check stopped with "the test is
not deterministic". numpy 2 imports ``numpy.random`` lazily, at the first ``np.random`` in the
explored function, so its generator's lock was the first execution's controlled lock, and the
draws of one execution were the next's start. As ``patch_random`` does for the ``random`` module:

* where the program has imported numpy, or its functions import it, and its modules name
  ``random`` or ``numpy.random...`` (or ``numpy.random`` is loaded already), ``numpy.random`` is
  imported when patching begins, outside any execution: its generator's lock is a real one,
  taken and given back inside one C call (no step), as in CPython, and the first execution's
  draws are operations too; the harness imports nothing of numpy for a program that imports
  none;
* each of those functions in a controlled thread is an operation on one location per execution,
  "numpy's global generator" (a write; ``get_state`` and ``get_bit_generator`` a read), so DPOR
  orders one thread's seed or draw against another's, and a generator drawn from by one thread
  only commutes with the rest;
* each execution starts from the generator as the check's first found it (``take``,
  ``put_back``: its bit generator and state, with the Gaussian kept for the next ``randn``); a
  generator still in the state numpy's import seeded from the OS's entropy (the program neither
  seeded nor drew from it) is seeded first with the check's seed (``Options.seed``), so the
  draws, and a failure that follows them, replay in another process.

Any other generator (a ``Generator``, a ``RandomState``, a bit generator; twelfth review, v39: a
``default_rng(seed)`` made at import and drawn by two threads was proved with one order):

* one made in a controlled thread takes, at each draw, a lock (numpy's ``with self.lock``) that
  is here one operation, a write of its state (``_DrawLock``: numpy's ``RLock``, looked up when a
  bit generator is made, is ours while patched): two threads' draws are explored in both orders,
  a thread's own generator's draws commute with the rest (each is still a step: a loop of some
  thousand scalar draws in one thread may pass ``max_steps``);
* one a program's module held when patching began (a global, a field, a container:
  ``patch_imported``'s stand-ins) is, in each execution, a copy of it as patching found it, made
  in the controlled thread that first uses it (so its draws are operations, and each execution
  draws the same values); ``isinstance`` still sees a ``Generator``; outside the check, the
  generator itself, untouched.

Not seen: a draw through the global ``RandomState`` object itself (``mtrand._rand.rand()``, as
scikit-learn's ``check_random_state(None)`` hands it out) is no operation (the state is still put
back), and the draws' values are not explored (another ``--seed`` draws others).
"""

from __future__ import annotations

import _thread
import copy
import importlib
import sys
import threading
from collections.abc import Iterator
from types import CodeType, ModuleType
from typing import Any

from model_checks.harness import patch_imported, per_execution
from model_checks.harness.patch_streams import _module_codes
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.objects import LocationState, Op

_CELL = "numpy's global generator"
_READS = frozenset({"get_state", "get_bit_generator"})
_REAL_RLOCK = _thread.RLock
_REAL_RLOCK_FUNCTION = threading.RLock  # (``threading``'s own, before any patching)


class _Global:
    """numpy's global generator while patched, and the state each execution starts from."""

    def __init__(self, mtrand: ModuleType) -> None:
        self.mtrand = mtrand
        self.rand: Any = vars(mtrand)["_rand"]
        self.set_bit_generator: Any = vars(mtrand)["set_bit_generator"]
        self.start: tuple[Any, Any] | None = None  # (its bit generator, its state): ``take``
        self.used = False  # a controlled thread of the running check used it
        self.seeded: int | None = None  # the check's seed, where it replaced the OS's (``take``)


_FOUND: list[_Global] = []


def _untouched(rand: Any) -> bool:
    """Is ``rand`` as numpy's import seeded it, from the OS's entropy (not seeded since, not
    drawn from)?"""
    bits = rand._bit_generator
    seeds = getattr(bits, "_seed_seq", None)
    if seeds is None or rand.get_state(legacy=False)["has_gauss"]:
        return False
    return _same(type(bits)(seeds).state, bits.state)


def _same(a: Any, b: Any) -> bool:
    """Are two generator states (dicts of numbers and arrays) equal?"""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "shape") or hasattr(b, "shape"):
        return getattr(a, "shape", None) == getattr(b, "shape", None) and bool((a == b).all())
    return bool(a == b)


def new_check() -> None:
    """A check begins: no controlled thread of it has used the generator yet (``held``)."""
    if _FOUND:
        _FOUND[0].used = False


def take(seed: int) -> None:
    """A check's first execution begins: the generator each of its executions starts from (seeded
    with ``seed`` first if it is still the OS's)."""
    if not _FOUND:
        return
    found = _FOUND[0]
    found.used = False
    found.seeded = None
    if _untouched(found.rand):
        found.seeded = seed & 0xFFFFFFFF
        found.rand.seed(found.seeded)
    bits = found.rand._bit_generator
    found.start = (bits, found.rand.get_state(legacy=False))


def put_back() -> None:
    """An execution ends: the generator as the check's first execution found it."""
    start = _FOUND[0].start if _FOUND else None
    if start is None:
        return
    found = _FOUND[0]
    bits, state = start
    if found.rand._bit_generator is not bits:  # (``set_bit_generator`` in the execution)
        found.set_bit_generator(bits)
    found.rand.set_state(state)


def held() -> str:
    """What an exhaustive verdict of the check that just ran held fixed about numpy's global
    generator ("" if no controlled thread used it)."""
    if not _FOUND or not _FOUND[0].used:
        return ""
    seeded = _FOUND[0].seeded
    start = "the state the check found" if seeded is None else f"seeded {seeded} (the check's seed)"
    return f"numpy's global generator: {start}, in every execution; other values not explored"


def _wrapped(name: str, real: Any) -> Any:
    kind = "read" if name in _READS else "write"

    def replacement(*args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        if rt is not None:
            per_execution.access(rt, _CELL, kind)
            _FOUND[0].used = True
        return real(*args, **kwargs)

    replacement.__name__ = replacement.__qualname__ = name
    replacement.__doc__ = getattr(real, "__doc__", None)
    return replacement


def _real_lock(found: _Global) -> None:
    """The generator's lock a real one: numpy.random imported in an earlier check's execution
    holds that execution's controlled lock; its bit generator is replaced by a twin made now."""
    bits = found.rand._bit_generator
    if type(bits.lock) is _REAL_RLOCK:
        return
    twin = type(bits)()
    twin.state = bits.state
    state = found.rand.get_state(legacy=False)
    found.set_bit_generator(twin)
    found.rand.set_state(state)


def _names(code: CodeType) -> Iterator[str]:
    """The names ``code`` and the functions inside it use (an import's too: ``numpy.random``)."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """numpy.random's functions of its global generator, where the program imported numpy (at
    import, or its functions import it) and uses ``numpy.random`` (elsewhere numpy's own; nothing
    of numpy is imported for a program whose code imports none)."""
    _FOUND.clear()
    names = {name for m in modules for code in _module_codes(m) for name in _names(code)}
    random = "random" in names or any(n.startswith("numpy.random") for n in names)
    if "numpy" not in sys.modules:
        # imported by the explored function itself (``import numpy as np`` in it): imported now
        if not (random and any(n == "numpy" or n.startswith("numpy.") for n in names)):
            return []
    elif "numpy.random.mtrand" not in sys.modules and not random:
        return []
    try:
        mtrand = importlib.import_module("numpy.random.mtrand")
        public = sys.modules["numpy.random"]
    except ImportError:
        return []
    if not hasattr(mtrand, "_rand"):
        return []
    found = _Global(mtrand)
    _real_lock(found)
    _FOUND.append(found)
    out: list[tuple[Any, str, Any, Any]] = _controlled_locks()
    for owner in (public, mtrand):
        for name in getattr(mtrand, "__all__", ()):
            value = vars(owner).get(name)
            if value is None or isinstance(value, type):
                continue
            if (
                getattr(value, "__self__", None) is found.rand
                or getattr(value, "__module__", None) == mtrand.__name__
            ):
                out.append((owner, name, value, _wrapped(name, value)))
    return out


class _DrawLock:
    """The lock of a bit generator made in a controlled thread: numpy takes it around each draw
    (``with self.lock``), and here taking it is one operation, a write of the generator's state,
    so two threads' draws are two orders the search explores and a thread's own generator's
    draws commute with the rest (twelfth review, v39: a generator of ``main`` drawn by two
    threads was proved with one order). It excludes nothing: a draw is C code, in one step."""

    __slots__ = ("ex", "loc")

    def __init__(self, rt: Any) -> None:
        self.ex = rt._ex
        made = self.ex.new_object(lambda oid: LocationState(oid, "a numpy generator's state"))
        assert isinstance(made, LocationState)
        self.loc = made

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        rt = _controlled()
        if rt is not None and rt._ex is self.ex:  # (a generator kept from another execution: no op)
            self.ex.perform(Op("write", self.loc))
        return True

    def release(self) -> None:
        return None

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        return None


def _draw_lock(real: Any) -> Any:
    """numpy's ``RLock`` as a bit generator looks it up when made: in a controlled thread, one
    whose taking is the draw's operation (``_DrawLock``); elsewhere the real one."""

    def make(*args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        return real(*args, **kwargs) if rt is None else _DrawLock(rt)

    make.__name__ = make.__qualname__ = "RLock"
    return make


def _controlled_locks() -> list[tuple[Any, str, Any, Any]]:
    """Each bit generator made in a controlled thread (by the program, or copied from one made at
    import: ``_imported_generator``) gets a ``_DrawLock``."""
    module = sys.modules.get("numpy.random.bit_generator")
    real = None if module is None else vars(module).get("RLock")
    if module is None or real is None:
        return []
    if real is threading.RLock:  # (imported while patched: ``threading``'s patched ``RLock``)
        real = _REAL_RLOCK_FUNCTION
    return [(module, "RLock", vars(module)["RLock"], _draw_lock(real))]


_GENERATOR_TYPES = ("Generator", "RandomState", "BitGenerator")


def _a_generator(value: object) -> bool:
    """Is ``value`` a numpy generator (numpy looked up only if ``numpy.random`` is loaded)?"""
    module = getattr(type(value), "__module__", None)
    if not isinstance(module, str) or not module.startswith("numpy.random"):
        return False
    public = sys.modules.get("numpy.random")
    kinds = tuple(getattr(public, name, None) for name in _GENERATOR_TYPES)
    return isinstance(value, tuple(k for k in kinds if isinstance(k, type)))


class _Generator(patch_imported.StandIn):
    """A generator made at import (before patching), in a controlled thread: each execution's own
    copy of it as patching found it, made there (so its bit generator's lock is controlled: its
    draws are operations); outside one, the generator itself. ``isinstance`` sees its class."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(self._real)


def _imported_generator(real: object, name: str, running: patch_imported.Running) -> _Generator | None:
    """The stand-in of a numpy ``Generator``, ``RandomState`` or bit generator a program's module
    (a global, a field, a container) held when patching began: two threads drawing from it draw in
    both orders (the twelfth review's v39: ``rng = default_rng(seed)`` at module level, drawn by two
    threads, was proved with one order), and each execution starts from its state then, so an
    execution replays the same draws."""
    if not _a_generator(real):
        return None
    start = copy.deepcopy(real)  # (the real one may be drawn from between checks, outside them)
    return _Generator(real, lambda: copy.deepcopy(start), running, name)


patch_imported.OTHER_STAND_INS.append(_imported_generator)
