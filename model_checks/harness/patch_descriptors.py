"""The process's descriptor table as the race detector's locations: "descriptor N".

One thread capturing descriptor 2 (``os.dup2(pipe_w, 2)``, as pytest's ``capfd`` and C-output
capture libraries do) and blocked before restoring it, while another writes to descriptor 2: every
real run puts the write into the capture, and the check said "exhaustive" (tenth review, #5): the
table entry ``dup2`` changes was no location and ``dup2`` no operation. Here, in a controlled thread,
``os.dup2(fd, n)`` and ``os.close(n)`` are writes of "descriptor n", made at the program's line that
called them (or called the library that did: pytest's capture), and the program's ``os.read``,
``os.write``, ``os.pread`` and ``os.pwrite`` of ``n`` reads of it (``race_files.by_call``; a
library's, only of a descriptor already written so). A closed descriptor's location is retired,
and so is the one ``open`` gives out (``race_files.opened``): a number given out again is another
entry (no race with the close). Not seen:
``print`` and a stream's writes to the standard streams (C code: kept cheap), ``os.closerange``,
a descriptor closed by its file object or socket.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from model_checks.harness import patch_flock
from model_checks.harness.own_code import own
from model_checks.harness.patch_mock import detector_of_thread, program_frame
from model_checks.harness.race_files import ENTRY, TABLE, descriptor


def _written(fd: object, name: str, closed: bool) -> None:
    caller = sys._getframe(2)
    if not isinstance(fd, int) or own(caller.f_code.co_filename):
        return
    found = detector_of_thread()
    frame = program_frame(caller) if found is not None else None
    if found is not None and frame is not None:
        detector, tid = found
        loc = descriptor(fd, True)
        detector._access(tid, loc, ENTRY, True, frame, f"{name}()")
        if closed:
            del TABLE[fd]  # (a number given out again is another entry)


_real_dup2 = os.dup2
_real_close = os.close


def _dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
    _written(fd2, "os.dup2", False)
    return _real_dup2(fd, fd2, inheritable)


def _close(fd: int) -> None:
    _written(fd, "os.close", True)
    patch_flock.closing(fd)  # a holder's close lets go of its ``flock`` lock
    _real_close(fd)


# (module or class, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (os, "dup2", _real_dup2, _dup2),
    (os, "close", _real_close, _close),
]
