"""Types of the C helpers (``_race_tracer.c``, ``_fingerprint_hot.c``; ``rt/native.NATIVE``)."""

import types
from collections.abc import Callable
from typing import Any

from model_checks.harness.race_frames import py_fast_local, py_join, py_stack_value, py_sync_op

KINDS: tuple[str, ...]

class Tracer:
    def __init__(
        self,
        ex: object,
        table_of: Callable[[types.CodeType], tuple[Any, ...] | None],
        handler: Callable[[types.FrameType, tuple[int, Any] | None], object],
        code_types: tuple[type, ...],
        containers: tuple[type, ...],
        methods: dict[str, tuple[bool, bool]],
        named_calls: dict[object, object],
        clocks: list[list[int]],
        subscripted: dict[type, bool],
    ) -> None: ...
    def install(self) -> None: ...
    def own_loops(
        self, shadow: dict[Any, Any], keys: dict[int, list[object]], whole: object, points: set[Any] | None, /
    ) -> None: ...
    def __call__(self, frame: types.FrameType, event: str, arg: object, /) -> None: ...

# The hot helpers have the types of their Python twins (``race_frames.py_*``, the one source:
# the C tracer must behave identically, positional-only arguments included).
stack_value = py_stack_value
fast_local = py_fast_local
join = py_join
sync_op = py_sync_op

# The state fingerprint's frame reader (``rt/frames.native_contents``) and hot paths
# (``_fingerprint_hot.c``: ``rt/encoder.py``, ``rt/seeds.py``, ``rt/dict_versions.py``).
def frame_contents(
    frame: types.FrameType, depth: int, null: object, /
) -> tuple[list[object], list[object]] | None: ...

FRAME_KINDS: tuple[str, ...]

def thread_frames(
    frame: types.FrameType | None, table: dict[types.CodeType, Any], null: object, /
) -> tuple[list[tuple[int, int, list[object], list[object]]], list[dict[str, object]]] | types.CodeType: ...

class FieldReader:
    def __init__(self, type: type, names: tuple[str, ...]) -> None: ...
    def __call__(self, obj: object, /) -> Any: ...

REDUCER_KINDS: tuple[str, ...]

class Reducer:
    def __init__(
        self,
        table: dict[type, tuple[Any, ...]],
        pre: set[int] | None,
        fallback: Callable[[object], Any],
        tag: object,
    ) -> None: ...
    def __call__(self, obj: object, /) -> Any: ...

def same_readings(
    getters: list[Any], checked: list[object], flat: list[object], function_getter: object, /
) -> bool: ...
def same_versions(objects: list[Any], versions: list[int], /) -> bool: ...
def same_items(sequences: list[Any], lengths: list[int], items: list[object], /) -> bool: ...
def read_classes(on: bool, /) -> None: ...

WATCHED_BUILTINS: set[str]
