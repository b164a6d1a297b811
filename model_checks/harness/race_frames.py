"""The CPython 3.11 internals the race detector (``races.py``) reads and writes: the value stack
of a traced frame (``stack_value``) and the thread state's tracing guard (``Untraced``)."""

from __future__ import annotations

import ctypes
import sys
import types

from model_checks.harness.rt.frames import F_FRAME, LOCALSPLUS, STACKTOP, int_at, object_at, pointer_at

if sys.version_info[:2] != (3, 11):  # pragma: no cover - the stack layout below is 3.11's
    SUPPORTED = False
else:
    SUPPORTED = True


def stack_value(frame: types.FrameType, depth: int) -> object:
    """The value ``depth`` entries below the top of ``frame``'s value stack (1 = top); None for
    a NULL slot. The stack pointer (``stacktop``) is there to read: the interpreter stores it
    before it calls the tracer (``_PyFrame_SetStackPointer`` in ``DO_TRACING``)."""
    base = pointer_at(id(frame) + F_FRAME).value
    assert base is not None
    addr = base + LOCALSPLUS + 8 * (int_at(base + STACKTOP).value - depth)
    if not pointer_at(addr).value:
        return None
    return object_at(addr).value


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
    run meanwhile) and restore it after; refuses a thread state that does not look like 3.11's."""

    __slots__ = ("addr",)

    def __enter__(self) -> None:
        from model_checks.harness.rt.scheduler import UsageError

        state = _thread_state()
        assert state is not None
        self.addr = state + _TRACING
        if int_at(self.addr).value != 1 or int_at(state + _TRACING_WHAT).value != _PY_TRACE_OPCODE:
            raise UsageError(
                "interleave_races: this interpreter's thread state is not CPython 3.11's layout "
                "(run without interleave_races)"
            )
        int_at(self.addr).value = 0

    def __exit__(self, *exc: object) -> None:
        int_at(self.addr).value = 1
