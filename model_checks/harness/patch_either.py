"""A module attribute replaced for controlled threads only (``patch.py``, ``patch_clock.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_threads import _controlled


def either(module: Any, attr: str, controlled: Callable[..., Any]) -> tuple[Any, str, Any, Any]:
    """The replacement of ``module.attr``: inside a controlled thread ``controlled(rt, *args)``,
    anywhere else the real one with the same arguments. As (module, attr, real, replacement)."""
    real = getattr(module, attr)

    def replacement(*args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        return real(*args, **kwargs) if rt is None else controlled(rt, *args, **kwargs)

    replacement.__name__ = replacement.__qualname__ = attr
    return module, attr, real, replacement
