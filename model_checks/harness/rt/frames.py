"""What a suspended Python frame holds: its fast locals and its value stack (CPython 3.11).

State-hash pruning (``rt/fingerprint.py``) must see everything a thread's future depends on.
``frame.f_locals`` misses the value stack: a ``for`` loop's iterator, a ``with`` block's exit
function, the callable and arguments of the call in progress live only there. So both are read
from the interpreter frame itself (``Include/internal/pycore_frame.h``): ``localsplus`` holds the
fast locals, cells and free variables, then the stack.

The stack depth: CPython 3.11 stores it (``stacktop``) only while a frame is suspended in an
inlined Python call; while the frame runs, or calls C code (the compiled harness core, a builtin),
``stacktop`` is -1. Then the depth before the instruction at ``f_lasti`` is computed from the
bytecode (``stack_depths``: a flow analysis with ``dis.stack_effect`` and the exception table).
While a C call runs its callable and arguments are still on the caller's stack, so the depth
*before* the call instruction is exactly what is live.

``readable()`` is False off 3.11 (another layout): the fingerprint then refuses every state
(no pruning), never guesses.
"""

from __future__ import annotations

import ctypes
import dis
import itertools
import sys
import types
from collections.abc import Callable

# The layout (offsets in bytes), read here and by the race detector (``race_frames.py``).
F_FRAME = 24  # PyFrameObject.f_frame
STACKTOP = 64  # _PyInterpreterFrame.stacktop
LOCALSPLUS = 72  # _PyInterpreterFrame.localsplus
pointer_at = ctypes.c_void_p.from_address
int_at = ctypes.c_int.from_address
object_at = ctypes.py_object.from_address

# instructions after which control never falls through to the next one
_NO_FALLTHROUGH = frozenset(
    dis.opmap[name]
    for name in (
        "RETURN_VALUE",
        "RAISE_VARARGS",
        "RERAISE",
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
    )
    if name in dis.opmap
)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_PRECALL = dis.opmap.get("PRECALL", -1)
_CALL = dis.opmap.get("CALL", -1)
_RETURN_GENERATOR = dis.opmap.get("RETURN_GENERATOR", -1)
_DEPTHS: dict[types.CodeType, dict[int, int]] = {}


class Unreadable(Exception):
    """The frame's state cannot be read soundly (an unexpected layout or bytecode)."""


def readable() -> bool:
    return sys.version_info[:2] == (3, 11)


def _nlocalsplus(code: types.CodeType) -> int:
    known = _NLOCALSPLUS.get(code)
    if known is None:
        # 3.11 merges an argument that is also a cell into one slot
        cells = [c for c in code.co_cellvars if c not in code.co_varnames]
        known = _NLOCALSPLUS[code] = len(code.co_varnames) + len(cells) + len(code.co_freevars)
    return known


_NLOCALSPLUS: dict[types.CodeType, int] = {}


def _effect(ins: dis.Instruction, jump: bool) -> int:
    # 3.11's ``stack_effect`` books a call's pops on PRECALL (the compiler's accounting); at run
    # time PRECALL leaves the stack alone and CALL pops the callable, its self slot and the
    # arguments: the stack during the call is the one before CALL
    if ins.opcode == _PRECALL:
        return 0
    if ins.opcode == _CALL:
        return -(int(ins.arg or 0) + 1)
    if ins.opcode == _RETURN_GENERATOR:  # the generator's frame resumes with the sent value
        return 1
    arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(ins.opcode, arg, jump=jump)


def stack_depths(code: types.CodeType) -> dict[int, int]:
    """The value-stack depth before each reachable instruction of ``code`` (by offset)."""
    known = _DEPTHS.get(code)
    if known is not None:
        return known
    instrs = list(dis.get_instructions(code))
    at = {ins.offset: n for n, ins in enumerate(instrs)}
    depth: dict[int, int] = {}
    todo: list[tuple[int, int]] = [(0, 0)]
    # a handler starts with the entry's depth, the offset of the raising instruction if
    # ``lasti``, and the exception
    handlers = [
        (e.start, e.end, e.target, e.depth + (1 if e.lasti else 0) + 1)
        for e in dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]
    ]
    while todo:
        offset, d = todo.pop()
        seen = depth.get(offset)
        if seen is not None:
            if seen != d:
                raise Unreadable(f"{code.co_qualname}: stack depth {seen} and {d} at offset {offset}")
            continue
        if offset not in at or d < 0:
            raise Unreadable(f"{code.co_qualname}: bad flow at offset {offset}")
        depth[offset] = d
        ins = instrs[at[offset]]
        for start, end, target, hd in handlers:
            if start <= offset < end:
                todo.append((target, hd))
        if ins.opcode in _JUMPS:
            todo.append((int(ins.argval), d + _effect(ins, jump=True)))
        if ins.opcode not in _NO_FALLTHROUGH and at[offset] + 1 < len(instrs):
            todo.append((instrs[at[offset] + 1].offset, d + _effect(ins, jump=False)))
    _DEPTHS[code] = depth
    return depth


