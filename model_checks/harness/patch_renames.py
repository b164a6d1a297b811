"""A rename as it really is for the race detector: the name now refers to the renamed file, and
a thread that opens the name after the rename is ordered after it through the name.

A file's contents are one location per device and inode (``race_files``), whatever its name. The
safe atomic publish (write ``P.tmp``, then ``os.replace(tmp, P)``; a reader opens ``P`` and sees a
whole old or new version) was a data race: the reader's read of the inode ``P`` now names was not
ordered after the writer's writes of it under its old name, since the rename ordered nothing
(eleventh review, #17). Here, in a controlled thread, ``os.rename`` and ``os.replace`` (which
``Path.rename``/``Path.replace`` and ``shutil.move`` call) are an operation that writes both names
(a location per absolute path, made at the execution's first rename; the file a rename replaces, if
that was its last name, is a location no more: a file made later may get its inode number, as the
next temporary file did; so is a file ``os.remove``/``os.unlink`` removed, unless a descriptor
still has it open), and opening a name that an execution renamed from or onto (``open``,
``io.open``, ``os.open``: ``patch_io_waits``) is an operation that reads it: the opener acquires
what the renaming thread did before the rename, the temporary file's writes among them. A reader of
``P`` that races with a writer writing ``P`` in place is still a race (no rename orders them). Not
covered: a name reached another way (a relative path resolved in another working directory, a
``dir_fd``, a hard link, a rename by a C library or another process),
``os.stat``/``os.path.exists`` of a name (a look at it, no open).
"""

from __future__ import annotations

import os
import stat
from typing import Any

from model_checks.harness import race_files
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.per_execution import per_execution
from model_checks.harness.rt.objects import LocationState, Op
from model_checks.harness.runtime import ControlledRuntime

_real_rename = os.rename
_real_replace = os.replace


class _Names:
    """One execution's renamed names (absolute paths), each a location."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.of: dict[str, LocationState] = {}

    def location(self, name: str) -> LocationState:
        found = self.of.get(name)
        if found is None:
            made = self.ex.new_object(lambda oid: LocationState(oid, f"the name {name}"))
            assert isinstance(made, LocationState)
            found = self.of[name] = made
        return found


_names = per_execution(_Names)
_LAST: list[_Names | None] = [None]  # the latest execution's (``opening``'s look-up)


def _absolute(path: Any) -> str | None:
    if not isinstance(path, (str, bytes, os.PathLike)):
        return None
    try:
        return os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def _renaming(src: Any, dst: Any, kwargs: dict[str, Any]) -> tuple[int, int] | None:
    """The rename's operation, before the real call (which runs in its step); the file it will
    replace, if that is the file's last name (its location is retired after the rename)."""
    rt = _controlled()
    if rt is None or any(v is not None for v in kwargs.values()):
        return None
    names = [_absolute(src), _absolute(dst)]
    if None in names:
        return None
    here = _LAST[0] = _names(rt)
    locs = [here.location(name) for name in names if name is not None]
    rt._ex.perform(Op("write", locs[1], objs=frozenset(loc.oid for loc in locs)))
    try:
        old, new = os.lstat(dst), os.lstat(src)
    except (OSError, ValueError):
        return None
    replaced = (old.st_dev, old.st_ino)
    gone = stat.S_ISREG(old.st_mode) and old.st_nlink == 1 and replaced != (new.st_dev, new.st_ino)
    return replaced if gone else None


def _rename(src: Any, dst: Any, **kwargs: Any) -> None:
    _renamed(src, dst, kwargs, _real_rename)


def _replace(src: Any, dst: Any, **kwargs: Any) -> None:
    _renamed(src, dst, kwargs, _real_replace)


def _renamed(src: Any, dst: Any, kwargs: dict[str, Any], real: Any) -> None:
    replaced = _renaming(src, dst, kwargs)
    onto_nothing = _controlled() is not None and not kwargs and not os.path.lexists(dst)
    real(src, dst, **kwargs)
    if replaced is not None:
        race_files.retire(replaced)
    if onto_nothing:
        names = (_absolute(src), _absolute(dst))
        try:
            moved = os.lstat(dst)
        except (OSError, ValueError):
            return
        if names[0] is not None and names[1] is not None:
            _MOVED.append((names[0], names[1], moved.st_dev, moved.st_ino))


# The renames onto a free name the running execution made (from, to, the file's device and inode),
# undone when the next begins (``start_execution``): an execution a search stopped between moving
# a file aside and back left it aside, and the next, starting elsewhere, was "not deterministic".
# A rename that replaced a file is not undone (the replaced file is gone).
_MOVED: list[tuple[str, str, int, int]] = []


def start_execution() -> None:
    """An execution begins: the previous one's renames onto free names undone, last first, where
    the file is still under the name it was given and its old name is free."""
    while _MOVED:
        src, dst, dev, ino = _MOVED.pop()
        try:
            found = os.lstat(dst)
            if (found.st_dev, found.st_ino) == (dev, ino) and not os.path.lexists(src):
                _real_rename(dst, src)
        except OSError:
            continue


def _last_name(path: Any, kwargs: dict[str, Any]) -> tuple[int, int] | None:
    """The regular file whose last name ``path`` is, in a controlled thread (no ``dir_fd``)."""
    if _controlled() is None or kwargs.get("dir_fd") is not None or _absolute(path) is None:
        return None
    try:
        found = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) and found.st_nlink == 1 else None


def _removing(real: Any) -> Any:
    def remove(path: Any, **kwargs: Any) -> None:
        gone = _last_name(path, kwargs)
        real(path, **kwargs)
        if gone is not None:
            race_files.retire(gone)

    remove.__name__ = remove.__qualname__ = real.__name__
    return remove


def opening(path: Any) -> None:
    """A controlled thread opens ``path``: if the execution renamed from or onto it, a read of the name."""
    here = _LAST[0]
    if here is None or not here.of:
        return
    rt = _controlled()
    name = _absolute(path)
    if rt is None or here.ex is not rt._ex or name is None:
        return
    found = here.of.get(name)
    if found is not None:
        rt._ex.perform(Op("read", found, read=True))


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (os, "rename", _real_rename, _rename),
    (os, "replace", _real_replace, _replace),
    # a removed file's inode number may be given to a file made later: another location
    (os, "remove", os.remove, _removing(os.remove)),
    (os, "unlink", os.unlink, _removing(os.unlink)),
]
