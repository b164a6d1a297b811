"""The CPython 3.11 internals the race detector (``races.py``) reads and writes: the value stack
and fast locals of a traced frame (``stack_value``, ``fast_local``) and the thread state's
tracing guard (``Untraced``); and which trace function it installs (``NATIVE``: the C tracer
``_race_tracer`` when built, else Python), with the hot helpers of both (``stack_value``,
``fast_local``, ``join``, ``sync_op``; ``py_*`` in Python)."""

from __future__ import annotations

import ctypes
import operator
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any, cast

from model_checks.harness.rt.frames import (
    F_FRAME,
    LOCALSPLUS,
    STACKTOP,
    _nlocalsplus,
    int_at,
    object_at,
    pointer_at,
)
from model_checks.harness.rt.native import NATIVE as NATIVE
from model_checks.harness.rt.native import NATIVE_WHY as NATIVE_WHY

if sys.version_info[:2] != (3, 11):  # pragma: no cover - the stack layout below is 3.11's
    SUPPORTED = False
else:
    SUPPORTED = True


def py_stack_value(frame: types.FrameType, depth: int, /) -> object:
    """The value ``depth`` entries below the top of ``frame``'s value stack (1 = top); None for
    a NULL slot. The stack pointer (``stacktop``) is there to read: the interpreter stores it
    before it calls the tracer (``_PyFrame_SetStackPointer`` in ``DO_TRACING``); a frame outside
    a trace event has none (-1), and reading past the stack's base would read a local: both are
    a ValueError, as in the C version."""
    base = pointer_at(id(frame) + F_FRAME).value
    assert base is not None
    top = int_at(base + STACKTOP).value
    if top < 0 or depth < 1 or top - depth < _nlocalsplus(frame.f_code):
        raise ValueError(f"no value {depth} deep on this frame's stack")
    addr = base + LOCALSPLUS + 8 * (top - depth)
    if not pointer_at(addr).value:
        return None
    return object_at(addr).value


def py_fast_local(frame: types.FrameType, slot: int, /) -> object:
    """The raw content of ``frame``'s fast-locals slot ``slot`` (a cell where the slot is a cell or
    free variable: what ``LOAD_DEREF slot`` reads through); None for an empty slot. ValueError
    for a slot past the frame's locals, as in the C version."""
    if slot < 0 or slot >= _nlocalsplus(frame.f_code):
        raise ValueError(f"no local slot {slot} in this frame")
    base = pointer_at(id(frame) + F_FRAME).value
    assert base is not None
    addr = base + LOCALSPLUS + 8 * slot
    if not pointer_at(addr).value:
        return None
    return object_at(addr).value


def py_join(into: list[int], other: list[int], /) -> None:
    """``into`` joined with the vector clock ``other`` in place (grown to its length)."""
    if len(into) < len(other):
        into.extend([0] * (len(other) - len(into)))
    for i, v in enumerate(other):
        if v > into[i]:
            into[i] = v


def py_sync_op(
    vc: list[int],
    tid: int,
    objs: Iterable[int],
    read: bool,
    writes: dict[int, list[int]],
    reads: dict[int, list[int]],
    yielded: list[int] | None,
    everything: list[int],
    /,
) -> None:
    """``RaceDetector.sync`` of an operation on the objects ``objs`` by thread ``tid`` (clock
    ``vc``): acquire from their writes (a write also from their reads), publish to them, acquire
    the last yield step, start a new epoch, and add the clock to the join of every step."""
    for oid in objs:
        w = writes.get(oid)
        if w is not None:
            py_join(vc, w)
        r = reads.get(oid)
        if read:
            if r is None:
                reads[oid] = list(vc)
            else:
                py_join(r, vc)
        else:
            if r is not None:
                py_join(vc, r)
            writes[oid] = list(vc)
    if yielded is not None:
        py_join(vc, yielded)
    vc[tid] += 1
    py_join(everything, vc)


# ``_race_filter.c``'s ``frame_owned`` in Python, for the Python tracer (the two tracers record the
# same accesses: test_race_tracer.py). CPython 3.11's layouts: an object's reference count and
# type, ``_PyInterpreterFrame.f_locals``, the iterators' fields (listobject.c, dictobject.c,
# setobject.c, enumobject.c).
_F_LOCALS = 24
_refcount_at = ctypes.c_ssize_t.from_address
_NONE: list[object] = []
_NO_KEYS: dict[object, object] = {}
_AT_24 = frozenset(map(id, (type(iter(_NONE)), type(reversed(_NONE)))))  # it_seq
_AT_16 = frozenset(  # di_dict, si_set
    map(
        id,
        (
            type(iter(_NO_KEYS)),
            type(iter(_NO_KEYS.values())),
            type(iter(_NO_KEYS.items())),
            type(iter(set())),
        ),
    )
)
_EXACT = frozenset((id(list), id(dict), id(set)))
_SET_WEAKREFS = set.__weakrefoffset__  # (a set takes weak references: its list of them)


def _word(addr: int) -> int:
    return pointer_at(addr).value or 0


