"""``recv(n, MSG_WAITALL)`` of a socket of this machine in a controlled thread, in pieces.

``patch_io`` waits until a socket is readable, then makes the real call; with ``MSG_WAITALL`` the
kernel then blocks until all ``n`` bytes are there, so a socket readable with fewer bytes blocked
the one OS thread the controlled threads share, and the thread that would send the rest never ran
(review 8, r021: no verdict). Here the call is a series of reads without waiting
(``MSG_DONTWAIT``), each after a controlled wait until the socket is readable, until ``n`` bytes
have come or the other end is closed: what the caller gets is what ``MSG_WAITALL`` gives it.
"""

from __future__ import annotations

import _socket
import socket
from collections.abc import Callable
from typing import Any, Final

from model_checks.harness.rt.scheduler import UsageError

_WAITALL: Final = getattr(socket, "MSG_WAITALL", 0)
_DONTWAIT: Final = getattr(socket, "MSG_DONTWAIT", 0)


def wait_all(
    sock: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], wait: Callable[[], bool]
) -> Any:
    """``sock.<name>(*args, **kwargs)`` with ``MSG_WAITALL``: ``wait()`` blocks the controlled
    thread until the socket is readable (False: its timeout passed)."""
    if not _DONTWAIT or name not in ("recv", "recv_into"):
        raise UsageError(
            f"socket.{name} with MSG_WAITALL in a controlled thread: modelled for recv and recv_into"
            " only (the real call would block the check until every byte came)"
        )
    if name == "recv":
        size, flags = _arguments(args, kwargs, ("bufsize", "flags"), (None, 0))
        out = bytearray(size)
        got = _fill(sock, memoryview(out), size, flags, wait)
        return bytes(out[:got])
    buffer, nbytes, flags = _arguments(args, kwargs, ("buffer", "nbytes", "flags"), (None, 0, 0))
    view = memoryview(buffer).cast("B")
    return _fill(sock, view, nbytes or len(view), flags, wait)


def _arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...], defaults: tuple[Any, ...]
) -> list[Any]:
    return [
        args[i] if i < len(args) else kwargs.get(n, d)
        for i, (n, d) in enumerate(zip(names, defaults, strict=True))
    ]


def _fill(sock: Any, view: memoryview, size: int, flags: int, wait: Callable[[], bool]) -> int:
    """Read into ``view[:size]`` until it is full or the other end closes; the count read."""
    if size < 0 or size > len(view):
        raise ValueError(
            "buffer too small for requested bytes" if size > 0 else "negative buffersize in recv"
        )
    got = 0
    while got < size:
        if not wait():
            raise TimeoutError("timed out")
        try:
            n = _socket.socket.recv_into(sock, view[got:size], size - got, (flags & ~_WAITALL) | _DONTWAIT)
        except BlockingIOError:
            continue
        if n == 0:
            break  # (the other end closed: MSG_WAITALL returns what came)
        got += n
    return got
