"""``signal`` in patch mode. On the greenlet back end every controlled thread runs on the process's
main OS thread, so CPython's own checks see the main thread everywhere: ``signal.signal`` in a
worker, which CPython refuses (``ValueError``), went through, and a program that fails on every
real run was proved. And a controlled thread's ident (``get_ident``) is the explorer's, no OS
thread's: ``signal.pthread_kill`` given one sent the signal to whatever thread the C library took
it for (a crash, seventh review). Outside a controlled thread both are CPython's."""

from __future__ import annotations

import signal
from typing import Any

from model_checks.harness.patch_threads import IDENT_BASE, _controlled
from model_checks.harness.rt.scheduler import UsageError

_real_signal = signal.signal
_real_pthread_kill = getattr(signal, "pthread_kill", None)


def _signal(signalnum: Any, handler: Any) -> Any:
    rt = _controlled()
    if rt is not None and rt._ex.running_thread() not in (None, 0):
        raise ValueError("signal only works in main thread of the main interpreter")
    return _real_signal(signalnum, handler)


def _pthread_kill(thread_id: int, signalnum: int) -> None:
    if _controlled() is not None and thread_id >= IDENT_BASE:
        raise UsageError(
            f"signal.pthread_kill({thread_id}, ...) names a controlled thread: its ident is the "
            "explorer's, no OS thread's, so no signal can reach it (send signals from outside "
            "the explored code)"
        )
    assert _real_pthread_kill is not None
    _real_pthread_kill(thread_id, signalnum)


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [(signal, "signal", _real_signal, _signal)]
if _real_pthread_kill is not None:
    REPLACEMENTS.append((signal, "pthread_kill", _real_pthread_kill, _pthread_kill))
