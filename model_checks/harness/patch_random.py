"""Random draws in explored code, in patch mode: CPython's sharing, seeded from the check's seed.

An outside review (session 40, p154) saw a program that picks its lock order with
``random.random()`` proved deadlock-free in some runs of the check and failed in others: the
draws came from the process's generator, seeded by the OS, so the verdict followed an
uncontrolled coin. The eighth review then saw false proofs of the first model (each thread its
own sequence): two threads drawing from one ``random.Random``, or one thread's ``random.seed``
against another's draw, were taken to commute. The model is now CPython's:

* the ``random`` module's functions (``random``, ``choice``, ``seed``, ``getstate``, ... bound to
  its hidden instance) use ONE generator per execution, seeded with the execution's draw seed
  (``random.seed(S)``'s sequence), as CPython's module generator is shared by every thread;
* a generator's draw, seed, ``getstate`` or ``setstate`` in a controlled thread is an operation
  (a write of the generator's cell, one per generator per execution): dependent with every other
  operation on the same generator, so DPOR explores their orders; a generator drawn by one thread
  only is independent of the rest. A program's ``random.Random`` instances are the same, through
  the class's primitives (``random``, ``getrandbits``, ``randbytes``, ``seed``, ``getstate``,
  ``setstate``: its Python-level methods build on them; one operation per module call or per
  primitive); making one is not an operation (the new object is the thread's own);
* the OS's entropy (``os.urandom``, so ``uuid.uuid4``, ``secrets``, ``random.SystemRandom``, and
  the seed of ``random.Random()`` or ``random.seed()`` with no argument) draws from a sequence of
  the thread's own, seeded from (the draw seed, the thread's index): the OS's entropy is no
  shared state, so those draws commute;
* the draw seed is the check's seed (``Options.seed``, ``--seed``) in every execution of the
  systematic strategies, a replay and Hypothesis' choices; random and PCT sampling vary it from
  execution to execution (``mix(seed, k)`` for the k-th sampled execution that draws), so they
  can find the draw that fails; a schedule string of an execution that drew with a draw seed
  other than 0 carries it (``.r<hex>``, ``schedule.py``).

``lanecheck explore`` seeds the module's generator with ``--seed`` before it imports the program
and takes the state the import left (``seeded_import``): a program that seeded or drew at import
(review 8: r044, r043) starts every execution from that state, as a real run would; one that did
not draws from the draw seed. An exhaustive verdict of a check whose program drew says what it
held fixed (``held``); in a check not started so (a test's ``check``), if the module's generator
was seeded or drawn from after the harness was imported and before the check, that its state was
replaced by the draw seed.
The draws are not choice points: every value of a draw is not explored (``docs/harness.md``).
Outside a controlled thread every name is the real one.
"""

from __future__ import annotations

import _random
import os
import random
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha512
from typing import Any

from model_checks.harness import patch_numpy_random
from model_checks.harness.patch_threads import _CURRENT, _running
from model_checks.harness.rt.objects import LocationState, Op
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from model_checks.harness.strategies.simple import ReplayChooser

_real_urandom = os.urandom
_MASK = (1 << 64) - 1
# ``random.Random``'s primitives as they are (C methods of ``_random.Random`` for two of them)
PRIMITIVES = ("random", "getrandbits", "randbytes", "seed", "getstate", "setstate", "__init__")
_REAL: dict[str, Any] = {name: getattr(random.Random, name) for name in PRIMITIVES}
_HIDDEN: Any = vars(random)["_inst"]
_AT_IMPORT = _REAL["getstate"](_HIDDEN)  # the module generator's state when the harness loaded
_BUSY = [False]  # inside a draw already performed: its inner primitives are part of it


@dataclass(frozen=True)
class ImportDraws:
    """The module generator around the explored program's import (``seeded_import``)."""

    seed: int  # lanecheck seeded it so just before the import (``--seed``)
    state: Any  # the state the import left
    touched: bool  # the import seeded it or drew from it


_FROM_IMPORT: list[ImportDraws | None] = [None]  # the program of the checks running now


def seeded_import(seed: int, load: Callable[[], Any]) -> tuple[Any, ImportDraws]:
    """``load()``, the program's import, with the module generator seeded ``seed`` first (a draw
    at import is then the seed's, not the OS's: r043), and the state it left (r044's
    ``random.seed(3)``)."""
    _REAL["seed"](_HIDDEN, seed)
    before = _REAL["getstate"](_HIDDEN)
    loaded = load()
    after = _REAL["getstate"](_HIDDEN)
    return loaded, ImportDraws(seed, after, after != before)


