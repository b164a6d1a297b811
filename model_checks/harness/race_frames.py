"""The CPython 3.11 internals the race detector (``races.py``) reads and writes: the value stack
of a traced frame (``stack_value``) and the thread state's tracing guard (``Untraced``)."""

from __future__ import annotations

import ctypes
import sys
import types

if sys.version_info[:2] != (3, 11):  # pragma: no cover - the stack layout below is 3.11's
    SUPPORTED = False
else:
    SUPPORTED = True

# CPython 3.11 frame layout (Include/internal/pycore_frame.h): PyFrameObject.f_frame points to the
# _PyInterpreterFrame, whose ``stacktop`` indexes ``localsplus``; the interpreter stores the stack
# pointer there before it calls the tracer (``_PyFrame_SetStackPointer`` in ``DO_TRACING``).
_F_FRAME = 24
_STACKTOP = 64
_LOCALSPLUS = 72
_ptr = ctypes.c_void_p.from_address
_int = ctypes.c_int.from_address
_obj = ctypes.py_object.from_address


def stack_value(frame: types.FrameType, depth: int) -> object:
    """The value ``depth`` entries below the top of ``frame``'s value stack (1 = top); None for
    a NULL slot."""
    base = _ptr(id(frame) + _F_FRAME).value
    assert base is not None
    addr = base + _LOCALSPLUS + 8 * (_int(base + _STACKTOP).value - depth)
    if not _ptr(addr).value:
        return None
    return _obj(addr).value


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
        if _int(self.addr).value != 1 or _int(state + _TRACING_WHAT).value != _PY_TRACE_OPCODE:
            raise UsageError(
                "interleave_races: this interpreter's thread state is not CPython 3.11's layout "
                "(run without interleave_races)"
            )
        _int(self.addr).value = 0

    def __exit__(self, *exc: object) -> None:
        _int(self.addr).value = 1
