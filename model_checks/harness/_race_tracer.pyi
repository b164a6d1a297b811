"""Types of the race detector's C tracer (``_race_tracer.c``; ``race_frames.NATIVE``)."""

import types
from collections.abc import Callable, Iterable
from typing import Any

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

def stack_value(frame: types.FrameType, depth: int, /) -> object: ...
def join(into: list[int], other: list[int], /) -> None: ...
def sync_op(
    vc: list[int],
    tid: int,
    objs: Iterable[int],
    read: bool,
    writes: dict[int, list[int]],
    reads: dict[int, list[int]],
    yielded: list[int] | None,
    everything: list[int],
    /,
) -> None: ...
