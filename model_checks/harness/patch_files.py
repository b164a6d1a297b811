"""The files and folders an execution made, removed when the next execution begins: every
execution starts from the file system the program's import left, as each of its module's globals
does (``patch_state``), and as each real run of the program would.

An outside review (session 40's eighth, r047) saw a correct program whose workers each create a
file named by ``uuid.uuid4()`` with ``open(path, "x")`` fail with ``FileExistsError`` in the
second execution: the OS's entropy is the same in every execution with the same schedule
(``patch_random``: a search that re-runs a prefix must draw what it drew), so the second
execution named the file the first had left. Drawing other values in each execution cannot be
sound (a program whose lock order follows a bit of ``uuid4`` would not re-run the prefix DPOR
asks for; and a draw whose causal past two executions share must draw one value, or the orders
DPOR takes as equivalent would differ), so the files go instead.

Made, and removed: a file that did not exist before a controlled thread's ``open`` (mode ``w``,
``x`` or ``a``) or ``os.open`` with ``O_CREAT`` created it, and a folder ``os.mkdir`` made,
each only if it is still the same one (device and inode) and, for a folder, empty. The last
execution's stay, as a real run's would. Not covered: files made by another process or a C
library (``sqlite3``), a ``dir_fd``-relative path, ``io.open`` or ``pathlib``'s
``open``/``write_text`` (which bypass ``builtins.open``), ``os.rename`` onto a new name; a file
the program changed but did not create keeps its last content (docs/harness.md).
"""

from __future__ import annotations

import os
from typing import Any

from model_checks.harness.patch_threads import _controlled

# (absolute path, device, inode, folder?) made since the current execution began, in order
_MADE: list[tuple[str, int, int, bool]] = []
_real_mkdir = os.mkdir


def start_execution() -> None:
    """An execution begins: remove what the previous one made (last made, first removed)."""
    while _MADE:
        path, dev, ino, folder = _MADE.pop()
        try:
            found = os.lstat(path)
            if (found.st_dev, found.st_ino) != (dev, ino):
                continue  # another file by now: not the execution's
            if folder:
                os.rmdir(path)  # only if empty (a file not the execution's keeps it)
            else:
                os.unlink(path)
        except OSError:
            continue


def would_make(path: Any, creates: bool) -> str | None:
    """The absolute path that a controlled thread's open of ``path`` would create, or None."""
    if not creates or _controlled() is None or not isinstance(path, (str, bytes, os.PathLike)):
        return None
    name = os.path.abspath(os.fsdecode(path))
    return None if os.path.lexists(name) else name


def made(name: str | None, fd: int) -> None:
    """``name`` (``would_make``'s) was created, open as ``fd``."""
    if name is not None:
        found = os.fstat(fd)
        _MADE.append((name, found.st_dev, found.st_ino, False))


def _mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
    name = would_make(path, dir_fd is None)
    _real_mkdir(path, mode, dir_fd=dir_fd)
    if name is not None:
        found = os.lstat(name)
        _MADE.append((name, found.st_dev, found.st_ino, True))


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [(os, "mkdir", _real_mkdir, _mkdir)]
