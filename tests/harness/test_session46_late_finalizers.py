"""Session 46: an execution's objects die in that execution, not in the middle of a later one.

Held past an execution's end (by the state search's pickler memo, by the race detector's strong
references, by an aborted thread's ``Abort`` traceback or by an idle greenlet's last body), an
object was freed whenever the collector or the next use got to it: its ``__del__`` then ran in a
later execution's thread, and a program recording where its finalizer ran saw
``['MainThread', 'B']`` (review 13's F1 twins under ``--strategy states``: a false failure, and the
finalizer never ran where it should under the search that kept it)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest

from model_checks.harness.rt.backends import GreenletBackend

pytestmark = pytest.mark.timeout(120)


class _Box:
    pass


def _body_holding(obj: object) -> Callable[[object], object]:
    def body(first: object) -> object:
        return ("done", first, obj is not None)

    return body


def test_an_idle_greenlet_keeps_nothing_of_its_last_body() -> None:
    backend = GreenletBackend()
    held = _Box()
    alive = weakref.ref(held)
    backend.spawn(1, _body_holding(held))
    del held  # (the body's closure is all that holds it now)
    gc.disable()  # (only reference counts: the collector must not be what frees it)
    try:
        assert backend.resume(1, None) == ("done", None, True)
        backend.close()  # the greenlet goes back to the pool, idle, for the next execution
        assert alive() is None, "the idle greenlet kept its last body (and what it closes over)"
    finally:
        gc.enable()