@contextmanager
def from_import(draws: ImportDraws) -> Iterator[None]:
    """The checks inside start each execution's module generator as ``draws`` says."""
    saved = _FROM_IMPORT[0]
    _FROM_IMPORT[0] = draws
    try:
        yield
    finally:
        _FROM_IMPORT[0] = saved


class _Execution:
    """One execution's generators: the module's, the OS's entropy per thread, and the cells of
    the generators drawn from (kept with their generators: compared by identity)."""

    def __init__(self, ex: Any, draw_seed: int, start: Any) -> None:
        self.ex = ex
        self.shared: random.Random = random.Random.__new__(random.Random)
        if start is None:
            _seed(self.shared, draw_seed)
        else:
            _setstate(self.shared, start)
        self.entropy: dict[int, random.Random] = {}
        self.cells: dict[int, tuple[random.Random, LocationState]] = {}

    def cell(self, gen: random.Random) -> LocationState:
        found = self.cells.get(id(gen))
        if found is None:
            name = (
                "the random module's generator" if gen is self.shared else f"{type(gen).__name__} generator"
            )
            made = self.ex.new_object(lambda oid: LocationState(oid, name))
            assert isinstance(made, LocationState)
            found = self.cells[id(gen)] = (gen, made)
        return found[1]

    def bits(self, tid: int, k: int) -> int:
        """``k`` bits of the OS's entropy, from the thread's own sequence (drawn through the C
        type: the class's primitives, replaced while patched, would make it an operation)."""
        gen = self.entropy.get(tid)
        if gen is None:
            gen = self.entropy[tid] = random.Random.__new__(random.Random)
            _random.Random.seed(gen, mix(_CHECK[0].draw_seed, tid))
        return _random.Random.getrandbits(gen, k)


class _Check:
    """The running check's draws: its seed, the executions that drew and their draw seeds."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.replayed: int | None = None  # a replayed schedule's draw seed (``replaying``)
        self.sampled = 0  # sampled executions that drew so far
        self.drew = False  # some execution of the check drew
        self.varied = False  # some execution drew with a seed other than the check's
        self.last_own: int = seed  # the draw seed of the last execution not replayed by the search
        # the executions that drew lately, with their draw seeds (kept alive: compared by identity)
        self.recent: deque[tuple[object, int]] = deque(maxlen=8)
        self.now: _Execution | None = None  # the execution drawing now
        self.draw_seed = seed
        # the program's import as ``lanecheck explore`` made it (None: a test's check)
        self.imported = _FROM_IMPORT[0]
        # the import left a state every execution starts from (None: the draw seed's)
        self.start = self.imported.state if self.imported is not None and self.imported.touched else None
        # the module's generator was seeded or drawn from before the check (at the program's
        # import), and that state is replaced by the draw seed
        self.touched_before = self.imported is None and _REAL["getstate"](_HIDDEN) != _AT_IMPORT


_CHECK = [_Check(0)]


def new_check(seed: int) -> None:
    """A check (or a replay) begins, with ``Options.seed``."""
    _CHECK[0] = _Check(seed)


def replaying(draw_seed: int | None) -> None:
    """The check is the replay of a schedule string recorded with this draw seed (None: the
    string has none, its execution drew nothing or drew with 0)."""
    _CHECK[0].replayed = 0 if draw_seed is None else draw_seed


def check_seed() -> int:
    """The running check's seed (``Options.seed``)."""
    return _CHECK[0].seed


