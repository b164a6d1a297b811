"""A C ``io`` buffered object entered by two controlled threads: the second waits for the first.

CPython's ``BufferedReader``, ``BufferedWriter``, ``BufferedRandom`` (and the two inside a
``BufferedRWPair``) guard their methods with a lock whose owner is the OS thread's ident: a thread
entering one that another thread is inside waits for it, and the same thread entering it again
(its raw stream's ``write`` writes to it) gets ``RuntimeError: reentrant call inside ...``. On the
greenlet back end the controlled threads share one OS thread, so a controlled thread parked inside
one (its raw stream, a ``RawIOBase`` of the program's or a socket's ``SocketIO``, took a controlled
lock or waited for its socket) made the next thread entering it look like that thread re-entering:
review 9's s51 (a correct program, two threads writing through one ``BufferedWriter``) failed with
that ``RuntimeError``, and two readers of one ``sock.makefile("rb")`` likewise (s52).

Patched, each of these names is a subclass of the real class (``isinstance`` and subclassing as in
CPython) whose lock-taking methods (``LOCKING``, found by entering each from inside its raw
stream) first take a controlled lock of the object, one per execution: another controlled thread
inside waits for it, a wait the explorer schedules (and a deadlock where nothing ends it), and the
order in which threads enter the object is explored; the thread already inside calls the real
method, whose own lock raises CPython's ``RuntimeError`` where CPython does. A ``TextIOWrapper``
takes no lock of its own: it enters its buffer through these methods. The reads that look at the
buffer before taking the lock do so as an operation, and lose what the buffer held after a wait,
as 3.11 does (``_lose_buffered``). Not covered: an object made before patching (at import), and
one ``open``/``io.open`` makes (over a ``FileIO``, whose raw calls never park), which C code makes
of the real classes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, cast

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.sync.primitives import Lock

# the methods that take the object's lock, as CPython 3.11's ``bufferedio.c`` does
LOCKING = frozenset(
    {"read", "read1", "readinto", "readinto1", "readline", "peek", "__next__"}
    | {"write", "flush", "truncate", "seek", "close"}
)
# ``BufferedRWPair``'s: which of its reader and writer each enters (``close``: both)
_PAIR_SIDES = {
    **{name: ("reader",) for name in ("read", "read1", "readinto", "readinto1", "peek")},
    "write": ("writer",),
    "flush": ("writer",),
    "close": ("writer", "reader"),
}
_SLOT = "_lanecheck_inside"
# the reads that look at the buffer before taking the lock and, having waited for it, empty it
# (3.11's ``_buffered_readline``, ``_buffered_readinto_generic``, ``read1``), and the calls inside
# which a thread parks with the buffer emptied, in its raw stream's ``readinto``
_LOOK_FIRST = frozenset({"readline", "__next__", "read1", "readinto", "readinto1"})
_RAW_READS = frozenset({"read", "read1", "readinto", "readinto1", "readline", "peek", "__next__"})


class _Inside:
    """One object's controlled locks in one execution (an object outlives its execution), and
    the call each side's holder is making."""

    __slots__ = ("calls", "ex", "locks")

    def __init__(self, ex: object) -> None:
        self.ex = ex
        self.locks: dict[str, Lock] = {}
        self.calls: dict[str, str] = {}


def _inside(obj: Any, rt: ControlledRuntime, sides: tuple[str, ...], label: str) -> _Inside:
    found: _Inside | None = getattr(obj, _SLOT, None)
    if found is None or found.ex is not rt._ex:
        found = _Inside(rt._ex)
        setattr(obj, _SLOT, found)
    for side in sides:
        if side not in found.locks:
            found.locks[side] = rt.lock(label if side == "self" else f"{label}'s {side}")
    return found