_POSITIONS: dict[types.CodeType, dict[int, int]] = {}


def position(frame: types.FrameType) -> int:
    """The frame's instruction offset, one per program point: a call suspended in ``PRECALL``
    is named by its ``CALL``. (3.11 specialises a warm ``PRECALL`` to make a C call itself,
    so the same suspended call shows ``f_lasti`` at ``PRECALL`` once warm and at ``CALL`` before:
    one state with two names, which only cost pruning.)"""
    lasti = frame.f_lasti
    return position_table(frame.f_code).get(lasti, lasti)


def position_table(code: types.CodeType) -> dict[int, int]:
    """``position``'s renaming for ``code``: the offset of each ``PRECALL`` followed by its ``CALL``
    -> the ``CALL``'s."""
    table = _POSITIONS.get(code)
    if table is None:
        instrs = list(dis.get_instructions(code))
        table = _POSITIONS[code] = {
            ins.offset: nxt.offset
            for ins, nxt in itertools.pairwise(instrs)
            if ins.opcode == _PRECALL and nxt.opcode == _CALL
        }
    return table


class _Null:
    def __repr__(self) -> str:
        return "<NULL>"


_NULL = _Null()


def contents(frame: types.FrameType) -> tuple[list[object], list[object]]:
    """(fast locals with cells and free variables, value stack bottom first) of a *suspended*
    frame; an empty slot is ``NULL``."""
    return _contents(frame, stack_depths)


def contents_at(frame: types.FrameType, depths: dict[int, int] | None) -> tuple[list[object], list[object]]:
    """``contents``, the stack depths of the frame's code given (``stack_depths``'s; None where
    they could not be computed: a frame that recorded no depth is then unreadable)."""
    return _contents(frame, lambda code: {} if depths is None else depths)


def _contents(
    frame: types.FrameType, depths_of: Callable[[types.CodeType], dict[int, int]]
) -> tuple[list[object], list[object]]:
    code = frame.f_code
    base = pointer_at(id(frame) + F_FRAME).value
    if base is None:
        raise Unreadable("a frame with no interpreter frame")
    n = _nlocalsplus(code)
    top = int_at(base + STACKTOP).value
    if top >= 0:
        depth = top - n
    else:
        depth_at = depths_of(code).get(frame.f_lasti)
        if depth_at is None:
            raise Unreadable(f"{code.co_qualname}: no stack depth at offset {frame.f_lasti}")
        depth = depth_at
    if depth < 0 or depth > code.co_stacksize:
        raise Unreadable(f"{code.co_qualname}: stack depth {depth} out of range")
    m = n + depth
    # one read of the slots' pointers, then the objects of the non-empty ones
    pointers = memoryview(ctypes.string_at(base + LOCALSPLUS, 8 * m)).cast("Q")
    objects = (ctypes.py_object * m).from_address(base + LOCALSPLUS)
    slots: list[object] = [objects[k] if p else _NULL for k, p in enumerate(pointers)]
    return slots[:n], slots[n:]


NULL = _NULL

# frame_contents(frame, depth, null) of the C tracer (``_race_tracer.c``): (locals, stack), or None
# with depth -1 where the frame recorded no depth
NativeRead = Callable[[types.FrameType, int, object], "tuple[list[object], list[object]] | None"]


def native_contents(read: NativeRead) -> Callable[[types.FrameType], tuple[list[object], list[object]]]:
    """``contents`` by one C call a frame (``read``) instead of a ctypes read a slot."""

    def contents_in_c(frame: types.FrameType) -> tuple[list[object], list[object]]:
        try:
            got = read(frame, -1, _NULL)
            if got is None:  # a running frame, or one calling C code: the depth from the bytecode
                code = frame.f_code
                depth = stack_depths(code).get(frame.f_lasti)
                if depth is None:
                    raise Unreadable(f"{code.co_qualname}: no stack depth at offset {frame.f_lasti}")
                got = read(frame, depth, _NULL)
        except ValueError as problem:
            raise Unreadable(str(problem)) from None
        assert got is not None
        return got

    return contents_in_c
