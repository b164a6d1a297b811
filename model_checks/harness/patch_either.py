"""A module attribute replaced for controlled threads only (``patch.py``, ``patch_clock.py``), and
the table of a module's functions replaced by fakes that tell controlled threads apart themselves."""

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


def replacing(module: Any, fakes: dict[str, Callable[..., Any]]) -> list[tuple[Any, str, Any, Any]]:
    """(module, name, real, fake) for each function ``name`` of ``fakes`` that ``module`` has on
    this platform, each fake named as CPython's (a thread whose target is one is named after it)."""
    found: list[tuple[Any, str, Any, Any]] = []
    for name, fake in fakes.items():
        fake.__name__ = fake.__qualname__ = name
        real = getattr(module, name, None)
        if real is not None:
            found.append((module, name, real, fake))
    return found
