"""Types of the race detector's C tracer (``_race_tracer.c``; ``race_frames.NATIVE``)."""

import types
from collections.abc import Callable
from typing import Any

from model_checks.harness.race_frames import py_join, py_stack_value, py_sync_op

KINDS: tuple[str, ...]

class Tracer:
    def __init__(
        self,
        ex: object,
        table_of: Callable[[types.CodeType], tuple[Any, ...] | None],
        handler: Callable[[types.FrameType, tuple[int, Any]], object],
        code_types: tuple[type, ...],
        containers: tuple[type, ...],
        methods: dict[str, tuple[bool, bool]],
    ) -> None: ...
    def install(self) -> None: ...
    def __call__(self, frame: types.FrameType, event: str, arg: object, /) -> None: ...

# The hot helpers have the types of their Python twins (``race_frames.py_*``, the one source:
# the C tracer must behave identically, positional-only arguments included).
stack_value = py_stack_value
join = py_join
sync_op = py_sync_op
