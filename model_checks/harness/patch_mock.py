"""``unittest.mock``'s patches in a controlled thread as the race detector's writes.

``mock.patch(__name__ + ".fetch", ...)`` entered by one thread (and blocked inside) while another
calls the module's ``fetch()``: every real run may give the other thread the fake, yet the check
said "exhaustive" (tenth review, #7): mock's ``setattr``/``delattr`` on the program's module runs
in the standard library, which is not traced, so the patch was neither an access nor an operation.
Here entering and leaving a patch (``mock.patch``, ``patch.object``, ``patch.multiple``, their
``start``/``stop`` and decorators: each goes through ``_patch.__enter__``/``__exit__``) is a write
of the patched attribute, and ``patch.dict`` a write of the dict whole, made at the program's
line that entered or left it (the nearest frame of code under test), as the program's own store
would be (``race_attributes``: a module's global, a class's data, an object's field; a builtin's
rebinding, ``mock.patch("builtins.open")``, watches its look-ups, ``race_builtins``, and so does
a method's, ``patch.object(Svc, "fetch")``, ``race_methods``).
``sys.stdout`` and ``os.environ`` patched are also operations (``patch_streams``, ``patch_shared``).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from model_checks.harness.own_code import own
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_sites import ALL, under_test


def program_frame(frame: types.FrameType | None) -> types.FrameType | None:
    """The nearest frame of code under test at or above ``frame`` (past mock's, ``contextlib``'s
    and the harness's)."""
    while frame is not None and (own(frame.f_code.co_filename) or not under_test(frame.f_code.co_filename)):
        frame = frame.f_back
    return frame


def detector_of_thread() -> tuple[Any, int] | None:
    """The race detector and the running controlled thread, or None (no detector, or not in one)."""
    rt = _controlled()
    if rt is None or rt._ex.aborting:  # (an execution torn down: its threads unwind, no access)
        return None
    detector: Any = rt._ex.race
    tid = rt._ex.current
    if detector is None or tid is None or not hasattr(detector, "_store_attr"):
        return None
    return detector, tid


def _attribute_written(patching: Any) -> None:
    found = detector_of_thread()
    target, name = getattr(patching, "target", None), getattr(patching, "attribute", None)
    if found is None or target is None or not isinstance(name, str):
        return
    frame = program_frame(sys._getframe(2))
    if frame is not None:
        detector, tid = found
        # (the value the patch replaces or puts back: a method patched has its look-ups read)
        detector._store_attr(tid, target, name, frame, getattr(patching, "temp_original", None))


def _dict_written(patching: Any) -> None:
    found = detector_of_thread()
    in_dict = getattr(patching, "in_dict", None)
    if found is None or not isinstance(in_dict, dict):
        return
    frame = program_frame(sys._getframe(2))
    if frame is not None:
        detector, tid = found
        detector._access(tid, in_dict, ALL, True, frame, "")


def _entering(real: Callable[..., Any]) -> Callable[..., Any]:
    def __enter__(self: Any) -> Any:
        result = real(self)
        _attribute_written(self)
        return result

    return __enter__


def _leaving(real: Callable[..., Any]) -> Callable[..., Any]:
    def __exit__(self: Any, *exc_info: Any) -> Any:
        _attribute_written(self)  # (before: mock's ``__exit__`` forgets its target)
        return real(self, *exc_info)

    return __exit__


def _dict_patching(real: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Any) -> Any:
        result = real(self)  # (``patch.dict("pkg.mod.CONFIG")`` resolves its name here)
        _dict_written(self)
        return result

    method.__name__ = real.__name__
    return method


def at_patching() -> list[tuple[Any, str, Any, Any]]:
    """The patches' entry and exit, where ``unittest.mock`` is imported (a program or a test
    runner's plugin imports it before the check starts)."""
    mock = sys.modules.get("unittest.mock")
    if mock is None:
        return []
    patch, patch_dict = mock._patch, mock._patch_dict
    return [
        (patch, "__enter__", patch.__enter__, _entering(patch.__enter__)),
        (patch, "__exit__", patch.__exit__, _leaving(patch.__exit__)),
        (patch_dict, "_patch_dict", patch_dict._patch_dict, _dict_patching(patch_dict._patch_dict)),
        (patch_dict, "_unpatch_dict", patch_dict._unpatch_dict, _dict_patching(patch_dict._unpatch_dict)),
    ]
