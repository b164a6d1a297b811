"""A look at a regular file's size or times (``os.stat``, ``os.path.getsize``, ``Path.stat``, ...)
as a read of the file (``race_files``: one location per device and inode).

Twelfth outside review, r03: thread A creates ``P`` with ``open(P, "x")`` and writes it after a
wait; thread B checks ``os.path.getsize(P)`` and acts on it. B's ``stat`` was no access, so
nothing ordered it against A's write, and DPOR (and the state search) ran it after the write only:
"exhaustive", with the size 0 never seen. Now, in a controlled thread, ``os.stat``, ``os.lstat``
and ``os.fstat`` of a regular file called by code under test, or by ``os.path.getsize``,
``getmtime``, ``getatime``, ``getctime`` or ``Path.stat``/``Path.lstat`` called by code under
test, read the file's contents at the program's line: a write of the file (a file object's
``write``/``close``, ``open(P, "w")``, ``os.write``) not ordered with it is a data race on the
file, as a ``read()`` of it would be; so does the ``stat()`` of an entry ``os.scandir`` hands
to code under test (its entries are ours, seen as ``os.DirEntry``). A look at a name only
(``os.path.exists``, ``isfile``, ``isdir``, ``Path.exists``, ``os.access``, ``os.listdir``,
``os.scandir``'s names: their answer does not follow the file's contents) reads no contents: a
name made, removed or renamed is a change of process-wide state (``process_watch``: ``open`` of a
new name, ``os.remove``, ``os.rename``, ``os.mkdir``...), a step DPOR and the state search order
against every other thread's step, so the look is explored on both sides of it. Not seen: a
library's own ``stat`` of a file (``shutil``'s, ``logging.WatchedFileHandler``'s, an entry of
``os.walk``'s).
"""

from __future__ import annotations

import genericpath
import os
import pathlib
import sys
import types
from typing import Any

from model_checks.harness import race_files
from model_checks.harness.own_code import own
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_sites import under_test

# the library functions that hand their caller a file's size or times (their ``os.stat``: the
# caller's), by the name a report gives the access
READERS: dict[types.CodeType, str] = {
    **{
        getattr(genericpath, name).__code__: f"os.path.{name}"
        for name in ("getsize", "getmtime", "getatime", "getctime")
    },
    pathlib.Path.stat.__code__: "Path.stat",
    pathlib.Path.lstat.__code__: "Path.lstat",
}


def _looked(found: os.stat_result, path: object, name: str) -> None:
    """``os.<name>`` returned ``found`` to the wrapper's caller: a read of the regular file, at the
    program's line, where the program asked for it (directly, or through one of ``READERS``)."""
    frame: types.FrameType | None = sys._getframe(2)
    if frame is None or own(frame.f_code.co_filename):
        return  # (the harness's own look: ``race_files.location``'s ``fstat``)
    if not under_test(frame.f_code.co_filename):
        if frame.f_code not in READERS:
            return  # a library's look (``exists``, ``shutil``'s): no size the program sees
        name = READERS[frame.f_code]
        frame = frame.f_back
        while frame is not None and frame.f_code in READERS:  # (``Path.lstat`` calls ``Path.stat``)
            frame = frame.f_back
        if frame is None or not under_test(frame.f_code.co_filename):
            return
    found_caller = race_files._caller(_controlled(), frame)
    if found_caller is None:
        return
    detector, tid, at, _library = found_caller
    loc = race_files._located(found, path)
    if loc is not None:
        detector._access(tid, loc, race_files.CONTENTS, False, at, f"{name}()")


def _reading(real: Any) -> Any:
    name = f"os.{real.__name__}"

    def look(path: Any, *args: Any, **kwargs: Any) -> Any:
        found = real(path, *args, **kwargs)
        if _controlled() is not None:
            _looked(found, path, name)
        return found

    look.__name__ = look.__qualname__ = real.__name__
    look.__doc__ = real.__doc__
    return look


class _Entry:
    """An entry of ``os.scandir`` called by code under test: the entry itself (``isinstance`` sees
    an ``os.DirEntry``), whose ``stat()`` reads the file, as ``os.stat`` would."""

    __slots__ = ("_entry",)

    def __init__(self, entry: os.DirEntry[Any]) -> None:
        self._entry = entry

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return os.DirEntry

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        found = self._entry.stat(follow_symlinks=follow_symlinks)
        if _controlled() is not None:
            _looked(found, self._entry.path, "DirEntry.stat")
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._entry, name)

    def __fspath__(self) -> Any:
        return self._entry.__fspath__()

    def __repr__(self) -> str:
        return repr(self._entry)


class _Entries:
    """``os.scandir``'s iterator, handing out ``_Entry``s."""

    __slots__ = ("_it",)

    def __init__(self, it: Any) -> None:
        self._it = it

    def __iter__(self) -> _Entries:
        return self

    def __next__(self) -> _Entry:
        return _Entry(next(self._it))

    def __enter__(self) -> _Entries:
        self._it.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._it.__exit__(*exc)

    def close(self) -> None:
        self._it.close()


_real_scandir = os.scandir
_OS_FILE = os.walk.__code__.co_filename  # (``os`` is traced as the program's: its walk is a library's)


def _scandir(path: Any = None) -> Any:
    it = _real_scandir() if path is None else _real_scandir(path)
    caller = sys._getframe(1).f_code.co_filename
    if _controlled() is None or own(caller) or not under_test(caller) or caller == _OS_FILE:
        return it  # (a library's listing: ``os.walk``, ``glob``, ``shutil.rmtree``)
    return _Entries(it)


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    *((os, name, getattr(os, name), _reading(getattr(os, name))) for name in ("stat", "lstat", "fstat")),
    (os, "scandir", _real_scandir, _scandir),
]
