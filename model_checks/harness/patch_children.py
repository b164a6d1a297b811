"""A child process's pipes in ``Popen.communicate``: the child's timing, no operation.

``communicate`` with two pipes (``subprocess.run(..., capture_output=True)``) loops on a selector
over the child's stdout and stderr, and reads each with ``os.read`` as the selector finds it
ready: how many reads it makes is how the child's output and its two ends of file came in, real
timing. ``patch_io``'s ``os.read`` is an operation (the process's I/O), so the same schedule
replayed met another number of steps, and a correct program (two threads each running a child
that prints an environment variable the thread set: twelfth review, c03) stopped with "the test
is not deterministic". The selector's wait on such pipes was already made with no operation
(``patch_io_selectors``: a pipe only another process can make ready); here the reads and writes
of them are too. In a controlled thread, ``Popen._communicate`` is CPython's own code run with an
``os`` whose ``read`` and ``write`` of a pipe whose other end no descriptor of this process holds
(``patch_io_outside.outside``: the child's) are the real calls. What reaches the program is the
same: the output, once the child has ended its pipes. A pipe this process holds both ends of
(a program's own) keeps ``patch_io``'s operations and waits. Outside a controlled thread, it is
CPython's ``_communicate``.
"""

from __future__ import annotations

import os
import subprocess
import types
from typing import Any

from model_checks.harness import patch_io, patch_io_outside
from model_checks.harness.patch_threads import _controlled


class _ChildsOs:
    """``os`` as ``_communicate`` names it: the child's pipes read and written as they come."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)  # (read at each call: the patched one while patched)

    @staticmethod
    def read(fd: int, n: int) -> bytes:
        if patch_io_outside.outside([(fd, "r")]):
            return patch_io._real_read(fd, n)
        return os.read(fd, n)

    @staticmethod
    def write(fd: int, data: Any) -> int:
        if patch_io_outside.outside([(fd, "w")]):
            return patch_io._real_write(fd, data)
        return os.write(fd, data)


_CHILDS_OS = _ChildsOs()
_real_communicate = subprocess.Popen._communicate  # type: ignore[attr-defined]


def _communicate(self: Any, input: Any, endtime: Any, orig_timeout: Any) -> Any:
    if _controlled() is None:
        return _real_communicate(self, input, endtime, orig_timeout)
    # CPython's code with its module's globals as they are now, but ``os``
    real = _real_communicate
    names = {**vars(subprocess), "os": _CHILDS_OS}
    run = types.FunctionType(real.__code__, names, real.__name__, real.__defaults__, real.__closure__)
    return run(self, input, endtime, orig_timeout)


# (class, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (subprocess.Popen, "_communicate", _real_communicate, _communicate)
]