def _entered(real: Callable[..., Any], name: str, sides: tuple[str, ...], label: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        if rt is None or getattr(self, "_finalizing", False):
            # (not a controlled thread; or the object's finaliser, ``close`` and the ``flush`` it
            # calls, in whatever step freed it, of this execution or an earlier one whose cycle
            # the collector took now: no thread can be inside it, and no step is taken there)
            return real(self, *args, **kwargs)
        tid = rt._ex.running_thread()
        inside = _inside(self, rt, sides, label)
        locks = [inside.locks[side] for side in sides]
        if any(lock._st.owner == tid for lock in locks):
            # the thread is inside already: its raw stream re-enters, or ``close`` calls ``flush``
            # (C's ``close`` lets go of its lock first); CPython's own lock decides which raises
            return real(self, *args, **kwargs)
        # (the look at the buffer before the wait is an operation: the explorer runs it while
        # another thread is inside and while none is, which DPOR took to be one order)
        emptied = name in _LOOK_FIRST and locks[0].locked() and inside.calls.get(sides[0]) in _RAW_READS
        for lock in locks:
            lock.acquire()
        for side in sides:
            inside.calls[side] = name
        try:
            if emptied:
                _lose_buffered(self)
            return real(self, *args, **kwargs)
        finally:
            for side in sides:
                inside.calls.pop(side, None)
            for lock in reversed(locks):
                lock.release()

    method.__name__ = name
    method.__qualname__ = real.__qualname__
    return method


def _would_block(buffer: object) -> None:
    return None


def _lose_buffered(obj: Any) -> None:
    """What another thread left in a reader's buffer while this one waited is lost, as in
    CPython 3.11: the call looked at the buffer before waiting, found it empty (the holder was in
    a raw read, which empties it first), and after the wait it empties the buffer and reads the
    raw stream (review 9's s52: two readers of one ``sock.makefile("rb")``, main sending two
    lines at once; the second reader's line is dropped and every real run hangs). The buffer's
    bytes are taken by ``peek`` with the raw stream's ``readinto`` saying "nothing now", so that
    no raw read is made; a writable object (``BufferedRandom``, a pair) is left alone."""
    raw = getattr(obj, "raw", None)
    fields = getattr(raw, "__dict__", None)
    if not isinstance(fields, dict) or "readinto" in fields or obj.writable():
        return
    fields["readinto"] = _would_block
    try:
        left = obj.peek(1)
    finally:
        del fields["readinto"]
    if left:
        obj.read(len(left))


class _Guarded(type):
    """The metaclass of a patched name: an object of the real class (``open``'s) is an instance
    of it, as a program's ``isinstance(f, io.BufferedWriter)`` expects; a program's subclass of
    it is an ordinary class."""

    def __instancecheck__(cls, obj: Any) -> bool:
        real = cls.__dict__.get("_real")
        return isinstance(obj, real) if real is not None else super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        real = cls.__dict__.get("_real")
        return issubclass(sub, real) if real is not None else super().__subclasscheck__(sub)


def _guarded(real: type) -> type:
    pair = real is io.BufferedRWPair
    body: dict[str, Any] = {"__slots__": (_SLOT,), "_real": real, "__module__": real.__module__}
    for name in sorted(LOCKING):
        if name not in vars(real):
            continue
        sides = _PAIR_SIDES.get(name) if pair else ("self",)
        if sides is not None:
            label = f"the lock of an io.{real.__name__}"
            body[name] = _entered(getattr(real, name), name, sides, label)
    real_repr = cast("Callable[[Any], str]", real.__repr__)

    def __repr__(self: Any) -> str:
        text: str = real_repr(self)
        # (C's repr names the object's type: ``<BufferedWriter>`` for this class, as a heap type)
        return f"<{real.__module__}.{text[1:]}" if type(self) is kind else text

    body["__repr__"] = __repr__
    kind = _Guarded(real.__name__, (real,), body)
    kind.__qualname__ = real.__qualname__
    return kind


_CLASSES = (io.BufferedReader, io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair)
GUARDED: dict[type, type] = {real: _guarded(real) for real in _CLASSES}

# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (io, real.__name__, real, kind) for real, kind in GUARDED.items()
]