def _holds(site: object, addr: int) -> int:
    """Does the access ``site`` (``races.Site``) hold the object at ``addr``? 1 or 0."""
    if type(site) is not tuple or len(site) < 4:
        return 0
    where = site[3]
    return int(type(where) is tuple and len(where) >= 1 and id(where[0]) == addr)


def py_owned_turn(
    frame: types.FrameType, tid: int, shadow: dict[Any, Any], keys: dict[int, list[object]], whole: object
) -> bool:
    """Is the loop turn about to run in ``frame`` over a list, dict or set (through an
    ``enumerate``) only the frame holds, which no thread but ``tid`` wrote? Then it is no access
    (``_race_filter.c``, ``frame_owned``, which says why). Read through addresses, before the
    caller holds the iterator or the container: its own references would be counted."""
    base = _word(id(frame) + F_FRAME)
    top = int_at(base + STACKTOP).value
    if top <= _nlocalsplus(frame.f_code):
        return False
    slots = [_word(base + LOCALSPLUS + 8 * i) for i in range(top)]
    it = inner = slots[-1]
    if _word(it + 8) == id(enumerate):
        inner = _word(it + 24)
        if not inner:
            return False
    kind = _word(inner + 8)
    seq = _word(inner + 24) if kind in _AT_24 else _word(inner + 16) if kind in _AT_16 else 0
    if not seq or _word(seq + 8) not in _EXACT:
        return False
    if _word(seq + 8) == id(set) and _word(seq + _SET_WEAKREFS):
        return False  # (a weak reference reaches it and adds no count)
    counts = [_refcount_at(a).value for a in (it, inner, seq)]  # (before any reference of ours)
    in_frame = {a: slots.count(a) for a in (it, inner, seq)}
    fields = _word(base + _F_LOCALS)
    if fields and _refcount_at(fields).value == 1 and _word(fields + 8) == id(dict):
        names = cast(dict[str, object], object_at(base + _F_LOCALS).value)
        values = [id(v) for v in names.values()]
        in_frame = {a: n + values.count(a) for a, n in in_frame.items()}
    if counts[0] != in_frame[it] or (inner != it and counts[1] != 1 + in_frame[inner]):
        return False
    held = 0
    for i, key in enumerate([whole, *keys.get(seq, ())]):
        loc = shadow.get((seq, key))
        if loc is None:
            if i > 0:
                return False  # (a key listed has a location)
            continue
        if 0 <= loc.w_tid != tid:
            return False
        held += 1 + _holds(loc.w_site, seq) + sum(_holds(site, seq) for _, site in loc.reads.values())
    return counts[2] == 1 + in_frame[seq] + held


stack_value: Callable[[types.FrameType, int], object] = NATIVE.stack_value if NATIVE else py_stack_value
fast_local: Callable[[types.FrameType, int], object] = NATIVE.fast_local if NATIVE else py_fast_local
join: Callable[[list[int], list[int]], None] = NATIVE.join if NATIVE else py_join
sync_op: Callable[..., None] = NATIVE.sync_op if NATIVE else py_sync_op
# ``where.f_code`` and ``id(obj)`` without their audit events (``_race_filter.c``: each cost an
# event at every recorded access, the process watch's hook installed; session 46)
frame_code: Callable[[Any], types.CodeType] = NATIVE.frame_code if NATIVE else operator.attrgetter("f_code")
address: Callable[[object], int] = NATIVE.address if NATIVE else id


def tracer_kind() -> str:
    """ "c" or "python": which trace function the race detector installs in this process."""
    return "c" if NATIVE is not None else "python"


# CPython 3.11 PyThreadState (Include/cpython/pystate.h): ``tracing`` (the re-entrancy guard of
# trace functions) and ``tracing_what`` (the event being traced). Under greenlets every controlled
# thread shares the OS thread's state, so a point announced from inside the tracer must lower
# the guard while other threads run, or their accesses would not be traced (``Untraced``).
_TRACING = 44
_TRACING_WHAT = 48
_PY_TRACE_OPCODE = 7
_thread_state = ctypes.pythonapi.PyThreadState_Get
_thread_state.restype = ctypes.c_void_p


class Untraced:
    """Inside the tracer: lower the thread state's tracing guard for the block (other threads
    run meanwhile) and restore it after; refuses a thread state that does not look like 3.11's.
    Outside it (the guard down: a patched call recording an access, a file's) there is nothing to
    lower, and the block runs as it is."""

    __slots__ = ("addr",)

    def __enter__(self) -> None:
        from model_checks.harness.rt.scheduler import UsageError

        state = _thread_state()
        assert state is not None
        self.addr = state + _TRACING
        guard = int_at(self.addr).value
        if guard == 0:
            self.addr = 0
            return
        if guard != 1 or int_at(state + _TRACING_WHAT).value != _PY_TRACE_OPCODE:
            raise UsageError(
                "interleave_races: this interpreter's thread state is not CPython 3.11's layout "
                "(run without interleave_races)"
            )
        int_at(self.addr).value = 0

    def __exit__(self, *exc: object) -> None:
        if self.addr:
            int_at(self.addr).value = 1
