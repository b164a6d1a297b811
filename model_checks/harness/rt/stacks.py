"""A thread's frames of code under test, for the state fingerprint (``fingerprint.py``): the
frames of its stack but the harness's machinery, and, for the running thread, none of the
search's own (the chooser and whatever it called). ``fingerprint`` reads the same frames through
``thread_frames.py`` (one call a thread, from ``_below_chooser`` or the thread's suspended frame);
``_stack_of`` is the walk of ``walk_fingerprint``, its reference."""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING

from model_checks.harness import own_code
from model_checks.harness.rt import frames, under_test

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

_BACKENDS = own_code.HARNESS + os.path.join("rt", "backends.py")


def ends_walk(code: types.CodeType) -> bool:
    """Is ``code`` the backend's own loop (or an OS thread's bootstrap)? A thread's frames of code
    under test are above it."""
    return code.co_filename == _BACKENDS and code.co_name in ("_loop", "main")


def _below_chooser(ex: Execution) -> types.FrameType | None:
    """The running thread's frame that called into the scheduler: the caller of the chooser's
    ``choose`` (which called whatever computes the fingerprint). Everything above it is the
    search's, not the thread's: a fingerprint function of a test, say, whose globals change."""
    choose = getattr(type(ex.chooser), "choose", None)
    code = getattr(choose, "__code__", None)
    f: types.FrameType | None = sys._getframe(2)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        raise frames.Unreadable(
            "the chooser has no Python frame: the running thread's frames are not told from it"
        )
    return f.f_back


def _stack_of(ex: Execution, tid: int) -> list[types.FrameType]:
    """The thread's frames of code under test, outermost first (empty: not started, or over)."""
    f = _below_chooser(ex) if ex.backend.current() == tid else ex.backend.frame(tid)
    out: list[types.FrameType] = []
    while f is not None:
        code = f.f_code
        if ends_walk(code):
            break
        if not under_test._machinery(code.co_filename):
            out.append(f)
        f = f.f_back
    out.reverse()
    return out


def current_frame(ex: Execution, tid: int) -> types.FrameType | None:
    """The suspended thread's current frame as ``sys._current_frames()`` gives a real thread's: its
    innermost frame of code that is not the harness's own; where there is none (blocked in a
    primitive its ``Thread.run`` called directly), the innermost of the harness's wrappers (that
    ``run``, as CPython's is ``threading``'s); None if it has not begun."""
    f = ex.backend.frame(tid)
    wrapper: types.FrameType | None = None
    while f is not None and not ends_walk(f.f_code):
        name = f.f_code.co_filename
        if not own_code.own(name):
            return f
        if wrapper is None and not under_test._machinery(name):
            wrapper = f
        f = f.f_back
    return wrapper