def mix(seed: int, k: int) -> int:
    """The draw seed of the ``k``-th sampled execution of a check with ``seed`` (splitmix64)."""
    z = (seed * 0x9E3779B97F4A7C15 + (k + 1) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _draw_seed(state: _Check, ex: Any) -> int:
    chooser = getattr(ex, "chooser", None)
    if state.replayed is not None:
        return state.replayed
    if isinstance(chooser, ReplayChooser):
        # the search replaying its failing execution for the report: the same draws
        return state.last_own
    if isinstance(chooser, (RandomChooser, PctChooser)):
        state.sampled += 1
        return mix(state.seed, state.sampled)
    return state.seed


def _current() -> tuple[_Execution, int] | None:
    """The running controlled thread's execution generators and index; None outside one."""
    running = _running()
    if running is None:
        return None
    ex, tid = running
    state = _CHECK[0]
    now = state.now
    if now is None or now.ex is not ex:
        state.draw_seed = _draw_seed(state, ex)
        if not isinstance(getattr(ex, "chooser", None), ReplayChooser) or state.replayed is not None:
            state.last_own = state.draw_seed
        state.recent.append((ex, state.draw_seed))
        state.drew = True
        state.varied |= state.draw_seed != state.seed
        now = state.now = _Execution(ex, state.draw_seed, state.start)
    return now, tid


def _performed(now: _Execution, gen: random.Random, call: Callable[[], Any]) -> Any:
    """``call()``, a use of ``gen``, as one operation on ``gen``'s cell."""
    now.ex.perform(Op("write", now.cell(gen)))
    _BUSY[0] = True
    try:
        return call()
    finally:
        _BUSY[0] = False


def positions(ex: object) -> tuple[tuple[object, ...], ...]:
    """Where each generator of ``ex`` is in its draws (its state, hashed): part of the abstract
    state of ``--strategy states``, whose contract is equal states, equal futures. Two states
    alike but for the draws to come were one state there: a thread that drew once a spin found
    its bug only at a later draw, and the search said "bounded by state fingerprint conflated two
    states" instead of finding it. () while ``ex`` has drawn nothing."""
    now = _CHECK[0].now
    if now is None or now.ex is not ex:
        return ()

    def get(gen: random.Random) -> object:
        # the C state (an entropy sequence, made with no ``Random.__init__``, has no ``gauss_next``)
        return _random.Random.getstate(gen), getattr(gen, "gauss_next", None)

    out: list[tuple[object, ...]] = [("module", hash(get(now.shared)))]
    out += sorted((("generator", cell.oid, hash(get(gen))) for gen, cell in now.cells.values()), key=repr)
    out += sorted(("entropy", tid, hash(get(gen))) for tid, gen in now.entropy.items())
    return tuple(out)


def draw_seed_of(ex: object) -> int | None:
    """The draw seed ``ex`` drew with; None if it drew nothing. (An execution older than the last
    few that drew is one of a search whose executions all drew with the check's seed, unless
    the check sampled: then its seed is not known, and its string replays with seed 0.)"""
    state = _CHECK[0]
    for seen, seed in reversed(state.recent):
        if seen is ex:
            return seed
    return state.seed if state.drew and not state.varied and state.replayed is None else None


def held() -> str:
    """What an exhaustive verdict of the check that just ran held fixed about random draws ("" if
    its program drew nothing in a controlled thread and its import, if ``seeded_import`` ran it,
    left the module generator as seeded), numpy's global generator's among them."""
    return "; ".join(words for words in (_held(), patch_numpy_random.held()) if words)


def _held() -> str:
    state = _CHECK[0]
    if state.start is not None:  # (named even if no controlled thread drew: r043 drew at import)
        assert state.imported is not None
        return (
            "random draws: one shared generator, as CPython's; the module generator: the state "
            f"the program's import left, seeded {state.imported.seed} (--seed) before the import, "
            "in every execution; other values not explored (another --seed draws others)"
        )
    if not state.drew:
        return ""
    before = (
        "; the module generator was seeded or drawn from before the check (at the program's "
        "import?): that state is not carried in, the draw seed replaces it"
        if state.touched_before
        else ""
    )
    if state.replayed is not None:
        return f"random draws: one shared generator, as CPython's, seeded {state.replayed:#x}{before}"
    varied = " (sampled executions: other seeds)" if state.varied else ""
    return (
        f"random draws: one shared generator, as CPython's, seeded {state.seed} in every "
        f"execution{varied}; other values not explored (--strategy random/pct vary them){before}"
    )


def _module_function(name: str, real: Any) -> Any:
    def replacement(*args: Any, **kwargs: Any) -> Any:
        current = _current()
        if current is None or _BUSY[0]:
            return real(*args, **kwargs)
        now, tid = current
        if name == "seed" and not args and kwargs.get("a") is None:
            # ``random.seed()``: CPython reads the OS's entropy; here the thread's sequence
            args, kwargs = (now.bits(tid, 64),), {}
        method = getattr(now.shared, name)
        return _performed(now, now.shared, lambda: method(*args, **kwargs))

    replacement.__name__ = replacement.__qualname__ = name
    replacement.__doc__ = real.__doc__
    return replacement


def _seed(self: random.Random, a: Any = None, version: int = 2) -> None:
    """``Random.seed`` (version 2) run in this file: the race detector traces ``random.py`` (its
    algorithms over the caller's data), and its ``self.gauss_next = None`` made two threads'
    seeds of one generator a data race, where the generator's cell orders them."""
    if version != 2 or not isinstance(a, (type(None), int, float, str, bytes, bytearray)):
        _REAL["seed"](self, a, version)
        return
    if isinstance(a, (str, bytes, bytearray)):
        raw = a.encode() if isinstance(a, str) else bytes(a)
        a = int.from_bytes(raw + sha512(raw).digest())
    _random.Random.seed(self, a)
    self.gauss_next = None  # type: ignore[attr-defined]


def _getstate(self: random.Random) -> Any:
    return self.VERSION, _random.Random.getstate(self), self.gauss_next  # type: ignore[attr-defined]


def _setstate(self: random.Random, state: Any) -> None:
    if not (isinstance(state, tuple) and len(state) == 3 and state[0] == self.VERSION):
        _REAL["setstate"](self, state)
        return
    _random.Random.setstate(self, state[1])
    self.gauss_next = state[2]  # type: ignore[attr-defined]


_UNTRACED: dict[str, Any] = {"seed": _seed, "getstate": _getstate, "setstate": _setstate}


def _primitive(name: str) -> Any:
    real = _UNTRACED.get(name, _REAL[name])

    def method(self: random.Random, *args: Any, **kwargs: Any) -> Any:
        # the fast way out first: the harness's own generators (the random and PCT choosers')
        # draw here at every step, from the scheduler, where no thread of the program runs
        rt = _CURRENT[0]
        if rt is None or _BUSY[0] or rt._ex.running_thread() is None:
            return real(self, *args, **kwargs)
        current = _current()
        if current is None:
            return real(self, *args, **kwargs)
        now, tid = current
        if name == "seed" and (args[0] if args else kwargs.get("a")) is None:
            args, kwargs = (now.bits(tid, 64), *args[1:]), {}
        return _performed(now, self, lambda: real(self, *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = real.__doc__
    return method


def _init(self: random.Random, x: Any = None) -> None:
    """``Random(x)``: not an operation (the new generator is the thread's own); with no seed, one
    from the thread's entropy (CPython's C seeding would read the OS's)."""
    current = None if _BUSY[0] else _current()
    if current is None:
        _REAL["__init__"](self, x)
        return
    now, tid = current
    if x is None:
        x = now.bits(tid, 64)
    _BUSY[0] = True
    try:
        _REAL["__init__"](self, x)
    finally:
        _BUSY[0] = False


def _urandom(size: int) -> bytes:
    current = _current()
    if current is None:
        return _real_urandom(size)
    now, tid = current
    return now.bits(tid, size * 8).to_bytes(size, "little")


_real_next_name = tempfile._RandomNameSequence.__next__  # type: ignore[attr-defined]
# Mixed into every name: the threads' entropy sequences are the check's (alike in every process
# checking with that seed), and two processes checking one program at once (two pytest workers)
# made the same names: one's ``NamedTemporaryFile`` deleted the file the other had just made
# under it. CPython's names are unpredictable across processes; here they are the same within one.
_PROCESS_SALT = int.from_bytes(_real_urandom(8), "little")


def _next_name(self: Any) -> str:
    """``tempfile``'s next candidate name in a controlled thread: eight characters of the thread's
    own entropy sequence, no operation. CPython draws them from one generator every thread shares
    (the name sequence's), eight draws a name, each an operation here on its cell: two threads
    making a temporary folder each had sixteen draws on one generator to order, and a search of
    them (review 12, c11/r05: two ``TemporaryDirectory``s) was cut by its time limit after 25,000
    executions. Which thread gets which name is no program's to rely on (CPython: "unpredictable
    strings", "multiple threads can safely use the same instance"), so a name is the OS's entropy,
    as ``os.urandom``: the thread's own, and two threads' draws commute."""
    current = _current()
    if current is None:
        return _real_next_name(self)  # type: ignore[no-any-return]
    now, tid = current
    characters: str = self.characters
    number = now.bits(tid, 64) ^ _PROCESS_SALT
    name = []
    for _ in range(8):
        number, k = divmod(number, len(characters))
        name.append(characters[k])
    return "".join(name)


def _replacements() -> list[tuple[Any, str, Any, Any]]:
    out: list[tuple[Any, str, Any, Any]] = []
    for name, value in sorted(vars(random).items()):
        if getattr(value, "__self__", None) is _HIDDEN and callable(value):
            out.append((random, name, value, _module_function(name, value)))
    out.append((os, "urandom", _real_urandom, _urandom))
    # ``SystemRandom`` and ``random``'s own reads of entropy (``from os import urandom as _urandom``)
    out.append((random, "_urandom", vars(random)["_urandom"], _urandom))
    for name in PRIMITIVES[:-1]:
        out.append((random.Random, name, _REAL[name], _primitive(name)))
    out.append((random.Random, "__init__", _REAL["__init__"], _init))
    out.append((tempfile._RandomNameSequence, "__next__", _real_next_name, _next_name))  # type: ignore[attr-defined]
    return out


REPLACEMENTS = _replacements()
