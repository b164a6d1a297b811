"""A thread's frames as the state fingerprint reads them (``fingerprint.py``), one table entry per
code object.

``stacks._stack_of`` then ``frames.contents`` and ``frames.position`` for each frame ask, of every
frame of every thread at each state, the same questions about its code: is it the harness's
machinery (skipped), the backend's loop (the walk ends), code whose module data is state? where
does a suspended call stand, how deep is the stack? Profiled on ``work-lane/stop-drain-races-posts``
(session 20) that walk was about a third of a fingerprint. Here the answers are computed once per
code object (``entry``) and the walk reads the table: in C where ``rt/native.py`` says the module
is built (``_race_tracer.thread_frames``), else ``thread_frames_in_python``, which does exactly
what the C function does. Both give what ``_stack_of`` and ``frames.contents`` give (tested).
"""

from __future__ import annotations

import types
from collections.abc import Callable

from model_checks.harness.rt import frames, stacks, under_test
from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.object_kinds import _atom

# The kinds of an entry (``_race_tracer.FRAME_KINDS`` names the same numbers; a test compares).
SKIP, STOP, READ, READ_GLOBALS = range(4)

# (kind, the code's atom, positions (``frames.position``'s table) or None, stack depths or None)
Entry = tuple[int, int, "dict[int, int] | None", "dict[int, int] | None"]
# (each frame's (atom, position, fast locals, value stack); the globals of the frames of code
# whose module data is state), outermost first
Frames = tuple[list[tuple[int, int, list[object], list[object]]], list[dict[str, object]]]

# per code object: its entry. Emptied with the other per-code tables when what is machinery
# changes (``fingerprint._forget_if_machinery_changed``).
TABLE: dict[types.CodeType, Entry] = {}


def entry(code: types.CodeType) -> Entry:
    """What the walk needs to know of ``code``'s frames (``_stack_of``'s and ``fingerprint``'s
    questions, answered once)."""
    if stacks.ends_walk(code):
        return (STOP, 0, None, None)
    if under_test._machinery(code.co_filename):
        return (SKIP, 0, None, None)
    kind = READ_GLOBALS if under_test._program_file(code.co_filename) else READ
    try:
        depths: dict[int, int] | None = frames.stack_depths(code)
    except frames.Unreadable:
        depths = None  # a frame of it is refused only where its depth is needed (it is running)
    return (kind, _atom(code), frames.position_table(code) or None, depths)


def thread_frames_in_python(
    frame: types.FrameType | None, table: dict[types.CodeType, Entry], null: object
) -> Frames | types.CodeType:
    """The thread's frames from ``frame`` outwards as the fingerprint reads them, or the first
    code object ``table`` has no entry for (the caller enters it and calls again)."""
    parts: list[tuple[int, int, list[object], list[object]]] = []
    module_data: list[dict[str, object]] = []
    f = frame
    while f is not None:
        code = f.f_code
        e = table.get(code)
        if e is None:
            return code
        kind, atom, positions, depths = e
        if kind == STOP:
            break
        if kind in (READ, READ_GLOBALS):
            lasti = f.f_lasti
            local, stack = frames.contents_at(f, depths)
            parts.append((atom, lasti if positions is None else positions.get(lasti, lasti), local, stack))
            if kind == READ_GLOBALS:
                module_data.append(f.f_globals)
        f = f.f_back
    parts.reverse()
    module_data.reverse()
    return parts, module_data


_walk: Callable[[types.FrameType | None, dict[types.CodeType, Entry], object], Frames | types.CodeType] = (
    thread_frames_in_python if NATIVE is None else NATIVE.thread_frames
)


def thread_frames(frame: types.FrameType | None) -> Frames:
    """The parts of a thread's frames from ``frame`` outwards (``frames.Unreadable`` where one
    cannot be read)."""
    while True:
        try:
            got = _walk(frame, TABLE, frames.NULL)
        except ValueError as problem:
            raise frames.Unreadable(str(problem)) from None
        if not isinstance(got, types.CodeType):
            return got
        TABLE[got] = entry(got)
