"""What a patch module keeps for the running execution only: made at its first use in an
execution, and made anew in the next (an execution's objects are its own). Among it, the
locations of the process's state that a controlled thread's access is an operation on (the
working directory, the umask, ``sys.stdout``...: ``patch_shared``, ``patch_streams``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from model_checks.harness.rt.objects import LocationState, Op
from model_checks.harness.runtime import ControlledRuntime


class _OfAnExecution(Protocol):
    @property
    def ex(self) -> Any: ...


Kept = TypeVar("Kept", bound=_OfAnExecution)


def per_execution(make: Callable[[ControlledRuntime], Kept]) -> Callable[[ControlledRuntime], Kept]:
    """The running execution's ``make(rt)``, made at the first call in each execution."""
    kept: list[Kept | None] = [None]

    def current(rt: ControlledRuntime) -> Kept:
        found = kept[0]
        if found is None or found.ex is not rt._ex:
            found = kept[0] = make(rt)
        return found

    return current


class _Locations:
    """One execution's locations of the process's state, by name."""

    def __init__(self, ex: Any) -> None:
        self.ex = ex
        self.of: dict[str, LocationState] = {}


_CURRENT: list[_Locations | None] = [None]


def access(rt: ControlledRuntime, name: str, kind: str) -> None:
    """``rt``'s running thread reads or writes (``kind``) the process's ``name``: an operation on
    its location, made at the execution's first access of it."""
    # (``per_execution`` and a method inlined: one call between the patched function and the step)
    ex = rt._ex
    here = _CURRENT[0]
    if here is None or here.ex is not ex:
        here = _CURRENT[0] = _Locations(ex)
    found = here.of.get(name)
    if found is None:
        made = ex.new_object(lambda oid: LocationState(oid, name))
        assert isinstance(made, LocationState)
        found = here.of[name] = made
    ex.perform(Op(kind, found, read=kind == "read"))


def location_of(rt: ControlledRuntime, name: str) -> LocationState:
    """The running execution's location of the process's ``name``, made by an ``access`` of it."""
    here = _CURRENT[0]
    assert here is not None and here.ex is rt._ex, name
    return here.of[name]
