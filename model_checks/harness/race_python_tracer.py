"""The race detector's trace function in pure Python, where the C one (``_race_tracer.c``) is not
built: the C one's decisions, in Python. A frame is traced only if its code is under test and it
is entered inside a controlled thread's step: the scheduler's own evaluation between steps
(invariants, final checks; ``current`` is None there) is not traced at all, and no access of it
would be recorded anyway."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from model_checks.harness.busy_wait import LONG_RUN
from model_checks.harness.race_sites import code_table

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

Tracer = Callable[[types.FrameType, str, object], Any]


def trace_function(detector: RaceDetector) -> Tracer:
    """The global trace function (``sys.settrace``) of ``detector``'s controlled threads."""
    count = [0]  # opcodes toward ``LONG_RUN``, as the C tracer counts them
    site = detector._site

    def on_call(frame: types.FrameType, event: str, arg: object) -> Tracer | None:
        if event != "call":
            return None
        table = code_table(frame.f_code)
        if table is None or detector.ex.current is None:
            # a resumed generator keeps its earlier trace function: turn its opcodes off
            frame.f_trace_opcodes = False
            return None
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True
        get = table.get

        # bound to this code's table: one dictionary look-up per opcode, by offset
        def local(frame: types.FrameType, event: str, arg: object) -> Tracer:
            if event == "opcode":
                count[0] += 1
                if count[0] >= LONG_RUN:
                    count[0] = 0
                    site(frame, None)
                entry = get(frame.f_lasti)
                if entry is not None:
                    site(frame, entry)
            return local

        return local

    return on_call
